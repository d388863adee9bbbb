/*
 * procfs.c - counter sets and the /proc and sysfs counter parsers.
 * Every parser reads text (recorded fixtures in tests, live files in the
 * sampler) and appends named values; none allocates per value beyond the
 * name.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "strata.h"
#include "nvml.h"

const char *const ctr_cpu_fields[CTR_CPU_FIELDS] = {
  "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"
};

void ctr_set_init(struct ctr_set *s)
{
  memset(s, 0, sizeof(*s));
}

void ctr_set_clear(struct ctr_set *s)
{
  for(size_t i = 0; i < s->n; i++)
    free(s->names[i]);
  s->n = 0;
}

void ctr_set_free(struct ctr_set *s)
{
  ctr_set_clear(s);
  free(s->names);
  free(s->vals);
  free(s->kinds);
  ctr_set_init(s);
}

int ctr_set_add(struct ctr_set *s, const char *name, double v, int kind)
{
  if(s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    char **n = realloc(s->names, cap * sizeof(*n));
    double *d;
    unsigned char *k;
    if(!n)
      return -1;
    s->names = n;
    d = realloc(s->vals, cap * sizeof(*d));
    if(!d)
      return -1;
    s->vals = d;
    k = realloc(s->kinds, cap);
    if(!k)
      return -1;
    s->kinds = k;
    s->cap = cap;
  }
  s->names[s->n] = strdup(name);
  if(!s->names[s->n])
    return -1;
  s->vals[s->n] = v;
  s->kinds[s->n] = (unsigned char)kind;
  s->n++;
  return 0;
}

long ctr_set_find(const struct ctr_set *s, const char *name)
{
  for(size_t i = 0; i < s->n; i++)
    if(!strcmp(s->names[i], name))
      return (long)i;
  return -1;
}

int ctr_read_file(const char *path, char **buf, size_t *cap, size_t *len)
{
  return strata_read_file(path, 0, buf, cap, len);
}

/* Next line of *p into a bounded copy; returns 0 at the end. */
static int next_line(const char **p, char *line, size_t len)
{
  const char *s = *p, *e;
  size_t n;
  if(!*s)
    return 0;
  e = strchr(s, '\n');
  n = e ? (size_t)(e - s) : strlen(s);
  *p = e ? e + 1 : s + n;
  if(n >= len)
    n = len - 1;
  memcpy(line, s, n);
  line[n] = '\0';
  return 1;
}

/* Keep [A-Za-z0-9_-] of a device name; others become '_'. */
static void clean_name(char *s)
{
  for(; *s; s++)
    if(!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
      *s = '_';
}

/* Append a counter named by a format (names longer than 511 are cut). */
static int addf(struct ctr_set *s, double v, int kind, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));

