/*
 * sys.c - host facts and the process runner (see sys.h).  Everything here
 * degrades to "absent" (-1) rather than failing: a VM with a handful of
 * virtio devices and a GPU node with forty PCI functions both work.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "strata.h"
#include "sys.h"

int sys_read_file(const char *path, size_t max, char **buf, size_t *len)
{
  return strata_read_file(path, max ? max : (size_t)16 << 20, buf, NULL,
                          len);
}

int sys_attr(const char *dir, const char *name, char *out, size_t len)
{
  char path[PATH_MAX];
  int fd, n;
  ssize_t r;

  n = snprintf(path, sizeof(path), "%s/%s", dir, name);
  if(n < 0 || (size_t)n >= sizeof(path) || len == 0)
    return -1;
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if(fd < 0)
    return -1;
  r = read(fd, out, len - 1);
  close(fd);
  if(r < 0)
    return -1;
  while(r > 0 && isspace((unsigned char)out[r - 1]))
    r--;
  out[r] = '\0';
  return 0;
}

int sys_link_base(const char *dir, const char *name, char *out, size_t len)
{
  char path[PATH_MAX], target[PATH_MAX];
  const char *slash;
  ssize_t r;
  int n = snprintf(path, sizeof(path), "%s/%s", dir, name);
  if(n < 0 || (size_t)n >= sizeof(path))
    return -1;
  r = readlink(path, target, sizeof(target) - 1);
  if(r <= 0)
    return -1;
  target[r] = '\0';
  slash = strrchr(target, '/');
  n = snprintf(out, len, "%s", slash ? slash + 1 : target);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

int sys_cpulist(const char *list, unsigned char *mask, size_t masklen)
{
  const char *p = list;
  int count = 0;
  while(*p && isspace((unsigned char)*p))
    p++;
  while(*p && !isspace((unsigned char)*p)) {
    char *e;
    unsigned long a = strtoul(p, &e, 10), b;
    if(e == p)
      return -1;
    b = a;
    p = e;
    if(*p == '-') {
      b = strtoul(p + 1, &e, 10);
      if(e == p + 1 || b < a)
        return -1;
      p = e;
    }
    for(unsigned long c = a; c <= b; c++) {
      if(mask && c < masklen)
        mask[c] = 1;
      count++;
    }
    if(*p == ',')
      p++;
    else if(*p && !isspace((unsigned char)*p))
      return -1;
  }
  return count;
}

const char *sys_pci_kind(unsigned cls)
{
  switch(cls >> 8) {
  case 0x0300:
  case 0x0302:
    return "gpu";
  case 0x0200:
    return "nic";
  case 0x0207:
    return "infiniband";
  case 0x0108:
    return (cls & 0xff) == 0x02 ? "nvme" : NULL;
  default:
    return NULL;
  }
}

const char *sys_pci_vendor(unsigned vendor)
{
  switch(vendor) {
  case 0x10de: return "NVIDIA";
  case 0x15b3: return "Mellanox (NVIDIA)";
  case 0x8086: return "Intel";
  case 0x1022: return "AMD";
  case 0x1002: return "AMD/ATI";
  case 0x14e4: return "Broadcom";
  case 0x1077: return "QLogic";
  case 0x19e5: return "Huawei";
  case 0x1d0f: return "Amazon";
  case 0x1af4: return "Red Hat (virtio)";
  case 0x144d: return "Samsung";
  case 0x1344: return "Micron";
  case 0x15b7: return "Western Digital";
  case 0x1e0f: return "KIOXIA";
  case 0x1c5c: return "SK hynix";
  case 0x1bb1: return "Seagate";
  case 0x1000: return "Broadcom/LSI";
  case 0x1924: return "Solarflare (AMD)";
  case 0x1dd8: return "AMD Pensando";
  case 0x1f0f: return "NVIDIA (BlueField)";
  default: return NULL;
  }
}

int sys_pci_ids_name(const char *ids_path, unsigned vendor, unsigned device,
                     char *out, size_t len)
{
  static const char *const places[] = {
    "/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids",
    "/usr/share/pci.ids", NULL
  };
  char line[512], vhex[8], dhex[8];
  FILE *f = NULL;
  int in_vendor = 0, rc = -1;

  if(ids_path)
    f = fopen(ids_path, "re");
  for(int i = 0; !f && !ids_path && places[i]; i++)
    f = fopen(places[i], "re");
  if(!f)
    return -1;
  snprintf(vhex, sizeof(vhex), "%04x", vendor & 0xffff);
  snprintf(dhex, sizeof(dhex), "%04x", device & 0xffff);
  while(fgets(line, sizeof(line), f)) {
    size_t n = strcspn(line, "\n");
    line[n] = '\0';
    if(line[0] == '#' || !line[0])
      continue;
    if(line[0] != '\t') {
      if(in_vendor)
        break;
      in_vendor = !strncmp(line, vhex, 4) && line[4] == ' ';
      continue;
    }
    if(in_vendor && line[1] != '\t' && !strncmp(line + 1, dhex, 4) &&
       line[5] == ' ') {
      const char *nm = line + 6;
      while(*nm == ' ')
        nm++;
      snprintf(out, len, "%s", nm);
      rc = 0;
      break;
    }
  }
  fclose(f);
  return rc;
}

int sys_ethtool_drvinfo(const char *ifname, struct sys_drvinfo *out)
{
  struct ethtool_drvinfo di;
  struct ifreq ifr;
  int fd, rc, e;

  if(strlen(ifname) >= IFNAMSIZ) {
    errno = EINVAL;
    return -1;
  }
  fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if(fd < 0)
    return -1;
  memset(&di, 0, sizeof(di));
  memset(&ifr, 0, sizeof(ifr));
  di.cmd = ETHTOOL_GDRVINFO;
  memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
  ifr.ifr_data = (void *)&di;
  rc = ioctl(fd, SIOCETHTOOL, &ifr);
  e = errno;
  close(fd);
  if(rc < 0) {
    errno = e;
    return -1;
  }
  snprintf(out->driver, sizeof(out->driver), "%.31s", di.driver);
  snprintf(out->version, sizeof(out->version), "%.31s", di.version);
  snprintf(out->fw_version, sizeof(out->fw_version), "%.31s",
           di.fw_version);
  snprintf(out->bus_info, sizeof(out->bus_info), "%.31s", di.bus_info);
  return 0;
}

static int is_pci_addr(const char *s, size_t n)
{
  /* DDDD:BB:DD.F */
  static const char pat[] = "xxxx:xx:xx.x";
  if(n != sizeof(pat) - 1)
    return 0;
  for(size_t i = 0; i < n; i++)
    if(pat[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != pat[i])
      return 0;
  return 1;
}

