/*
 * isolate.c - fork a child with its own process group and resource
 * limits, read its answer from a pipe under a deadline, and reap it.
 *
 * The parent sleeps in poll() on two things: the pipe (the answer) and a
 * pidfd (the child's exit), so it wakes the moment either happens and
 * never later than the deadline or the next progress tick.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "isolate.h"
#include "strata.h"

#if defined(__SANITIZE_ADDRESS__)
#define ISOLATE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ISOLATE_ASAN 1
#endif
#endif

const char *isolate_strstatus(enum isolate_status s)
{
  switch(s) {
  case ISOLATE_OK:
    return "ok";
  case ISOLATE_TIMEOUT:
    return "timeout";
  case ISOLATE_CRASHED:
    return "crashed";
  case ISOLATE_INTERRUPTED:
    return "interrupted";
  case ISOLATE_SYSERR:
    return "system error";
  case ISOLATE_LIMIT:
    return "limit";
  }
  return "unknown";
}

const char *isolate_strlimit(enum isolate_limit l)
{
  switch(l) {
  case ISOLATE_LIMIT_MEMORY:
    return "memory";
  case ISOLATE_LIMIT_CPU:
    return "cpu";
  case ISOLATE_LIMIT_FILES:
    return "open files";
  case ISOLATE_LIMIT_OUTPUT:
    return "output";
  case ISOLATE_LIMIT_NONE:
    break;
  }
  return "none";
}

void isolate_default_limits(struct isolate_limits *lim)
{
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  struct rlimit rl;

  memset(lim, 0, sizeof(*lim));
  if(pages > 0 && psz > 0)
    /* 3/4: a runaway cell stops before the OOM killer picks a victim, and
     * a small test guest (1 GiB) still lends its cells most of it */
    lim->memory_bytes = (uint64_t)pages * (uint64_t)psz / 4 * 3;
  lim->open_files = 4096;
  if(!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_max != RLIM_INFINITY &&
     rl.rlim_max < lim->open_files)
    lim->open_files = rl.rlim_max;
  lim->output_bytes = 64ull << 20;
}

/* Lower (never raise) one limit, soft and hard. */
static void lower(int res, uint64_t soft, uint64_t hard)
{
  struct rlimit rl;
  if(getrlimit(res, &rl))
    return;
  if(rl.rlim_max != RLIM_INFINITY && hard > rl.rlim_max)
    hard = rl.rlim_max;
  if(soft > hard)
    soft = hard;
  if(rl.rlim_cur != RLIM_INFINITY && soft > rl.rlim_cur)
    soft = rl.rlim_cur;
  rl.rlim_cur = soft;
  rl.rlim_max = hard;
  (void)setrlimit(res, &rl);
}

/* In the child, before the work. */
static void apply_limits(const struct isolate_limits *lim)
{
  if(!lim)
    return;
#ifndef ISOLATE_ASAN
  /* RLIMIT_DATA, not RLIMIT_AS: CUDA and the verbs providers reserve far
   * more address space than they touch (PROT_NONE mappings, not counted
   * in DATA); heap and anonymous writable mappings are what a runaway
   * cell grows.  Under ASan the shadow memory counts too: the caller's
   * heap cap (core.isolate's Lua allocator) is the net there. */
  if(lim->memory_bytes)
    lower(RLIMIT_DATA, lim->memory_bytes, lim->memory_bytes);
#endif
  if(lim->cpu_s > 0) {
    uint64_t s = (uint64_t)lim->cpu_s + (lim->cpu_s > (double)(uint64_t)lim->cpu_s);
    lower(RLIMIT_CPU, s, s + 2);  /* SIGXCPU first, SIGKILL 2 s later */
  }
  if(lim->open_files)
    lower(RLIMIT_NOFILE, lim->open_files, lim->open_files);
}

static int append(struct isolate_result *r, size_t *cap, const char *b,
                  size_t n)
{
  if(r->len + n + 1 > *cap) {
    size_t c = *cap ? *cap : 4096;
    char *p;
    while(c < r->len + n + 1)
      c *= 2;
    p = realloc(r->payload, c);
    if(!p)
      return -1;
    r->payload = p;
    *cap = c;
  }
  memcpy(r->payload + r->len, b, n);
  r->len += n;
  r->payload[r->len] = '\0';
  return 0;
}

/*
 * A scheduler stopping a job (scancel, a pod's termination) signals every
 * process of it: the child may die of that SIGTERM before the parent's
 * own handler ran.  When the child died of SIGTERM/SIGINT/SIGHUP, give
 * the parent's signal up to 200 ms to arrive (nanosleep returns early on
 * it): then the cell was interrupted, not crashed.
 */
