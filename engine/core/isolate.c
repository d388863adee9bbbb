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
#include <sys/resource.h>
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

static void reap(pid_t pid, int *st, struct rusage *ru)
{
  while(wait4(pid, st, 0, ru) < 0 && errno == EINTR)
    ;
}

/* Kill the child's group, then reap it so no zombie is left behind. */
static void kill_and_reap(pid_t pid, struct isolate_result *r)
{
  int st;
  struct rusage ru;
  (void)kill(-pid, SIGKILL);
  (void)kill(pid, SIGKILL);
  memset(&ru, 0, sizeof(ru));
  reap(pid, &st, &ru);
  r->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
             (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  r->maxrss_kib = ru.ru_maxrss;
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

enum isolate_status isolate_run(isolate_child_fn child, void *child_arg,
                                double timeout_s,
                                const struct isolate_limits *lim,
                                isolate_tick_fn tick, void *tick_arg,
                                int tick_ms, struct isolate_result *r)
{
  int fds[2], pfd = -1, eof = 0, exited = 0, st = 0;
  pid_t pid;
  size_t cap = 0;
  uint64_t start = strata_now_ns(), last_tick = start;
  struct rusage ru;

  memset(r, 0, sizeof(*r));
  memset(&ru, 0, sizeof(ru));
  if(pipe2(fds, O_CLOEXEC))
    return r->status = ISOLATE_SYSERR;
  fflush(NULL);
  pid = fork();
  if(pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return r->status = ISOLATE_SYSERR;
  }
  if(pid == 0) {
    int code;
    close(fds[0]);
    (void)setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    apply_limits(lim);
    code = child(fds[1], child_arg);
    close(fds[1]);
    fflush(NULL);
    _exit(code);
  }
  (void)setpgid(pid, pid);  /* both sides set it: no race on kill(-pid) */
  close(fds[1]);
  (void)fcntl(fds[0], F_SETFL, O_NONBLOCK);
  pfd = pidfd_of(pid);

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
      p[np++] = (struct pollfd){ .fd = fds[0], .events = POLLIN };
    if(pfd >= 0)
      p[np++] = (struct pollfd){ .fd = pfd, .events = POLLIN };
    else if(eof)
      wait_ms = 1;  /* no pidfd (kernel < 5.3): poll for the exit */
    rc = np ? poll(p, (nfds_t)np, wait_ms) : poll(NULL, 0, wait_ms);
    if(rc < 0 && errno != EINTR) {
      r->status = ISOLATE_SYSERR;
      goto kill;
    }
    if(!eof) {
      int d = drain(fds[0], r, &cap, lim);
      if(d < 0) {
        r->status = r->limit ? ISOLATE_LIMIT : ISOLATE_SYSERR;
        goto kill;
      }
      eof = d;
    }
    /* The child may exit while something it started keeps the pipe
     * open: its exit, not EOF, ends the wait. */
    {
      pid_t w = wait4(pid, &st, WNOHANG, &ru);
      if(w == pid)
        exited = 1;
      else if(w < 0 && errno != EINTR) {
        r->status = ISOLATE_SYSERR;
        goto kill;
      }
    }
  }
  if(!eof && drain(fds[0], r, &cap, lim) < 0 && r->limit) {
    r->status = ISOLATE_LIMIT;
    (void)kill(-pid, SIGKILL);
    goto done;
  }
  (void)kill(-pid, SIGKILL);  /* leftovers the child started */
  r->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
             (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  r->maxrss_kib = ru.ru_maxrss;
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
  goto done;

kill:
  kill_and_reap(pid, r);
done:
  close(fds[0]);
  if(pfd >= 0)
    close(pfd);
  return r->status;
}