static int addf(struct ctr_set *s, double v, int kind, const char *fmt, ...)
{
  char name[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(name, sizeof(name), fmt, ap);
  va_end(ap);
  return ctr_set_add(s, name, v, kind);
}

static int add2(struct ctr_set *s, const char *a, const char *b, double v,
                int kind)
{
  return addf(s, v, kind, "%s.%s", a, b);
}

int ctr_parse_stat(const char *text, long clk_tck, unsigned want,
                   int per_cpu, struct ctr_set *s)
{
  char line[65536];  /* a row per IRQ is ~11 bytes a CPU */
  const char *p = text;
  int saw_cpu = 0;

  if(clk_tck <= 0)
    clk_tck = 100;
  while(next_line(&p, line, sizeof(line))) {
    char key[64];
    int off = 0;
    if(sscanf(line, "%63s%n", key, &off) != 1)
      continue;
    if(!strncmp(key, "cpu", 3)) {
      char grp[80];
      unsigned long long v[CTR_CPU_FIELDS] = { 0 };
      int got;
      if(!(want & CTR_SRC_CPU))
        continue;
      got = sscanf(line + off, "%llu %llu %llu %llu %llu %llu %llu %llu",
                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
      if(got < 4) {
        errno = EINVAL;
        return -1;
      }
      if(key[3] == '\0')
        strcpy(grp, "cpu.total");
      else if(per_cpu)
        (void)!snprintf(grp, sizeof(grp), "cpu.%s", key);
      else
        continue;
      for(int i = 0; i < CTR_CPU_FIELDS; i++)
        if(add2(s, grp, ctr_cpu_fields[i], (double)v[i] / (double)clk_tck,
                CTR_COUNTER))
          return -1;
      saw_cpu = saw_cpu || key[3] == '\0';
    }
    else if(want & CTR_SRC_CTXT) {
      unsigned long long v;
      const char *name = NULL;
      if(!strcmp(key, "ctxt"))
        name = "ctxt";
      else if(!strcmp(key, "processes"))
        name = "processes";
      else if(!strcmp(key, "intr"))
        name = "intr.total";
      if(!name)
        continue;
      if(sscanf(line + off, "%llu", &v) != 1) {
        errno = EINVAL;
        return -1;
      }
      if(ctr_set_add(s, name, (double)v, CTR_COUNTER))
        return -1;
    }
  }
  if((want & CTR_SRC_CPU) && !saw_cpu) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

/* Sum the decimal columns after the "NAME:" head; *end = rest of line. */
static double sum_cols(const char *p, int ncpu, const char **end)
{
  double sum = 0;
  for(int i = 0; i < ncpu; i++) {
    char *e;
    unsigned long long v;
    while(*p == ' ' || *p == '\t')
      p++;
    if(!isdigit((unsigned char)*p))
      break;
    v = strtoull(p, &e, 10);
    sum += (double)v;
    p = e;
  }
  if(end)
    *end = p;
  return sum;
}

static int count_cpus(const char *header)
{
  int n = 0;
  const char *p = header;
  while((p = strstr(p, "CPU"))) {
    n++;
    p += 3;
  }
  return n;
}

/*
 * One line of a per-CPU table (/proc/softirqs, /proc/interrupts): the
 * first line is the CPU header (sets *ncpu), then "<name>: <counts...>".
 * Returns 1 with *name (cleaned) and *cols set, 0 for a line to skip, -1
 * (errno EINVAL) for a header without CPUs.
 */
static int cpu_row(char *line, int *ncpu, char **name, char **cols)
{
  char *colon;
  if(*ncpu < 0) {
    *ncpu = count_cpus(line);
    if(*ncpu == 0) {
      errno = EINVAL;
      return -1;
    }
    return 0;
  }
  colon = strchr(line, ':');
  if(!colon)
    return 0;
  *colon = '\0';
  *name = line;
  while(**name == ' ')
    (*name)++;
  clean_name(*name);
  *cols = colon + 1;
  return 1;
}

int ctr_parse_softirqs(const char *text, struct ctr_set *s)
{
  char line[65536];  /* a row per IRQ is ~11 bytes a CPU */
  const char *p = text;
  int ncpu = -1;

  while(next_line(&p, line, sizeof(line))) {
    char *name, *cols;
    int r = cpu_row(line, &ncpu, &name, &cols);
    if(r < 0)
      return -1;
    if(r == 0)
      continue;
    if(add2(s, "softirq", name, sum_cols(cols, ncpu, NULL), CTR_COUNTER))
      return -1;
  }
  if(ncpu < 0) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

int ctr_parse_interrupts(const char *text, struct ctr_set *s)
{
  char line[65536];  /* a row per IRQ is ~11 bytes a CPU */
  const char *p = text;
  int ncpu = -1;

  while(next_line(&p, line, sizeof(line))) {
    char *irq, *cols, *rest, *dev;
    const char *after;
    double v;
    size_t n;
    int r = cpu_row(line, &ncpu, &irq, &cols);
    if(r < 0)
      return -1;
    if(r == 0)
      continue;
    v = sum_cols(cols, ncpu, &after);
    rest = (char *)after;
    n = strlen(rest);
    while(n && isspace((unsigned char)rest[n - 1]))
      rest[--n] = '\0';
    if(!isdigit((unsigned char)*irq)) {
      /* NMI, LOC, ERR, MIS ...: the description is prose, keep the tag */
      if(addf(s, v, CTR_COUNTER, "intr.%s", irq))
        return -1;
      continue;
    }
    dev = strrchr(rest, ' ');
    dev = dev ? dev + 1 : rest;
    if(!*dev)
      dev = "none";
    clean_name(dev);
    if(addf(s, v, CTR_COUNTER, "intr.%s.%s", irq, dev))
      return -1;
  }
  if(ncpu < 0) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

int ctr_parse_netdev(const char *text, struct ctr_set *s)
{
  static const char *const cols[16] = {
    "rx_bytes", "rx_packets", "rx_errs", "rx_drop", "rx_fifo", "rx_frame",
    "rx_compressed", "rx_multicast", "tx_bytes", "tx_packets", "tx_errs",
    "tx_drop", "tx_fifo", "tx_colls", "tx_carrier", "tx_compressed"
  };
  /* the columns worth a series; the rest are noise on modern NICs */
  static const int keep[] = { 0, 1, 2, 3, 8, 9, 10, 11 };
  char line[1024];
  const char *p = text;
  int lineno = 0;

  while(next_line(&p, line, sizeof(line))) {
    char *colon, *ifn = line, *q;
    unsigned long long v[16];
    char grp[96];
    if(++lineno <= 2)
      continue;
    colon = strchr(line, ':');
    if(!colon) {
      errno = EINVAL;
      return -1;
    }
    *colon = '\0';
    while(*ifn == ' ')
      ifn++;
    q = colon + 1;
    for(int i = 0; i < 16; i++) {
      char *e;
      v[i] = strtoull(q, &e, 10);
      if(e == q) {
        errno = EINVAL;
        return -1;
      }
      q = e;
    }
    clean_name(ifn);
    (void)!snprintf(grp, sizeof(grp), "net.%.80s", ifn);
    for(size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
      if(add2(s, grp, cols[keep[i]], (double)v[keep[i]], CTR_COUNTER))
        return -1;
  }
  return 0;
}

int ctr_parse_snmp(const char *text, struct ctr_set *s)
{
  char head[2048], vals[2048];
  const char *p = text;

  while(next_line(&p, head, sizeof(head))) {
    char *hs, *vs, *h, *v;
    if(strncmp(head, "Tcp:", 4))
      continue;
    if(!next_line(&p, vals, sizeof(vals)) || strncmp(vals, "Tcp:", 4)) {
      errno = EINVAL;
      return -1;
    }
    h = strtok_r(head + 4, " ", &hs);
    v = strtok_r(vals + 4, " ", &vs);
    while(h && v) {
      /* RtoAlgorithm, RtoMin, RtoMax, MaxConn, CurrEstab are levels */
      int gauge = !strncmp(h, "Rto", 3) || !strcmp(h, "MaxConn") ||
                  !strcmp(h, "CurrEstab");
      if(add2(s, "tcp", h, strtod(v, NULL), gauge ? CTR_GAUGE : CTR_COUNTER))
        return -1;
      h = strtok_r(NULL, " ", &hs);
      v = strtok_r(NULL, " ", &vs);
    }
    return 0;
  }
  return 0;
}

static int list_dir(const char *path, struct dirent ***out)
{
  return scandir(path, out, NULL, alphasort);
}

static void free_list(struct dirent **l, int n)
{
  for(int i = 0; i < n; i++)
    free(l[i]);
  free(l);
}

int ctr_read_rdma(const char *root, struct ctr_set *s)
{
  static const char *const sub[2] = { "counters", "hw_counters" };
  char base[512], path[1024], buf[64];
  int bn;
  struct dirent **devs = NULL;
  int nd, rc = 0;

  bn = snprintf(base, sizeof(base), "%s/sys/class/infiniband", root);
  if(bn < 0 || (size_t)bn >= sizeof(base))
    return 0;
  nd = list_dir(base, &devs);
  if(nd < 0)
    return 0;  /* no RDMA stack: nothing to count */
  for(int i = 0; i < nd && !rc; i++) {
    struct dirent **ports = NULL;
    int np;
    if(devs[i]->d_name[0] == '.')
      continue;
    (void)!snprintf(path, sizeof(path), "%s/%s/ports", base,
                    devs[i]->d_name);
    np = list_dir(path, &ports);
    for(int j = 0; j < np && !rc; j++) {
      if(ports[j]->d_name[0] == '.')
        continue;
      for(int k = 0; k < 2 && !rc; k++) {
        struct dirent **cs = NULL;
        char dir[1400];
        int nc;
        (void)!snprintf(dir, sizeof(dir), "%s/%s/%s", path, ports[j]->d_name,
                        sub[k]);
        nc = list_dir(dir, &cs);
        for(int m = 0; m < nc && !rc; m++) {
          char file[1700];
          int fd;
          ssize_t r;
          if(cs[m]->d_name[0] == '.' || !strcmp(cs[m]->d_name, "lifespan"))
            continue;
          (void)!snprintf(file, sizeof(file), "%s/%s", dir, cs[m]->d_name);
          fd = open(file, O_RDONLY | O_CLOEXEC);
          if(fd < 0)
            continue;  /* some counters are root-only or write-only */
          r = read(fd, buf, sizeof(buf) - 1);
          close(fd);
          if(r <= 0)
            continue;
          buf[r] = '\0';
          if(!isdigit((unsigned char)buf[0]))
            continue;
          if(addf(s, strtod(buf, NULL), CTR_COUNTER, "rdma.%s.%s.%s",
                  devs[i]->d_name, ports[j]->d_name, cs[m]->d_name))
            rc = -1;
        }
        if(nc > 0)
          free_list(cs, nc);
      }
    }
    if(np > 0)
      free_list(ports, np);
  }
  free_list(devs, nd);
  return rc;
}

/* Interfaces with a device behind them (physical NICs, VFs, virtio). */
static int ethtool_all(struct ctr_set *s, char *err, size_t errlen)
{
  struct dirent **e = NULL;
  int n = scandir("/sys/class/net", &e, NULL, alphasort);
  for(int i = 0; i < n; i++) {
    char dev[400];
    if(e[i]->d_name[0] != '.') {
      (void)!snprintf(dev, sizeof(dev), "/sys/class/net/%s/device",
                      e[i]->d_name);
      if(!access(dev, F_OK) && ctr_read_ethtool(e[i]->d_name, s) &&
         errno == ENOMEM) {
        snprintf(err, errlen, "ethtool: out of memory");
        for(; i < n; i++)
          free(e[i]);
        free(e);
        return -1;
      }
    }
    free(e[i]);
  }
  free(e);
  return 0;
}

/* NVML gauges per GPU (gpu.<i>.<what>); no driver or no GPU adds nothing:
 * an absent source is empty, not an error.  NVML blocks ~20 ms per GPU
 * for the PCIe figures, so this source is opt-in. */
static int gpu_sample(struct ctr_set *s, char *err, size_t errlen)
{
  struct nvml_sample g[NVML_GPU_MAX];
  char nerr[256];
  int n = nvml_sample(g, NVML_GPU_MAX, nerr, sizeof(nerr));
  if(n == -NVML_ABSENT)
    return 0;
  if(n < 0) {
    snprintf(err, errlen, "nvml: %s", nerr);
    return -1;
  }
  for(int i = 0; i < n; i++) {
    const struct { const char *what; double v; } f[] = {
      { "util_pct", g[i].gpu_util_pct }, { "mem_util_pct", g[i].mem_util_pct },
      { "power_w", g[i].power_w }, { "sm_clock_mhz", g[i].sm_clock_mhz },
      { "pcie_tx_mbps", g[i].pcie_tx_mbps },
      { "pcie_rx_mbps", g[i].pcie_rx_mbps },
      { "mem_used_bytes", g[i].mem_used_bytes },
    };
    for(size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
      char name[96];
      snprintf(name, sizeof(name), "gpu.%u.%s", g[i].index, f[k].what);
      if(ctr_set_add(s, name, f[k].v, CTR_GAUGE)) {
        snprintf(err, errlen, "gpu counters: out of memory");
        return -1;
      }
    }
  }
  return 0;
}

int ctr_snapshot(const char *root, unsigned sources, int per_cpu,
                 char *const *ifaces, struct ctr_set *s, char *err,
                 size_t errlen)
{
  static const struct {
    unsigned src;
    const char *file;
    int which;
  } files[] = {
    { CTR_SRC_CPU | CTR_SRC_CTXT, "/proc/stat", 0 },
    { CTR_SRC_SOFTIRQ, "/proc/softirqs", 1 },
    { CTR_SRC_INTR, "/proc/interrupts", 2 },
    { CTR_SRC_NET, "/proc/net/dev", 3 },
    { CTR_SRC_TCP, "/proc/net/snmp", 4 },
  };
  char *buf = NULL, path[1024];
  size_t cap = 0;
  long tck = sysconf(_SC_CLK_TCK);
  int rc = 0;

  if(!root)
    root = "";
  if(!strcmp(root, "/"))
    root = "";
  for(size_t i = 0; i < sizeof(files) / sizeof(files[0]) && !rc; i++) {
    if(!(sources & files[i].src))
      continue;
    snprintf(path, sizeof(path), "%s%s", root, files[i].file);
    if(ctr_read_file(path, &buf, &cap, NULL)) {
      snprintf(err, errlen, "%s: %s", path, strerror(errno));
      rc = -1;
      break;
    }
    switch(files[i].which) {
    case 0: rc = ctr_parse_stat(buf, tck, sources, per_cpu, s); break;
    case 1: rc = ctr_parse_softirqs(buf, s); break;
    case 2: rc = ctr_parse_interrupts(buf, s); break;
    case 3: rc = ctr_parse_netdev(buf, s); break;
    default: rc = ctr_parse_snmp(buf, s); break;
    }
    if(rc)
      snprintf(err, errlen, "%s: %s", path,
               errno == ENOMEM ? "out of memory" : "unexpected format");
  }
  if(!rc && (sources & CTR_SRC_RDMA) && ctr_read_rdma(root, s)) {
    snprintf(err, errlen, "rdma counters: out of memory");
    rc = -1;
  }
  if(!rc && (sources & CTR_SRC_ETHTOOL) && !root[0]) {
    if(!ifaces)
      rc = ethtool_all(s, err, errlen);
    for(size_t i = 0; ifaces && ifaces[i] && !rc; i++)
      if(ctr_read_ethtool(ifaces[i], s)) {
        snprintf(err, errlen, "ethtool -S %s: %s", ifaces[i],
                 errno == EOPNOTSUPP ? "the driver has no statistics"
                                     : strerror(errno));
        rc = -1;
      }
  }
  if(!rc && (sources & CTR_SRC_GPU) && !root[0])
    rc = gpu_sample(s, err, errlen);
  if(!rc && (sources & CTR_SRC_DISK))
    rc = ctr_read_disk(root, s, err, errlen);
  free(buf);
  return rc;
}

void ctr_cpu_pct(const double d[CTR_CPU_FIELDS], double *busy, double *user,
                 double *system, double *iowait, double *irq,
                 double *softirq)
{
  /* idle and iowait can step back a tick on NO_HZ kernels: clamp at 0 */
  double c[CTR_CPU_FIELDS], total = 0;
  for(int i = 0; i < CTR_CPU_FIELDS; i++) {
    c[i] = d[i] > 0 ? d[i] : 0;
    total += c[i];
  }
  if(total <= 0) {
    *busy = *user = *system = *iowait = *irq = *softirq = 0;
    return;
  }
  *busy = 100.0 * (total - c[3] - c[4]) / total;
  if(*busy > 100.0)
    *busy = 100.0;  /* rounding of (a + b) / (a + b) */
  *user = 100.0 * (c[0] + c[1]) / total;
  *system = 100.0 * c[2] / total;
  *iowait = 100.0 * c[4] / total;
  *irq = 100.0 * c[5] / total;
  *softirq = 100.0 * c[6] / total;
}

double ctr_rate(double a, double b, double dt)
{
  if(!(dt > 0))
    return NAN;
  if(b < a)
    return b / dt;  /* reset or wrap: count from zero */
  return (b - a) / dt;
}