static int stopping_signal(int sig)
{
  struct timespec ts = { 0, 200000000 };
  if(sig != SIGTERM && sig != SIGINT && sig != SIGHUP)
    return 0;
  if(!strata_stop_flag)
    (void)nanosleep(&ts, NULL);
  return strata_stop_flag != 0;
}

static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

/* Read what the pipe holds now; 1 at EOF, -1 on error or output limit. */
static int drain(int fd, struct isolate_result *r, size_t *cap,
                 const struct isolate_limits *lim)
{
  for(;;) {
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof(buf));
    if(n > 0) {
      if(lim && lim->output_bytes && r->len + (size_t)n > lim->output_bytes) {
        r->limit = ISOLATE_LIMIT_OUTPUT;
        return -1;
      }
      if(append(r, cap, buf, (size_t)n))
        return -1;
      continue;
    }
    if(n == 0)
      return 1;
    if(errno == EINTR)
      continue;
    return errno == EAGAIN ? 0 : -1;
  }
}


/* One cell's child as the wait loop sees it: its answer pipe, its pidfd,
 * and who reaps it (this process, or the fork server that forked it). */
struct cell {
  pid_t pid;
  int rfd;                     /* read end of the answer pipe */
  int pfd;                     /* pidfd, or -1 (kernel < 5.3) */
  struct isolate_server *srv;  /* NULL: a child of this process */
};

struct isolate_server {
  pid_t pid;   /* the server process (a child of this one) */
  int sock;    /* stream socket to it; -1 once it is gone */
};

/* What the runner asks the server, and what it answers. */
enum { SRV_FORK = 'F', SRV_REAP = 'W' };
struct srv_req {
  int op;
  pid_t pid;                   /* SRV_REAP: which child */
  struct isolate_limits lim;   /* SRV_FORK: the cell's limits */
  uint32_t len;                /* SRV_FORK: bytes of request that follow */
};
struct srv_rep {
  int err;                     /* errno of a failed fork, else 0 */
  pid_t pid;                   /* SRV_FORK: the child */
  int status;                  /* SRV_REAP: wait4's status */
  struct rusage ru;            /* SRV_REAP: the child's usage */
};

/* In the child, from fork to _exit: its own process group (the parent
 * kills the group at the deadline), default stop signals, the limits. */
static void run_child(isolate_child_fn child, void *arg, int wfd,
                      const struct isolate_limits *lim)
{
  int code;
  (void)setpgid(0, 0);
  strata_stop_flag = 0;
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  apply_limits(lim);
  code = child(wfd, arg);
  close(wfd);
  fflush(NULL);
  _exit(code);
}

