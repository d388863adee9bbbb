/*
 * inventory_lua.c - sys.inventory() and sys.locality(): host facts read
 * from /proc and /sys, as Lua tables.  Everything absent is left out (an
 * empty list, a missing field), never an error: a VM with virtio devices
 * and a GPU node both answer.  Option root = "<dir>" reads a recorded
 * tree instead of the live host (tests/host/record_host.sh makes one).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <curl/curl.h>
#include <yaml.h>
#include <xlsxwriter.h>

#include "strata.h"
#include "sys.h"

#define MAX_CPUS 8192

struct inv {
  lua_State *L;
  const char *root;  /* "" = live */
  int live;
};

/* snprintf for paths and names: a cut path reads as absent, which is
 * what a too-long sysfs name deserves */
static void J(char *buf, size_t len, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

static void J(char *buf, size_t len, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, len, fmt, ap);
  va_end(ap);
}

static const char *P(const struct inv *v, char *buf, size_t len,
                     const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));

/* root + formatted path */
static const char *P(const struct inv *v, char *buf, size_t len,
                     const char *fmt, ...)
{
  va_list ap;
  int n = snprintf(buf, len, "%s", v->root);
  va_start(ap, fmt);
  if(n >= 0 && (size_t)n < len)
    vsnprintf(buf + n, len - (size_t)n, fmt, ap);
  va_end(ap);
  return buf;
}

static void opt_root(lua_State *L, struct inv *v, const char *fn)
{
  static const char *const keys[] = { "root", NULL };
  v->L = L;
  v->root = "";
  if(!lua_isnoneornil(L, 1)) {
    strata_check_keys(L, 1, fn, keys);
    v->root = strata_opt_str(L, 1, fn, "root", "");
  }
  if(!strcmp(v->root, "/"))
    v->root = "";
  v->live = v->root[0] == '\0';
}

static void attr_str(lua_State *L, const char *dir, const char *attr,
                     const char *key)
{
  char buf[256];
  if(!sys_attr(dir, attr, buf, sizeof(buf)) && buf[0])
    strata_set_str(L, key, buf);
}

static int attr_long(const char *dir, const char *attr, long *out)
{
  char buf[64], *e;
  if(sys_attr(dir, attr, buf, sizeof(buf)) || !buf[0])
    return -1;
  *out = strtol(buf, &e, 0);
  return e == buf ? -1 : 0;
}

static void attr_int(lua_State *L, const char *dir, const char *attr,
                     const char *key)
{
  long x;
  if(!attr_long(dir, attr, &x))
    strata_set_int(L, key, x);
}

/* sorted entries of a directory, without dot files; n or -1 */
static int entries(const char *dir, struct dirent ***out)
{
  int n = scandir(dir, out, NULL, versionsort);
  int k = 0;
  if(n < 0)
    return -1;
  for(int i = 0; i < n; i++) {
    if((*out)[i]->d_name[0] == '.')
      free((*out)[i]);
    else
      (*out)[k++] = (*out)[i];
  }
  return k;
}

static void free_entries(struct dirent **e, int n)
{
  for(int i = 0; i < n; i++)
    free(e[i]);
  free(e);
}

