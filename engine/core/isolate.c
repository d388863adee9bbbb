/*
 * isolate.c - fork a child with its own process group, read its answer
 * from a pipe under a deadline, and reap it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "isolate.h"
#include "strata.h"

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
  }
  return "unknown";
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

/* Kill the child's group, then reap it so no zombie is left behind. */
static void kill_and_reap(pid_t pid)
{
  int st;
  (void)kill(-pid, SIGKILL);
  (void)kill(pid, SIGKILL);
  while(waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
}

enum isolate_status isolate_run(isolate_child_fn child, void *child_arg,
                                double timeout_s, isolate_tick_fn tick,
                                void *tick_arg, int tick_ms,
                                struct isolate_result *r)
{
  int fds[2];
  pid_t pid;
  size_t cap = 0;
  uint64_t start = strata_now_ns(), last_tick = start;
  int st = 0, eof = 0;

  memset(r, 0, sizeof(*r));
  if(pipe(fds))
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
    code = child(fds[1], child_arg);
    close(fds[1]);
    fflush(NULL);
    _exit(code);
  }
  (void)setpgid(pid, pid);  /* both sides set it: no race on kill(-pid) */
  close(fds[1]);

  while(!eof) {
    struct pollfd p = { .fd = fds[0], .events = POLLIN };
    uint64_t now = strata_now_ns();
    double elapsed = (double)(now - start) / 1e9;
    int rc;

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
    rc = poll(&p, 1, 100);
    if(rc < 0 && errno != EINTR)
      break;
    if(rc > 0) {
      char buf[65536];
      ssize_t n = read(fds[0], buf, sizeof(buf));
      if(n > 0) {
        if(append(r, &cap, buf, (size_t)n))
          break;
      }
      else if(n == 0 || errno != EINTR)
        eof = 1;
    }
  }
  close(fds[0]);
  /* EOF: the child closed its end; wait for it, still under the deadline */
  for(;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    double elapsed = (double)(strata_now_ns() - start) / 1e9;
    if(w == pid)
      break;
    if(w < 0 && errno != EINTR) {
      r->status = ISOLATE_SYSERR;
      return r->status;
    }
    if(strata_stop_flag || (timeout_s > 0 && elapsed >= timeout_s)) {
      r->status = strata_stop_flag ? ISOLATE_INTERRUPTED : ISOLATE_TIMEOUT;
      kill_and_reap(pid);
      return r->status;
    }
    usleep(10000);
  }
  (void)kill(-pid, SIGKILL);  /* leftovers the child started */
  if(WIFEXITED(st) && WEXITSTATUS(st) == 0)
    r->status = ISOLATE_OK;
  else {
    r->status = ISOLATE_CRASHED;
    r->term_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  return r->status;

kill:
  close(fds[0]);
  kill_and_reap(pid);
  return r->status;
}