static int full_io(int fd, void *buf, size_t n, int out)
{
  char *p = buf;
  while(n) {
    ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : read(fd, p, n);
    if(k < 0 && errno == EINTR)
      continue;
    if(k <= 0) {
      if(k == 0)
        errno = EPIPE;
      return -1;
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Send hdr (+ fd as SCM_RIGHTS when >= 0), then the request bytes. */
static int srv_send(int sock, const struct srv_req *hdr, int fd,
                    const char *req, size_t len)
{
  union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
  struct iovec iov = { (void *)hdr, sizeof(*hdr) };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
  ssize_t k;
  if(fd >= 0) {
    struct cmsghdr *cm;
    memset(&u, 0, sizeof(u));
    mh.msg_control = u.buf;
    mh.msg_controllen = sizeof(u.buf);
    cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  }
  while((k = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  if(k < 0)
    return -1;
  if((size_t)k < sizeof(*hdr) &&
     full_io(sock, (char *)hdr + k, sizeof(*hdr) - (size_t)k, 1))
    return -1;
  return len ? full_io(sock, (void *)req, len, 1) : 0;
}

/* The header (and the fd that came with it, or -1); 0, or -1 at EOF. */
static int srv_recv(int sock, struct srv_req *hdr, int *fd)
{
  union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
  struct iovec iov = { hdr, sizeof(*hdr) };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
  struct cmsghdr *cm;
  ssize_t k;
  *fd = -1;
  while((k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  if(k <= 0)
    return -1;
  for(cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
    if(cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      memcpy(fd, CMSG_DATA(cm), sizeof(int));
  if((size_t)k < sizeof(*hdr) &&
     full_io(sock, (char *)hdr + k, sizeof(*hdr) - (size_t)k, 0))
    return -1;
  return 0;
}

/*
 * The server's loop: fork a cell on SRV_FORK (prepare first, in the
 * server, so the state later cells see is kept here), reap it on
 * SRV_REAP (only then: until the runner has killed what it must, the
 * child's pid and process group cannot be reused).  Ends when the runner
 * closes the socket or dies (PR_SET_PDEATHSIG).
 */
static void server_main(int sock, pid_t runner, isolate_prepare_fn prepare,
                        isolate_child_fn child, void *arg)
{
  char *req = NULL;
  size_t cap = 0;

  /* the runner handles SIGINT/SIGTERM and ends the cells; the server
   * stays until the runner lets it go */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
  if(getppid() != runner)
    _exit(0);
  for(;;) {
    struct srv_req h;
    struct srv_rep rep;
    int fd;
    if(srv_recv(sock, &h, &fd))
      _exit(0);
    memset(&rep, 0, sizeof(rep));
    if(h.op == SRV_FORK) {
      if(h.len + 1 > cap) {
        char *p = realloc(req, h.len + 1);
        if(!p)
          _exit(1);
        req = p;
        cap = h.len + 1;
      }
      if(full_io(sock, req, h.len, 0))
        _exit(0);
      req[h.len] = '\0';
      if(prepare)
        prepare(req, h.len, &h.lim, arg);
      /* stdout only: fflush(NULL) writes to every FILE, and each page the
       * server writes after a fork is copied (the server writes no other) */
      fflush(stdout);
      rep.pid = fork();
      if(rep.pid == 0) {
        close(sock);
        run_child(child, arg, fd, &h.lim);
      }
      if(rep.pid < 0)
        rep.err = errno;
      else
        (void)setpgid(rep.pid, rep.pid);
      if(fd >= 0)
        close(fd);
    }
    else if(h.op == SRV_REAP) {
      while(wait4(h.pid, &rep.status, 0, &rep.ru) < 0)
        if(errno != EINTR) {
          rep.err = errno;
          break;
        }
    }
    else
      _exit(1);
    if(full_io(sock, &rep, sizeof(rep), 1))
      _exit(0);
  }
}

struct isolate_server *isolate_server_start(isolate_prepare_fn prepare,
                                            isolate_child_fn child,
                                            void *arg)
{
  struct isolate_server *s;
  int sv[2], probe;
  pid_t me = getpid();

  /* the runner finds a cell's exit through its pidfd: no server without */
  probe = pidfd_of(me);
  if(probe < 0)
    return NULL;
  close(probe);
  s = calloc(1, sizeof(*s));
  if(!s)
    return NULL;
  if(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
    free(s);
    return NULL;
  }
  fflush(NULL);
  s->pid = fork();
  if(s->pid < 0) {
    close(sv[0]);
    close(sv[1]);
    free(s);
    return NULL;
  }
  if(s->pid == 0) {
    close(sv[0]);
    server_main(sv[1], me, prepare, child, arg);
    _exit(0);
  }
  close(sv[1]);
  s->sock = sv[0];
  return s;
}

void isolate_server_stop(struct isolate_server *s)
{
  int st;
  if(!s)
    return;
  if(s->sock >= 0)
    close(s->sock);   /* the server reads EOF and exits */
  while(waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
    ;
  free(s);
}

/* The server is gone (killed, crashed): later cells fork from here. */
static void server_lost(struct isolate_server *s)
{
  if(s->sock >= 0) {
    close(s->sock);
    s->sock = -1;
    (void)kill(s->pid, SIGKILL);
  }
}

pid_t isolate_server_pid(const struct isolate_server *s)
{
  return s->pid;
}

int isolate_server_alive(const struct isolate_server *s)
{
  return s && s->sock >= 0;
}

/* Reap the cell through its server: 1 reaped, -1 the server is gone. */
static int server_reap(struct cell *c, int *st, struct rusage *ru)
{
  struct srv_req h;
  struct srv_rep rep;
  memset(&h, 0, sizeof(h));
  h.op = SRV_REAP;
  h.pid = c->pid;
  if(c->srv->sock < 0 || srv_send(c->srv->sock, &h, -1, NULL, 0) ||
     full_io(c->srv->sock, &rep, sizeof(rep), 0)) {
    server_lost(c->srv);
    return -1;
  }
  if(rep.err) {
    errno = rep.err;
    return -1;
  }
  *st = rep.status;
  *ru = rep.ru;
  return 1;
}

/* Has the cell exited?  1 (and reaped: st, ru), 0 not yet, -1 error. */
static int cell_exited(struct cell *c, int *st, struct rusage *ru, int block)
{
  if(c->srv) {
    if(!block) {
      struct pollfd p = { .fd = c->pfd, .events = POLLIN };
      if(poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP)))
        return 0;
    }
    return server_reap(c, st, ru);
  }
  for(;;) {
    pid_t w = wait4(c->pid, st, block ? 0 : WNOHANG, ru);
    if(w == c->pid)
      return 1;
    if(w == 0)
      return 0;
    if(errno != EINTR)
      return -1;
  }
}

static void usage_of(const struct rusage *ru, struct isolate_result *r)
{
  r->cpu_s = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
             (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
  r->maxrss_kib = ru->ru_maxrss;
}

/* Kill the child's group, then reap it so no zombie is left behind. */
static void kill_and_reap(struct cell *c, struct isolate_result *r)
{
  int st;
  struct rusage ru;
  (void)kill(-c->pid, SIGKILL);
  (void)kill(c->pid, SIGKILL);
  memset(&ru, 0, sizeof(ru));
  if(cell_exited(c, &st, &ru, 1) < 0)
    r->lost = 1;
  usage_of(&ru, r);
}

/* Wait for the cell's answer and exit under the deadline; classify. */
static enum isolate_status wait_cell(struct cell *c, double timeout_s,
                                     const struct isolate_limits *lim,
                                     isolate_tick_fn tick, void *tick_arg,
                                     int tick_ms, struct isolate_result *r)
{
  int eof = 0, exited = 0, st = 0;
  size_t cap = 0;
  uint64_t start = strata_now_ns(), last_tick = start;
  struct rusage ru;

  memset(&ru, 0, sizeof(ru));
  (void)fcntl(c->rfd, F_SETFL, O_NONBLOCK);
  /* Until the child has exited and its answer is read (or EOF). */
  while(!exited) {
    struct pollfd p[2];
    int np = 0, wait_ms = 100, rc;
    uint64_t now = strata_now_ns();
    double elapsed = (double)(now - start) / 1e9;

    if(strata_stop_flag) {
      r->status = ISOLATE_INTERRUPTED;
      goto kill;
    }
    if(timeout_s > 0 && elapsed >= timeout_s) {
      r->status = ISOLATE_TIMEOUT;
      goto kill;
    }
    if(tick && tick_ms > 0 && (now - last_tick) / 1000000 >= (uint64_t)tick_ms) {
      last_tick = now;
      tick(elapsed, tick_arg);
    }
    if(timeout_s > 0) {
      double left_ms = (timeout_s - elapsed) * 1e3 + 1;
      if(left_ms < wait_ms)
        wait_ms = (int)left_ms;
    }
    if(!eof)
      p[np++] = (struct pollfd){ .fd = c->rfd, .events = POLLIN };
    if(c->pfd >= 0)
      p[np++] = (struct pollfd){ .fd = c->pfd, .events = POLLIN };
    else if(eof)
      wait_ms = 1;  /* no pidfd (kernel < 5.3): poll for the exit */
    rc = np ? poll(p, (nfds_t)np, wait_ms) : poll(NULL, 0, wait_ms);
    if(rc < 0 && errno != EINTR) {
      r->status = ISOLATE_SYSERR;
      goto kill;
    }
    if(!eof) {
      int d = drain(c->rfd, r, &cap, lim);
      if(d < 0) {
        r->status = r->limit ? ISOLATE_LIMIT : ISOLATE_SYSERR;
        goto kill;
      }
      eof = d;
    }
    /* The child may exit while something it started keeps the pipe
     * open: its exit, not EOF, ends the wait. */
    rc = cell_exited(c, &st, &ru, 0);
    if(rc < 0) {
      if(c->srv && !isolate_server_alive(c->srv)) {
        /* the server died with the cell: its exit status died too */
        r->status = ISOLATE_CRASHED;
        r->lost = 1;
        (void)kill(-c->pid, SIGKILL);
        return r->status;
      }
      r->status = ISOLATE_SYSERR;
      goto kill;
    }
    exited = rc;
  }
  if(!eof && drain(c->rfd, r, &cap, lim) < 0 && r->limit) {
    r->status = ISOLATE_LIMIT;
    (void)kill(-c->pid, SIGKILL);
    return r->status;
  }
  (void)kill(-c->pid, SIGKILL);  /* leftovers the child started */
  usage_of(&ru, r);
  if(WIFEXITED(st) && WEXITSTATUS(st) == 0)
    r->status = ISOLATE_OK;
  else if(WIFEXITED(st) && WEXITSTATUS(st) == ISOLATE_EXIT_MEMORY)
    r->status = ISOLATE_LIMIT, r->limit = ISOLATE_LIMIT_MEMORY;
  else if(WIFEXITED(st) && WEXITSTATUS(st) == ISOLATE_EXIT_FILES)
    r->status = ISOLATE_LIMIT, r->limit = ISOLATE_LIMIT_FILES;
  else if(WIFSIGNALED(st) && stopping_signal(WTERMSIG(st)))
    r->status = ISOLATE_INTERRUPTED;
  else if(WIFSIGNALED(st) && lim && lim->cpu_s > 0 &&
          (WTERMSIG(st) == SIGXCPU ||
           (WTERMSIG(st) == SIGKILL && r->cpu_s >= lim->cpu_s)))
    r->status = ISOLATE_LIMIT, r->limit = ISOLATE_LIMIT_CPU;
  else {
    r->status = ISOLATE_CRASHED;
    r->term_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  return r->status;

kill:
  {
    enum isolate_status s = r->status;
    kill_and_reap(c, r);
    return r->status = s;
  }
}

enum isolate_status isolate_run(isolate_child_fn child, void *child_arg,
                                double timeout_s,
                                const struct isolate_limits *lim,
                                isolate_tick_fn tick, void *tick_arg,
                                int tick_ms, struct isolate_result *r)
{
  int fds[2];
  struct cell c = { 0, -1, -1, NULL };

  memset(r, 0, sizeof(*r));
  if(pipe2(fds, O_CLOEXEC))
    return r->status = ISOLATE_SYSERR;
  fflush(NULL);
  c.pid = fork();
  if(c.pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return r->status = ISOLATE_SYSERR;
  }
  if(c.pid == 0) {
    close(fds[0]);
    run_child(child, child_arg, fds[1], lim);
  }
  (void)setpgid(c.pid, c.pid);  /* both sides set it: no race on kill(-pid) */
  close(fds[1]);
  c.rfd = fds[0];
  c.pfd = pidfd_of(c.pid);
  wait_cell(&c, timeout_s, lim, tick, tick_arg, tick_ms, r);
  close(c.rfd);
  if(c.pfd >= 0)
    close(c.pfd);
  return r->status;
}

enum isolate_status isolate_server_run(struct isolate_server *s,
                                       const char *req, size_t len,
                                       double timeout_s,
                                       const struct isolate_limits *lim,
                                       isolate_tick_fn tick, void *tick_arg,
                                       int tick_ms, struct isolate_result *r)
{
  int fds[2];
  struct srv_req h;
  struct srv_rep rep;
  struct cell c = { 0, -1, -1, s };

  memset(r, 0, sizeof(*r));
  if(!isolate_server_alive(s) || len > UINT32_MAX) {
    errno = ESRCH;
    return r->status = ISOLATE_SYSERR;
  }
  if(pipe2(fds, O_CLOEXEC))
    return r->status = ISOLATE_SYSERR;
  memset(&h, 0, sizeof(h));
  h.op = SRV_FORK;
  if(lim)
    h.lim = *lim;
  h.len = (uint32_t)len;
  if(srv_send(s->sock, &h, fds[1], req, len)) {
    /* the server was gone before it had the whole request: it forked
     * nothing */
    server_lost(s);
    close(fds[0]);
    close(fds[1]);
    errno = ESRCH;
    return r->status = ISOLATE_SYSERR;
  }
  close(fds[1]);
  if(full_io(s->sock, &rep, sizeof(rep), 0)) {
    /* gone after the request: the cell may have run (and may still):
     * it is this cell's crash, never run a second time */
    server_lost(s);
    close(fds[0]);
    r->status = ISOLATE_CRASHED;
    r->lost = 1;
    return r->status;
  }
  if(rep.err || rep.pid <= 0) {
    close(fds[0]);
    errno = rep.err ? rep.err : EPROTO;
    return r->status = ISOLATE_SYSERR;
  }
  c.pid = rep.pid;
  c.rfd = fds[0];
  /* not reaped until we ask: this pid is the child until then */
  c.pfd = pidfd_of(c.pid);
  if(c.pfd < 0) {
    (void)kill(-c.pid, SIGKILL);
    (void)kill(c.pid, SIGKILL);
    c.pfd = -1;
    {
      int st;
      struct rusage ru;
      (void)server_reap(&c, &st, &ru);
    }
    close(c.rfd);
    return r->status = ISOLATE_SYSERR;
  }
  wait_cell(&c, timeout_s, lim, tick, tick_arg, tick_ms, r);
  close(c.rfd);
  close(c.pfd);
  return r->status;
}