/* "key: value" from a /proc file; first match, value trimmed */
static int proc_field(const char *text, const char *key, char *out,
                      size_t len)
{
  size_t kl = strlen(key);
  for(const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
    if(!strncmp(p, key, kl) && (p[kl] == ':' || p[kl] == ' ' ||
                                p[kl] == '\t')) {
      const char *v = strchr(p, ':'), *e;
      if(!v)
        return -1;
      v++;
      while(*v == ' ' || *v == '\t')
        v++;
      e = strchr(v, '\n');
      if(!e)
        e = v + strlen(v);
      while(e > v && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
      J(out, len, "%.*s", (int)(e - v), v);
      return 0;
    }
  }
  return -1;
}

static void host_part(struct inv *v)
{
  lua_State *L = v->L;
  char p[PATH_MAX], buf[256];
  char *text;
  if(v->live) {
    struct utsname u;
    if(!gethostname(buf, sizeof(buf)))
      strata_set_str(L, "hostname", buf);
    if(!uname(&u)) {
      lua_createtable(L, 0, 4);
      strata_set_str(L, "sysname", u.sysname);
      strata_set_str(L, "release", u.release);
      strata_set_str(L, "version", u.version);
      strata_set_str(L, "machine", u.machine);
      lua_setfield(L, -2, "kernel");
    }
  }
  else {
    attr_str(L, P(v, p, sizeof(p), "/proc/sys/kernel"), "hostname",
             "hostname");
    lua_createtable(L, 0, 2);
    attr_str(L, p, "ostype", "sysname");
    attr_str(L, p, "osrelease", "release");
    lua_setfield(L, -2, "kernel");
  }
  lua_newtable(L);
  if(!sys_read_file(P(v, p, sizeof(p), "/etc/os-release"), 65536, &text,
                    NULL)) {
    static const char *const keys[][2] = {
      { "ID", "id" }, { "VERSION_ID", "version_id" },
      { "PRETTY_NAME", "pretty_name" }, { "NAME", "name" },
    };
    for(char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
      for(size_t k = 0; k < 4; k++) {
        size_t kl = strlen(keys[k][0]);
        if(!strncmp(line, keys[k][0], kl) && line[kl] == '=') {
          char *val = line + kl + 1;
          size_t n = strlen(val);
          if(n >= 2 && (val[0] == '"' || val[0] == '\'') &&
             val[n - 1] == val[0]) {
            val[n - 1] = '\0';
            val++;
          }
          strata_set_str(L, keys[k][1], val);
        }
      }
    free(text);
  }
  lua_setfield(L, -2, "os");
  if(!sys_read_file(P(v, p, sizeof(p), "/proc/loadavg"), 4096, &text,
                    NULL)) {
    double a, b, c;
    if(sscanf(text, "%lf %lf %lf", &a, &b, &c) == 3) {
      lua_createtable(L, 3, 0);
      lua_pushnumber(L, a);
      lua_rawseti(L, -2, 1);
      lua_pushnumber(L, b);
      lua_rawseti(L, -2, 2);
      lua_pushnumber(L, c);
      lua_rawseti(L, -2, 3);
      lua_setfield(L, -2, "loadavg");
    }
    free(text);
  }
}

static void cpu_part(struct inv *v)
{
  lua_State *L = v->L;
  char p[PATH_MAX], dir[PATH_MAX], buf[256];
  char *text = NULL;
  unsigned char *present = calloc(MAX_CPUS, 1);
  long *pkg = calloc(MAX_CPUS, sizeof(long)), *core = calloc(MAX_CPUS,
                                                             sizeof(long));
  int npresent = 0, sockets = 0, cores = 0;

  lua_newtable(L);
  if(!present || !pkg || !core)
    goto out;
  if(!sys_read_file(P(v, p, sizeof(p), "/proc/cpuinfo"), 0, &text, NULL)) {
    if(!proc_field(text, "model name", buf, sizeof(buf)) ||
       !proc_field(text, "Model", buf, sizeof(buf)) ||
       !proc_field(text, "cpu model", buf, sizeof(buf)))
      strata_set_str(L, "model", buf);
    if(!proc_field(text, "vendor_id", buf, sizeof(buf)))
      strata_set_str(L, "vendor", buf);
  }
  P(v, dir, sizeof(dir), "/sys/devices/system/cpu");
  attr_str(L, dir, "online", "online");
  attr_str(L, dir, "offline", "offline");
  attr_str(L, dir, "present", "present");
  attr_str(L, dir, "possible", "possible");
  if(!sys_attr(dir, "online", buf, sizeof(buf)))
    strata_set_int(L, "online_count", sys_cpulist(buf, NULL, 0));
  if(!sys_attr(dir, "offline", buf, sizeof(buf)))
    strata_set_int(L, "offline_count", buf[0] ? sys_cpulist(buf, NULL, 0)
                                              : 0);
  if(!sys_attr(dir, "present", buf, sizeof(buf)))
    npresent = sys_cpulist(buf, present, MAX_CPUS);
  for(int c = 0; c < MAX_CPUS && npresent > 0; c++) {
    char td[PATH_MAX];
    int seen_pkg = 0, seen_core = 0;
    if(!present[c])
      continue;
    J(td, sizeof(td), "%s/cpu%d/topology", dir, c);
    if(attr_long(td, "physical_package_id", &pkg[c]) ||
       attr_long(td, "core_id", &core[c])) {
      pkg[c] = core[c] = -1;
      continue;
    }
    for(int d = 0; d < c; d++) {
      if(!present[d] || pkg[d] < 0)
        continue;
      seen_pkg = seen_pkg || pkg[d] == pkg[c];
      seen_core = seen_core || (pkg[d] == pkg[c] && core[d] == core[c]);
    }
    sockets += !seen_pkg;
    cores += !seen_core;
  }
  if(sockets) {
    strata_set_int(L, "sockets", sockets);
    strata_set_int(L, "cores", cores);
  }
  if(npresent > 0)
    strata_set_int(L, "threads", npresent);
out:
  lua_setfield(L, -2, "cpu");
  free(text);
  free(present);
  free(pkg);
  free(core);
}

static void memory_part(struct inv *v)
{
  lua_State *L = v->L;
  char p[PATH_MAX], buf[64];
  char *text;
  lua_newtable(L);
  if(!sys_read_file(P(v, p, sizeof(p), "/proc/meminfo"), 0, &text, NULL)) {
    if(!proc_field(text, "MemTotal", buf, sizeof(buf)))
      strata_set_int(L, "total_bytes", strtoll(buf, NULL, 10) * 1024);
    if(!proc_field(text, "MemAvailable", buf, sizeof(buf)))
      strata_set_int(L, "available_bytes", strtoll(buf, NULL, 10) * 1024);
    if(!proc_field(text, "HugePages_Total", buf, sizeof(buf)))
      strata_set_int(L, "hugepages_total", strtoll(buf, NULL, 10));
    free(text);
  }
  lua_setfield(L, -2, "memory");
}

/* Pushes the list of NUMA nodes. */
static void push_numa(struct inv *v)
{
  lua_State *L = v->L;
  char base[PATH_MAX];
  struct dirent **e;
  int n = entries(P(v, base, sizeof(base), "/sys/devices/system/node"), &e);
  int k = 0;
  lua_newtable(L);
  for(int i = 0; i < n; i++) {
    char dir[PATH_MAX], buf[4096], *text;
    char *end;
    long id;
    if(strncmp(e[i]->d_name, "node", 4))
      continue;
    id = strtol(e[i]->d_name + 4, &end, 10);
    if(*end || end == e[i]->d_name + 4)
      continue;
    J(dir, sizeof(dir), "%s/%s", base, e[i]->d_name);
    lua_newtable(L);
    strata_set_int(L, "node", id);
    if(!sys_attr(dir, "cpulist", buf, sizeof(buf))) {
      strata_set_str(L, "cpus", buf);
      strata_set_int(L, "cpu_count", buf[0] ? sys_cpulist(buf, NULL, 0)
                                            : 0);
    }
    attr_str(L, dir, "distance", "distance");
    J(buf, sizeof(buf), "%s/meminfo", dir);
    if(!sys_read_file(buf, 0, &text, NULL)) {
      const char *m = strstr(text, "MemTotal:");
      if(m)
        strata_set_int(L, "mem_total_bytes",
                       strtoll(m + 9, NULL, 10) * 1024);
      free(text);
    }
    lua_rawseti(L, -2, ++k);
  }
  if(n >= 0)
    free_entries(e, n);
}

/* The PCI chain above a function: {"pci0000:00", "0000:00:01.0", ...}. */
static void push_pci_path(struct inv *v, const char *addr)
{
  lua_State *L = v->L;
  char p[PATH_MAX], real[PATH_MAX];
  const char *s;
  int k = 0;
  lua_newtable(L);
  if(!realpath(P(v, p, sizeof(p), "/sys/bus/pci/devices/%s", addr), real))
    return;
  s = strstr(real, "/sys/devices/");
  if(!s)
    return;
  s += strlen("/sys/devices/");
  while(*s) {
    size_t n = strcspn(s, "/");
    lua_pushlstring(L, s, n);
    lua_rawseti(L, -2, ++k);
    s += n;
    if(*s)
      s++;
  }
}

static long pci_numa(struct inv *v, const char *addr)
{
  char p[PATH_MAX];
  long x = -1;
  if(attr_long(P(v, p, sizeof(p), "/sys/bus/pci/devices/%s", addr),
               "numa_node", &x))
    return -1;
  return x;
}

/* PCI address behind a class device (/sys/class/net/eth0 ...), or -1 */
static int pci_behind(const char *classdir, char *out,
                      size_t len)
{
  char real[PATH_MAX];
  if(!realpath(classdir, real))
    return -1;
  return sys_pci_of_path(real, out, len);
}

static void pci_entry(struct inv *v, const char *addr, const char *kind,
                      unsigned cls)
{
  lua_State *L = v->L;
  char dir[PATH_MAX], buf[256];
  long ven = -1, dev = -1;
  P(v, dir, sizeof(dir), "/sys/bus/pci/devices/%s", addr);
  lua_newtable(L);
  strata_set_str(L, "address", addr);
  strata_set_str(L, "kind", kind);
  J(buf, sizeof(buf), "0x%06x", cls);
  strata_set_str(L, "class", buf);
  if(!attr_long(dir, "vendor", &ven)) {
    const char *vn = sys_pci_vendor((unsigned)ven);
    J(buf, sizeof(buf), "%04lx", ven);
    strata_set_str(L, "vendor_id", buf);
    if(vn)
      strata_set_str(L, "vendor", vn);
  }
  if(!attr_long(dir, "device", &dev)) {
    J(buf, sizeof(buf), "%04lx", dev);
    strata_set_str(L, "device_id", buf);
  }
  if(ven >= 0 && dev >= 0 &&
     !sys_pci_ids_name(NULL, (unsigned)ven, (unsigned)dev, buf, sizeof(buf)))
    strata_set_str(L, "name", buf);
  attr_str(L, dir, "subsystem_vendor", "subsystem_vendor");
  attr_str(L, dir, "subsystem_device", "subsystem_device");
  if(!sys_link_base(dir, "driver", buf, sizeof(buf)))
    strata_set_str(L, "driver", buf);
  strata_set_int(L, "numa_node", pci_numa(v, addr));
  attr_str(L, dir, "local_cpulist", "local_cpus");
  lua_newtable(L);
  attr_str(L, dir, "current_link_speed", "current_speed");
  attr_int(L, dir, "current_link_width", "current_width");
  attr_str(L, dir, "max_link_speed", "max_speed");
  attr_int(L, dir, "max_link_width", "max_width");
  lua_setfield(L, -2, "link");
}

/* Pushes the PCI devices of interest; *other = how many were skipped. */
static void push_pci(struct inv *v, int *other, const char *only_kind)
{
  char base[PATH_MAX];
  struct dirent **e;
  int n = entries(P(v, base, sizeof(base), "/sys/bus/pci/devices"), &e);
  int k = 0;
  *other = 0;
  lua_newtable(v->L);
  for(int i = 0; i < n; i++) {
    char dir[PATH_MAX];
    long cls;
    const char *kind;
    J(dir, sizeof(dir), "%s/%s", base, e[i]->d_name);
    if(attr_long(dir, "class", &cls))
      continue;
    kind = sys_pci_kind((unsigned)cls);
    if(!kind || (only_kind && strcmp(kind, only_kind))) {
      (*other)++;
      continue;
    }
    pci_entry(v, e[i]->d_name, kind, (unsigned)cls);
    lua_rawseti(v->L, -2, ++k);
  }
  if(n >= 0)
    free_entries(e, n);
}

static void push_nics(struct inv *v)
{
  lua_State *L = v->L;
  char base[PATH_MAX];
  struct dirent **e;
  int n = entries(P(v, base, sizeof(base), "/sys/class/net"), &e);
  int k = 0;
  lua_newtable(L);
  for(int i = 0; i < n; i++) {
    char dir[PATH_MAX], dev[PATH_MAX], buf[64];
    struct sys_drvinfo di;
    long speed;
    J(dir, sizeof(dir), "%s/%s", base, e[i]->d_name);
    J(dev, sizeof(dev), "%s/device", dir);
    lua_newtable(L);
    strata_set_str(L, "name", e[i]->d_name);
    attr_int(L, dir, "mtu", "mtu");
    if(!attr_long(dir, "speed", &speed) && speed > 0)
      strata_set_int(L, "speed_mbps", speed);
    attr_str(L, dir, "operstate", "operstate");
    attr_int(L, dir, "type", "type");
    if(access(dev, F_OK)) {
      strata_set_bool(L, "virtual", 1);
    }
    else {
      strata_set_bool(L, "virtual", 0);
      if(!sys_link_base(dev, "driver", buf, sizeof(buf)))
        strata_set_str(L, "driver", buf);
      if(!pci_behind(dev, buf, sizeof(buf))) {
        strata_set_str(L, "pci", buf);
        strata_set_int(L, "numa_node", pci_numa(v, buf));
      }
    }
    if(v->live && !sys_ethtool_drvinfo(e[i]->d_name, &di)) {
      if(di.driver[0])
        strata_set_str(L, "driver", di.driver);
      if(di.version[0])
        strata_set_str(L, "driver_version", di.version);
      if(di.fw_version[0])
        strata_set_str(L, "firmware", di.fw_version);
    }
    lua_rawseti(L, -2, ++k);
  }
  if(n >= 0)
    free_entries(e, n);
}

static void push_block(struct inv *v, int nvme_only)
{
  lua_State *L = v->L;
  char base[PATH_MAX];
  struct dirent **e;
  int n = entries(P(v, base, sizeof(base), "/sys/block"), &e);
  int k = 0;
  lua_newtable(L);
  for(int i = 0; i < n; i++) {
    char dir[PATH_MAX], dev[PATH_MAX], pci[32];
    long size;
    int nvme = !strncmp(e[i]->d_name, "nvme", 4);
    J(dir, sizeof(dir), "%s/%s", base, e[i]->d_name);
    if((nvme_only && !nvme) || pci_behind(dir, pci, sizeof(pci)))
      continue;  /* loop, zram, dm ...: not a device with a place */
    J(dev, sizeof(dev), "%s/device", dir);
    lua_newtable(L);
    strata_set_str(L, "name", e[i]->d_name);
    strata_set_bool(L, "nvme", nvme);
    strata_set_str(L, "pci", pci);
    strata_set_int(L, "numa_node", pci_numa(v, pci));
    attr_str(L, dev, "model", "model");
    attr_str(L, dev, "firmware_rev", "firmware");
    if(!attr_long(dir, "size", &size))
      strata_set_int(L, "size_bytes", (lua_Integer)size * 512);
    lua_rawseti(L, -2, ++k);
  }
  if(n >= 0)
    free_entries(e, n);
}

static void push_rdma(struct inv *v)
{
  lua_State *L = v->L;
  char base[PATH_MAX];
  struct dirent **e;
  int n = entries(P(v, base, sizeof(base), "/sys/class/infiniband"), &e);
  int k = 0;
  lua_newtable(L);
  for(int i = 0; i < n; i++) {
    char dir[PATH_MAX], ports[PATH_MAX], pci[32];
    struct dirent **pe;
    int np, kp = 0;
    J(dir, sizeof(dir), "%s/%s", base, e[i]->d_name);
    lua_newtable(L);
    strata_set_str(L, "name", e[i]->d_name);
    attr_str(L, dir, "node_type", "node_type");
    attr_str(L, dir, "fw_ver", "firmware");
    attr_str(L, dir, "hca_type", "hca_type");
    if(!pci_behind(dir, pci, sizeof(pci))) {
      strata_set_str(L, "pci", pci);
      strata_set_int(L, "numa_node", pci_numa(v, pci));
    }
    J(ports, sizeof(ports), "%s/ports", dir);
    np = entries(ports, &pe);
    lua_newtable(L);
    for(int j = 0; j < np; j++) {
      char pd[PATH_MAX];
      J(pd, sizeof(pd), "%s/%s", ports, pe[j]->d_name);
      lua_newtable(L);
      strata_set_int(L, "port", strtol(pe[j]->d_name, NULL, 10));
      attr_str(L, pd, "state", "state");
      attr_str(L, pd, "phys_state", "phys_state");
      attr_str(L, pd, "rate", "rate");
      attr_str(L, pd, "link_layer", "link_layer");
      lua_rawseti(L, -2, ++kp);
    }
    if(np >= 0)
      free_entries(pe, np);
    lua_setfield(L, -2, "ports");
    lua_rawseti(L, -2, ++k);
  }
  if(n >= 0)
    free_entries(e, n);
}

static void libraries_part(lua_State *L)
{
  const curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
  lua_newtable(L);
  strata_set_str(L, "lua", LUA_RELEASE);
  if(cv) {
    strata_set_str(L, "libcurl", cv->version);
    if(cv->ssl_version)
      strata_set_str(L, "tls", cv->ssl_version);
  }
  if(yaml_get_version_string())  /* NULL: libyaml not there (yaml_load.c) */
    strata_set_str(L, "libyaml", yaml_get_version_string());
  strata_set_str(L, "libxlsxwriter", LXW_VERSION);
  lua_setfield(L, -2, "libraries");
}

int sys_l_inventory(lua_State *L)
{
  struct inv v;
  int other;
  opt_root(L, &v, "sys.inventory");
  lua_newtable(L);
  host_part(&v);
  cpu_part(&v);
  memory_part(&v);
  push_numa(&v);
  lua_setfield(L, -2, "numa");
  push_pci(&v, &other, NULL);
  lua_setfield(L, -2, "pci");
  strata_set_int(L, "pci_other", other);
  push_nics(&v);
  lua_setfield(L, -2, "nics");
  push_block(&v, 0);
  lua_setfield(L, -2, "block");
  push_rdma(&v);
  lua_setfield(L, -2, "rdma");
  libraries_part(L);
  return 1;
}

/* Append {kind=, name=, pci=, numa_node=, path=} for each entry of the
 * list at the top (which has name/pci fields) to the devices list below. */
static void add_devices(struct inv *v, int devices, int *k, const char *kind,
                        int use_address)
{
  lua_State *L = v->L;
  int list = lua_gettop(L);
  for(lua_Integer i = 1; lua_rawgeti(L, list, i) == LUA_TTABLE; i++) {
    const char *pci;
    lua_getfield(L, -1, use_address ? "address" : "pci");
    pci = lua_tostring(L, -1);
    if(pci) {
      lua_newtable(L);
      strata_set_str(L, "kind", kind);
      lua_getfield(L, -3, use_address ? "address" : "name");
      lua_setfield(L, -2, "name");
      strata_set_str(L, "pci", pci);
      strata_set_int(L, "numa_node", pci_numa(v, pci));
      push_pci_path(v, pci);
      lua_setfield(L, -2, "path");
      lua_rawseti(L, devices, ++*k);
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 2);  /* the nil and the list */
}

int sys_l_locality(lua_State *L)
{
  struct inv v;
  int other, devices, k = 0;
  opt_root(L, &v, "sys.locality");
  lua_newtable(L);
  push_numa(&v);
  lua_setfield(L, -2, "nodes");
  lua_newtable(L);
  devices = lua_gettop(L);
  push_pci(&v, &other, "gpu");
  add_devices(&v, devices, &k, "gpu", 1);
  push_nics(&v);
  add_devices(&v, devices, &k, "nic", 0);
  push_block(&v, 1);
  add_devices(&v, devices, &k, "nvme", 0);
  push_rdma(&v);
  add_devices(&v, devices, &k, "rdma", 0);
  lua_setfield(L, -2, "devices");
  return 1;
}