int sys_pci_of_path(const char *real, char *out, size_t len)
{
  const char *p = real, *best = NULL;
  while(*p) {
    const char *e = strchr(p, '/');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if(is_pci_addr(p, n))
      best = p;
    p += n;
    if(*p == '/')
      p++;
  }
  if(!best)
    return -1;
  snprintf(out, len, "%.12s", best);
  return 0;
}

/* --- Processes ------------------------------------------------------- */

/* write() to the child's stdin without dying of SIGPIPE when it has gone:
 * block the signal for this thread and swallow the one the write raised. */
static ssize_t write_nosigpipe(int fd, const void *p, size_t n)
{
  sigset_t pipe_set, old, pending;
  ssize_t k;
  int e, was_pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  was_pending = sigismember(&pending, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  k = write(fd, p, n);
  e = errno;
  if(k < 0 && e == EPIPE && !was_pending) {
    const struct timespec zero = { 0, 0 };
    (void)sigtimedwait(&pipe_set, NULL, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = e;
  return k;
}

/* One command as sys_run watches it (spawn.h does the starting). */
struct run {
  const struct sys_run_opts *o;
  struct spawn_proc p;
  struct spawn_buf out, err;
  uint64_t deadline, drain_until;
  size_t in_off;
  int status, exited;
};

/* As much of stdin as the pipe takes now. */
static void feed(struct run *x)
{
  ssize_t k = write_nosigpipe(x->p.in, x->o->in + x->in_off,
                              x->o->in_len - x->in_off);
  if(k > 0)
    x->in_off += (size_t)k;
  if((k < 0 && errno != EAGAIN) || x->in_off == x->o->in_len)
    spawn_close(&x->p.in);
}

/* The deadline and a stop kill the group, once each. */
static void enforce(struct run *x, struct sys_run_result *r, uint64_t now)
{
  if(x->exited)
    return;
  if(x->deadline && now >= x->deadline && !r->timed_out) {
    r->timed_out = 1;
    spawn_kill(x->p.pid, SIGKILL);
  }
  if(strata_stop_flag && !r->interrupted) {
    r->interrupted = 1;
    spawn_kill(x->p.pid, SIGKILL);
  }
}

/* One poll of the command's pipes: reap, enforce, read, feed.  1 once
 * the command has exited and its output is read (or no longer waited
 * for: grandchildren may hold it open). */
static int step(struct run *x, struct sys_run_result *r)
{
  struct pollfd pf[3];
  int *fds[3], n = 0, wait_ms;
  uint64_t now = strata_now_ns();
  if(!x->exited && spawn_reap(x->p.pid, 0, &x->status, NULL) == 1) {
    x->exited = 1;
    x->drain_until = now + 200000000ull;
  }
  if(x->exited && ((x->p.out < 0 && x->p.err < 0) || now >= x->drain_until))
    return 1;
  enforce(x, r, now);
  if(x->p.out >= 0)
    fds[n] = &x->p.out, pf[n++] = (struct pollfd){ x->p.out, POLLIN, 0 };
  if(x->p.err >= 0)
    fds[n] = &x->p.err, pf[n++] = (struct pollfd){ x->p.err, POLLIN, 0 };
  if(x->p.in >= 0)
    fds[n] = &x->p.in, pf[n++] = (struct pollfd){ x->p.in, POLLOUT, 0 };
  wait_ms = x->exited ? 20
                      : spawn_poll_ms(r->timed_out ? 0 : x->deadline, now, 100);
  if(n == 0) {
    if(x->exited)
      return 1;
    poll(NULL, 0, wait_ms > 20 ? 20 : wait_ms);
    return 0;
  }
  if(poll(pf, (nfds_t)n, wait_ms) < 0 && errno != EINTR)
    return 1;
  for(int i = 0; i < n; i++) {
    if(!pf[i].revents)
      continue;
    if(fds[i] == &x->p.in)
      feed(x);
    else if(spawn_buf_read(*fds[i], fds[i] == &x->p.out ? &x->out
                                                         : &x->err) == 1)
      spawn_close(fds[i]);
  }
  return 0;
}

/* The result of a command that ran: its exit and its output. */
static void finish(struct run *x, struct sys_run_result *r, uint64_t t0)
{
  spawn_code(x->status, &r->code, &r->signal);
  r->duration_s = (double)(strata_now_ns() - t0) / 1e9;
  (void)spawn_buf_add(&x->out, "", 0);
  (void)spawn_buf_add(&x->err, "", 0);
  r->out = x->out.p ? x->out.p : strdup("");
  r->err = x->err.p ? x->err.p : strdup("");
  r->out_len = x->out.n;
  r->err_len = x->err.n;
  r->out_truncated = x->out.truncated;
  r->err_truncated = x->err.truncated;
}

int sys_run(const struct sys_run_opts *o, struct sys_run_result *r)
{
  struct spawn_cmd c = { o->argv, o->envp, o->cwd, !o->in };
  struct run x;
  uint64_t t0 = strata_now_ns();

  memset(r, 0, sizeof(*r));
  memset(&x, 0, sizeof(x));
  x.o = o;
  x.out.max = x.err.max = o->max_output ? o->max_output : (size_t)4 << 20;
  if(o->timeout_s > 0)
    x.deadline = t0 + (uint64_t)(o->timeout_s * 1e9);
  if(spawn_exec(&c, &x.p))
    return -1;
  if(!o->in || o->in_len == 0)
    spawn_close(&x.p.in);
  if(x.p.exec_errno) {
    char msg[300];
    r->exec_errno = x.p.exec_errno;
    snprintf(msg, sizeof(msg), "sys.run: cannot execute '%s': %s\n",
             o->argv[0], strerror(x.p.exec_errno));
    (void)spawn_buf_add(&x.err, msg, strlen(msg));
  }
  while(!step(&x, r))
    ;
  if(!x.exited)
    (void)spawn_reap(x.p.pid, 1, &x.status, NULL);
  /* whatever the command left behind in its group goes with it */
  spawn_kill_group(x.p.pid, SIGKILL);
  spawn_close(&x.p.in);
  spawn_close(&x.p.out);
  spawn_close(&x.p.err);
  finish(&x, r, t0);
  return 0;
}

void sys_run_free(struct sys_run_result *r)
{
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}
