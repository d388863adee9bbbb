/*
 * isolate.c - fork a child with its own process group and resource
 * limits, read its answer from a pipe under a deadline, answer what it
 * asks on a socket of its own, and reap it; or have a fork server do the
 * forking, killing and reaping (forkserver.c).
 *
 * The parent sleeps in poll() on the pipe (the answer), the ask socket and
 * a pidfd (the child's exit) or the server's socket (its word that the
 * child exited), so it wakes the moment any happens and never later than
 * the deadline or the next progress tick.
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

#include "forkserver.h"
#include "isolate.h"
#include "spawn.h"
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
  /* the same for the whole run: found once (two system calls each time
   * were two of a cell's dozen) */
  static struct isolate_limits def;
  static int known;
  if(!known) {
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    struct rlimit rl;
    memset(&def, 0, sizeof(def));
    if(pages > 0 && psz > 0)
      /* 3/4: a runaway cell stops before the OOM killer picks a victim,
       * and a small test guest (1 GiB) still lends its cells most of it */
      def.memory_bytes = (uint64_t)pages * (uint64_t)psz / 4 * 3;
    def.open_files = 4096;
    if(!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_max != RLIM_INFINITY &&
       rl.rlim_max < def.open_files)
      def.open_files = rl.rlim_max;
    def.output_bytes = 64ull << 20;
    known = 1;
  }
  *lim = def;
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

/* Read what the pipe holds now; 1 at EOF (or a read error), -1 past the
 * output limit (r->limit) or out of memory. */
static int drain(int fd, struct isolate_result *r, size_t *cap,
                 const struct isolate_limits *lim)
{
  struct spawn_buf b = { r->payload, r->len, *cap,
                         lim ? lim->output_bytes : 0, SPAWN_FAIL, 0 };
  int rc = spawn_buf_read(fd, &b);
  r->payload = b.p;
  r->len = b.n;
  *cap = b.cap;
  if(rc < 0 && b.truncated)
    r->limit = ISOLATE_LIMIT_OUTPUT;
  return rc;
}

/* One cell's child as the wait loop sees it: its answer pipe and, for a
 * child of this process, its pidfd. */
struct cell {
  pid_t pid;
  int rfd;                     /* read end of the answer pipe */
  int pfd;                     /* pidfd, or -1 (kernel < 5.3) */
};

/* In a cell's child: the socket isolate_ask asks on. */
static int ask_fd = -1;

/* The caller's descriptors that no cell may hold (isolate_hide_fd). */
static int hidden[8];
static int nhidden;
static int hidden_here;   /* done in this process (or the server before it) */

int isolate_hide_fd(int fd)
{
  if(fd < 0 || nhidden == (int)(sizeof(hidden) / sizeof(hidden[0]))) {
    errno = fd < 0 ? EBADF : ENOSPC;
    return -1;
  }
  hidden[nhidden++] = fd;
  return 0;
}

/* /dev/null in each hidden descriptor's place: the number stays taken, so
 * nothing the cell opens gets it (and a write to it goes nowhere). */
