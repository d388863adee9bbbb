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

struct sink {
  char *p;
  size_t n, cap, max;
  int truncated;
};

static void sink_add(struct sink *s, const char *d, size_t n)
{
  if(s->n + n > s->max) {
    s->truncated = 1;
    n = s->max - s->n;
  }
  if(!n)
    return;
  if(s->n + n + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 4096;
    char *np;
    while(cap < s->n + n + 1)
      cap *= 2;
    np = realloc(s->p, cap);
    if(!np) {
      s->truncated = 1;
      return;
    }
    s->p = np;
    s->cap = cap;
  }
  memcpy(s->p + s->n, d, n);
  s->n += n;
}

static void child_exec(const struct sys_run_opts *o, int in, int out,
                       int err, int errpipe)
{
  sigset_t none;
  int e;
  setpgid(0, 0);
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if(dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
    goto fail;
  if(o->cwd && chdir(o->cwd))
    goto fail;
  if(o->envp)
    execvpe(o->argv[0], o->argv, o->envp);
  else
    execvp(o->argv[0], o->argv);
fail:
  e = errno;
  (void)!write(errpipe, &e, sizeof(e));
  _exit(127);
}

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

static void close_fd(int *fd)
{
  if(*fd >= 0)
    close(*fd);
  *fd = -1;
}

int sys_run(const struct sys_run_opts *o, struct sys_run_result *r)
{
  int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
  int pex[2] = { -1, -1 }, status = 0, exited = 0, e;
  struct sink so = { 0 }, se = { 0 };
  uint64_t t0 = strata_now_ns(), deadline = 0, drain_until = 0;
  size_t in_off = 0;
  pid_t pid;
  ssize_t nr;

  memset(r, 0, sizeof(*r));
  so.max = se.max = o->max_output ? o->max_output : (size_t)4 << 20;
  if(o->timeout_s > 0)
    deadline = t0 + (uint64_t)(o->timeout_s * 1e9);
  if(pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
     pipe2(perr, O_CLOEXEC) || pipe2(pex, O_CLOEXEC))
    goto syserr;
  pid = fork();
  if(pid < 0)
    goto syserr;
  if(pid == 0) {
    int in = pin[0];
    if(!o->in) {
      in = open("/dev/null", O_RDONLY);
      if(in < 0)
        in = pin[0];
    }
    child_exec(o, in, pout[1], perr[1], pex[1]);
  }
  setpgid(pid, pid);  /* also in the child: no race on killpg */
  close_fd(&pin[0]);
  close_fd(&pout[1]);
  close_fd(&perr[1]);
  close_fd(&pex[1]);
  if(!o->in || o->in_len == 0)
    close_fd(&pin[1]);
  else
    fcntl(pin[1], F_SETFL, O_NONBLOCK);
  nr = read(pex[0], &e, sizeof(e));  /* EOF once exec succeeded */
  close_fd(&pex[0]);
  if(nr == (ssize_t)sizeof(e)) {
    char msg[300];
    r->exec_errno = e;
    snprintf(msg, sizeof(msg), "sys.run: cannot execute '%s': %s\n",
             o->argv[0], strerror(e));
    sink_add(&se, msg, strlen(msg));
  }
  for(;;) {
    struct pollfd pf[3];
    int n = 0, wait_ms = 100;
    uint64_t now = strata_now_ns();
    if(!exited) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if(w == pid) {
        exited = 1;
        drain_until = now + 200000000ull;  /* grandchildren may hold */
      }
    }
    if(exited && ((pout[0] < 0 && perr[0] < 0) || now >= drain_until))
      break;
    if(!exited && deadline && now >= deadline && !r->timed_out) {
      r->timed_out = 1;
      kill(-pid, SIGKILL);
    }
    if(!exited && strata_stop_flag && !r->interrupted) {
      r->interrupted = 1;
      kill(-pid, SIGKILL);
    }
    if(pout[0] >= 0)
      pf[n++] = (struct pollfd){ pout[0], POLLIN, 0 };
    if(perr[0] >= 0)
      pf[n++] = (struct pollfd){ perr[0], POLLIN, 0 };
    if(pin[1] >= 0)
      pf[n++] = (struct pollfd){ pin[1], POLLOUT, 0 };
    if(deadline && !exited && deadline > now &&
       (deadline - now) / 1000000 < (uint64_t)wait_ms)
      wait_ms = (int)((deadline - now) / 1000000) + 1;
    if(exited)
      wait_ms = 20;
    if(n == 0) {
      if(exited)
        break;
      poll(NULL, 0, wait_ms > 20 ? 20 : wait_ms);
      continue;
    }
    if(poll(pf, (nfds_t)n, wait_ms) < 0 && errno != EINTR)
      break;
    for(int i = 0; i < n; i++) {
      char buf[65536];
      ssize_t k;
      if(!pf[i].revents)
        continue;
      if(pf[i].fd == pin[1]) {
        k = write_nosigpipe(pin[1], o->in + in_off, o->in_len - in_off);
        if(k > 0)
          in_off += (size_t)k;
        if((k < 0 && errno != EAGAIN) || in_off == o->in_len)
          close_fd(&pin[1]);
        continue;
      }
      k = read(pf[i].fd, buf, sizeof(buf));
      if(k > 0)
        sink_add(pf[i].fd == pout[0] ? &so : &se, buf, (size_t)k);
      else if(k == 0 || errno != EINTR)
        close_fd(pf[i].fd == pout[0] ? &pout[0] : &perr[0]);
    }
  }
  if(!exited)
    waitpid(pid, &status, 0);
  /* whatever the command left behind in its group goes with it */
  kill(-pid, SIGKILL);
  close_fd(&pin[1]);
  close_fd(&pout[0]);
  close_fd(&perr[0]);
  if(WIFSIGNALED(status)) {
    r->signal = WTERMSIG(status);
    r->code = 128 + r->signal;
  }
  else
    r->code = WEXITSTATUS(status);
  r->duration_s = (double)(strata_now_ns() - t0) / 1e9;
  sink_add(&so, "", 0);
  r->out = so.p ? so.p : strdup("");
  r->err = se.p ? se.p : strdup("");
  if(so.p)
    so.p[so.n] = '\0';
  if(se.p)
    se.p[se.n] = '\0';
  r->out_len = so.n;
  r->err_len = se.n;
  r->out_truncated = so.truncated;
  r->err_truncated = se.truncated;
  return 0;
syserr:
  e = errno;
  close_fd(&pin[0]);
  close_fd(&pin[1]);
  close_fd(&pout[0]);
  close_fd(&pout[1]);
  close_fd(&perr[0]);
  close_fd(&perr[1]);
  close_fd(&pex[0]);
  close_fd(&pex[1]);
  errno = e;
  return -1;
}

void sys_run_free(struct sys_run_result *r)
{
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}