void isolate_hide_fds(void)
{
  int i, null;
  if(hidden_here || !nhidden)
    return;
  if((null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
    return;
  for(i = 0; i < nhidden; i++)
    (void)dup3(null, hidden[i], O_CLOEXEC);
  close(null);
  hidden_here = 1;
}

/* In the child (forked by spawn_fork: in its own process group, which
 * the parent kills at the deadline), before its request: the default
 * stop signals.  A spare does this while it waits, off the path from one
 * cell to the next. */
void isolate_child_setup(void)
{
  isolate_hide_fds();
  strata_stop_flag = 0;
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
}

void isolate_run_child(isolate_child_fn child, void *arg, int wfd, int afd,
                       const struct isolate_limits *lim)
{
  int code;
  ask_fd = afd;
  apply_limits(lim);
  code = child(wfd, arg);
  close(wfd);
  fflush(NULL);
  _exit(code);
}

int isolate_full_io(int fd, void *buf, size_t n, int out)
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

static void usage_of(const struct rusage *ru, struct isolate_result *r)
{
  r->cpu_s = (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
             (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
  r->maxrss_kib = ru->ru_maxrss;
}

/* The status of a child that ran to its exit (st: wait4's), by what its
 * exit says. */
static enum isolate_status classify(int st, const struct isolate_limits *lim,
                                    struct isolate_result *r)
{
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
}

/*
 * What the wait loop waits on: the answer pipe and, for a child of this
 * process, its pidfd (and then wait4), for the server's child the
 * server's messages.  One poll of both; 1 once the child has exited (st,
 * ru), 0 not yet, -1 a system error, -2 the server is gone with the
 * cell, -3 the server is gone and the cell never started.
 */
struct waiter {
  struct cell *c;
  struct isolate_server *srv;   /* NULL: a child of this process */
  uint64_t seq;                 /* srv: the cell's number */
  uint64_t start;               /* when it started; 0: queued (srv) */
  uint64_t end;                 /* when it was reaped */
  int killed;                   /* the kill was asked for */
};

static int child_exited(struct waiter *w, int ready, int *st,
                        struct rusage *ru)
{
  int rc;
  if(w->srv) {
    struct isolate_server *s = w->srv;
    struct srv_rep rep;
    if(ready && s->sock >= 0 && forkserver_pump(s) < 0)
      forkserver_lost(s);
    while(forkserver_note_take(s, w->seq, &rep)) {
      if(rep.op == SRV_STARTED) {
        w->start = rep.at_ns;
        w->c->pid = rep.pid;
        continue;
      }
      if(rep.err) {
        errno = rep.err;
        return -1;
      }
      *st = rep.status;
      *ru = rep.ru;
      w->end = rep.at_ns;
      return 1;
    }
    return s->sock >= 0 ? 0 : w->start ? -2 : -3;
  }
  rc = spawn_reap(w->c->pid, 0, st, ru);
  if(rc == 1)
    w->end = strata_now_ns();
  return rc;
}

/* End the child (and its group) now; the wait goes on until it exited.
 * all: a stop, and the server drops every cell queued too. */
static void kill_child(struct waiter *w, int all)
{
  if(w->killed)
    return;
  w->killed = 1;
  if(w->srv) {
    struct srv_req h;
    memset(&h, 0, sizeof(h));
    h.op = SRV_KILL;
    h.seq = w->seq;
    h.all = all;
    if(w->srv->sock >= 0 && forkserver_send(w->srv->sock, &h, NULL, NULL, 0))
      forkserver_lost(w->srv);
    return;
  }
  spawn_kill(w->c->pid, SIGKILL);
}

/*
 * The parent's end of the ask socket: questions come in as frames (a
 * 32-bit length, then the bytes), one at a time; each is answered with a
 * frame, written as the socket takes it.  Never blocks: a cell that sends
 * half a question or never reads its answer only runs into its deadline.
 */
struct asker {
  int fd;                      /* -1: none, or the child closed it */
  char *in;
  size_t inlen, incap;
  char *out;                   /* the answer being written, with its length */
  size_t outlen, outoff;
};

static int ask_frame_len(const struct asker *a, uint32_t *n)
{
  if(a->inlen < 4)
    return 0;
  memcpy(n, a->in, 4);
  return 1;
}

/* Read, answer, write what can be; -1: a question past the output limit. */
static int ask_service(struct asker *a, short revents,
                       const struct isolate_hooks *hooks,
                       const struct isolate_limits *lim)
{
  uint32_t n;
  if(a->fd < 0)
    return 0;
  if(!a->out && (revents & (POLLIN | POLLHUP | POLLERR))) {
    for(;;) {
      ssize_t k;
      if(a->incap - a->inlen < 65536) {
        size_t c = a->incap ? a->incap * 2 : 65536;
        char *p = realloc(a->in, c);
        if(!p)
          return -1;
        a->in = p;
        a->incap = c;
      }
      k = read(a->fd, a->in + a->inlen, a->incap - a->inlen);
      if(k > 0) {
        a->inlen += (size_t)k;
        if(lim && lim->output_bytes && a->inlen > lim->output_bytes + 4)
          return -1;
        continue;
      }
      if(k < 0 && errno == EINTR)
        continue;
      if(k == 0 || errno != EAGAIN)
        a->fd = -1;   /* the child closed it (or it broke): no more */
      break;
    }
  }
  if(!a->out && ask_frame_len(a, &n) && a->inlen >= 4 + (size_t)n) {
    char *reply = NULL;
    size_t rlen = 0;
    uint32_t rn;
    hooks->ask(a->in + 4, n, &reply, &rlen, hooks->arg);
    rn = rlen > UINT32_MAX ? UINT32_MAX : (uint32_t)rlen;
    a->out = malloc(4 + (size_t)rn);
    if(!a->out) {
      free(reply);
      return -1;
    }
    memcpy(a->out, &rn, 4);
    if(rn)
      memcpy(a->out + 4, reply, rn);
    free(reply);
    a->outlen = 4 + (size_t)rn;
    a->outoff = 0;
    memmove(a->in, a->in + 4 + n, a->inlen - 4 - n);
    a->inlen -= 4 + (size_t)n;
  }
  while(a->out && a->fd >= 0) {
    ssize_t k = send(a->fd, a->out + a->outoff, a->outlen - a->outoff,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if(k > 0) {
      a->outoff += (size_t)k;
      if(a->outoff == a->outlen) {
        free(a->out);
        a->out = NULL;
      }
      continue;
    }
    if(k < 0 && (errno == EINTR))
      continue;
    if(k < 0 && errno != EAGAIN)
      a->fd = -1;
    break;
  }
  return 0;
}

int isolate_ask(const char *q, size_t len, char **reply, size_t *rlen)
{
  uint32_t n;
  char *p;
  *reply = NULL;
  *rlen = 0;
  if(ask_fd < 0 || len > UINT32_MAX) {
    errno = ask_fd < 0 ? ENOTCONN : EMSGSIZE;
    return -1;
  }
  n = (uint32_t)len;
  if(isolate_full_io(ask_fd, &n, 4, 1) ||
     isolate_full_io(ask_fd, (void *)q, len, 1) ||
     isolate_full_io(ask_fd, &n, 4, 0))
    return -1;
  p = malloc((size_t)n + 1);
  if(!p)
    return -1;
  if(isolate_full_io(ask_fd, p, n, 0)) {
    free(p);
    return -1;
  }
  p[n] = '\0';
  *reply = p;
  *rlen = n;
  return 0;
}

/*
 * The answer pipe is read once the child has exited or, for a cell that
 * runs longer than this, while it runs (an answer larger than the pipe
 * holds waits for that).  A quick cell's answer is read with its exit:
 * one wake-up of this process per cell, not one for its answer, one for
 * its end of the pipe and one for its exit.
 */
#define ANSWER_READ_NS 2000000ull

/* After the wait: the result by how it ended (rc: child_exited's; why:
 * what a kill was for), the rest of the answer read, what the child left
 * in its group killed. */
static enum isolate_status settle(struct waiter *w, int rc, int eof, int st,
                                  const struct rusage *ru,
                                  enum isolate_status why, size_t *cap,
                                  const struct isolate_limits *lim,
                                  struct isolate_result *r)
{
  struct cell *c = w->c;
  if(rc == -3) {
    errno = ESRCH;   /* never started: the caller may run it elsewhere */
    return r->status = ISOLATE_SYSERR;
  }
  if(rc == -2) {
    /* the server died with the cell: its exit status died too */
    if(c->pid > 0)
      spawn_kill_group(c->pid, SIGKILL);
    r->status = ISOLATE_CRASHED;
    r->lost = 1;
    return r->status;
  }
  if(rc < 0) {
    int e = errno;
    if(!w->srv)
      spawn_kill_group(c->pid, SIGKILL);
    errno = e;
    return r->status = ISOLATE_SYSERR;
  }
  if(!eof && !w->killed && drain(c->rfd, r, cap, lim) < 0 && r->limit)
    why = ISOLATE_LIMIT;
  if(!w->srv)
    spawn_kill_group(c->pid, SIGKILL);  /* leftovers the child started */
  usage_of(ru, r);
  r->started_ns = w->start;
  r->exited_ns = w->end;
  if(why != ISOLATE_OK)
    return r->status = why;
  return classify(st, lim, r);
}


/* Wait for the cell's answer and exit under the deadline (counted from
 * w->start, once the cell has started); classify. */
static enum isolate_status wait_cell(struct waiter *w, double timeout_s,
                                     const struct isolate_limits *lim,
                                     const struct isolate_hooks *hooks,
                                     struct asker *a,
                                     struct isolate_result *r)
{
  struct cell *c = w->c;
  int eof = 0, st = 0, rc = 0;
  int tick_ms = hooks && hooks->tick ? hooks->tick_ms : 0;
  size_t cap = 0;
  uint64_t last_tick = strata_now_ns();
  enum isolate_status why = ISOLATE_OK;   /* what the kill was for */
  struct rusage ru;

  memset(&ru, 0, sizeof(ru));
  (void)fcntl(c->rfd, F_SETFL, O_NONBLOCK);
  if(a->fd >= 0)
    (void)fcntl(a->fd, F_SETFL, O_NONBLOCK);
  /* Until the child has exited and its answer is read (or EOF).  The
   * child may exit while something it started keeps the pipe open: its
   * exit, not EOF, ends the wait. */
  for(;;) {
    struct pollfd p[3];
    int np = 0, wait_ms = 100, ready = 0, k, ai = -1, wi = -1, ri = -1;
    uint64_t now = strata_now_ns();
    uint64_t ran = w->start && now > w->start ? now - w->start : 0;
    double elapsed = (double)ran / 1e9;

    /* what the server said already (read while waiting for another
     * cell), or that it is gone */
    if(w->srv && (rc = child_exited(w, 0, &st, &ru)))
      break;
    if(!w->killed && strata_stop_flag)
      why = ISOLATE_INTERRUPTED, kill_child(w, 1);
    if(!w->killed && timeout_s > 0 && w->start && elapsed >= timeout_s)
      why = ISOLATE_TIMEOUT, kill_child(w, 0);
    if(tick_ms > 0 && (now - last_tick) / 1000000 >= (uint64_t)tick_ms) {
      last_tick = now;
      hooks->tick(elapsed, hooks->arg);
    }
    if(!w->killed && timeout_s > 0 && w->start) {
      double left_ms = (timeout_s - elapsed) * 1e3 + 1;
      if(left_ms < wait_ms)
        wait_ms = (int)left_ms;
    }
    if(!eof && (w->killed || ran >= ANSWER_READ_NS)) {
      ri = np;
      p[np++] = (struct pollfd){ .fd = c->rfd, .events = POLLIN };
    }
    else if(!eof && w->start) {
      int ms = (int)((ANSWER_READ_NS - ran) / 1000000) + 1;
      if(ms < wait_ms)
        wait_ms = ms;
    }
    if(a->fd >= 0 && !w->killed) {
      ai = np;
      p[np++] = (struct pollfd){ .fd = a->fd,
                                 .events = a->out ? POLLOUT : POLLIN };
    }
    if(w->srv && w->srv->sock >= 0) {
      wi = np;
      p[np++] = (struct pollfd){ .fd = w->srv->sock, .events = POLLIN };
    }
    else if(!w->srv && c->pfd >= 0) {
      wi = np;
      p[np++] = (struct pollfd){ .fd = c->pfd, .events = POLLIN };
    }
    else if(!w->srv && eof)
      wait_ms = 1;  /* no pidfd (kernel < 5.3): poll for the exit */
    k = np ? poll(p, (nfds_t)np, wait_ms) : poll(NULL, 0, wait_ms);
    if(k < 0 && errno != EINTR) {
      why = ISOLATE_SYSERR;
      kill_child(w, 0);
    }
    if(ri >= 0 && k > 0 && p[ri].revents) {
      int d = drain(c->rfd, r, &cap, lim);
      if(d < 0 && !w->killed) {
        why = r->limit ? ISOLATE_LIMIT : ISOLATE_SYSERR;
        kill_child(w, 0);
      }
      eof = d != 0;
    }
    if(ai >= 0 && k > 0 && p[ai].revents &&
       ask_service(a, p[ai].revents, hooks, lim) < 0 && !w->killed) {
      why = ISOLATE_LIMIT;
      r->limit = ISOLATE_LIMIT_OUTPUT;
      kill_child(w, 0);
    }
    ready = k > 0 && wi >= 0 && (p[wi].revents & (POLLIN | POLLHUP));
    if((!w->srv || ready) && (rc = child_exited(w, 1, &st, &ru)))
      break;
  }
  return settle(w, rc, eof, st, &ru, why, &cap, lim, r);
}

static void asker_end(struct asker *a, int fd)
{
  if(fd >= 0)
    close(fd);
  free(a->in);
  free(a->out);
}

/* The ask socket's two ends, when the caller answers questions. */
static int ask_pair(const struct isolate_hooks *hooks, int sv[2])
{
  sv[0] = sv[1] = -1;
  if(!hooks || !hooks->ask)
    return 0;
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
}

enum isolate_status isolate_run(isolate_child_fn child, void *child_arg,
                                double timeout_s,
                                const struct isolate_limits *lim,
                                const struct isolate_hooks *hooks,
                                struct isolate_result *r)
{
  int fds[2], av[2];
  struct cell c = { 0, -1, -1 };
  struct waiter w = { &c, NULL, 0, 0, 0, 0 };
  struct asker a = { -1, NULL, 0, 0, NULL, 0, 0 };

  memset(r, 0, sizeof(*r));
  if(pipe2(fds, O_CLOEXEC))
    return r->status = ISOLATE_SYSERR;
  if(ask_pair(hooks, av)) {
    close(fds[0]);
    close(fds[1]);
    return r->status = ISOLATE_SYSERR;
  }
  fflush(NULL);
  w.start = strata_now_ns();
  c.pid = spawn_fork();
  if(c.pid < 0) {
    close(fds[0]);
    close(fds[1]);
    asker_end(&a, av[0]);
    asker_end(&a, av[1]);
    return r->status = ISOLATE_SYSERR;
  }
  if(c.pid == 0) {
    close(fds[0]);
    if(av[0] >= 0)
      close(av[0]);
    isolate_child_setup();
    isolate_run_child(child, child_arg, fds[1], av[1], lim);
  }
  close(fds[1]);
  if(av[1] >= 0)
    close(av[1]);
  c.rfd = fds[0];
  c.pfd = spawn_pidfd(c.pid);
  a.fd = av[0];
  wait_cell(&w, timeout_s, lim, hooks, &a, r);
  close(c.rfd);
  if(c.pfd >= 0)
    close(c.pfd);
  asker_end(&a, av[0]);
  return r->status;
}

enum isolate_status isolate_server_wait(struct isolate_pending *p,
                                        double timeout_s,
                                        const struct isolate_limits *lim,
                                        const struct isolate_hooks *hooks,
                                        struct isolate_result *r)
{
  struct cell c = { 0, p->rfd, -1 };
  struct waiter w = { &c, p->s, p->seq, 0, 0, 0 };
  struct asker a = { p->afd, NULL, 0, 0, NULL, 0, 0 };

  memset(r, 0, sizeof(*r));
  /* the server gone after the cell started: it may have run (and may
   * still): it is this cell's crash (wait_cell says lost), never run a
   * second time; gone before: ESRCH, nothing ran */
  wait_cell(&w, timeout_s, lim, hooks, &a, r);
  close(p->rfd);
  asker_end(&a, p->afd);
  free(p);
  return r->status;
}

void isolate_pending_free(struct isolate_pending *p)
{
  close(p->rfd);
  if(p->afd >= 0)
    close(p->afd);
  free(p);
}

void isolate_server_drop(struct isolate_pending *p)
{
  struct isolate_result r;
  struct cell c = { 0, p->rfd, -1 };
  struct waiter w = { &c, p->s, p->seq, 0, 0, 0 };
  kill_child(&w, 0);   /* then the wait reads its exit */
  isolate_server_wait(p, 0, NULL, NULL, &r);
  free(r.payload);
}

enum isolate_status isolate_server_run(struct isolate_server *s,
                                       const char *req, size_t len,
                                       double timeout_s,
                                       const struct isolate_limits *lim,
                                       const struct isolate_hooks *hooks,
                                       struct isolate_result *r)
{
  struct isolate_pending *p = isolate_server_send(s, req, len, lim,
                                                  hooks && hooks->ask);
  if(!p) {
    memset(r, 0, sizeof(*r));
    return r->status = ISOLATE_SYSERR;
  }
  return isolate_server_wait(p, timeout_s, lim, hooks, r);
}
