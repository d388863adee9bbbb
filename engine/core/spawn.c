/*
 * spawn.c - start a child process and watch it (spawn.h): the fork, the
 * process group, the pidfd, the exec with its pipes, the captured output
 * and the exit code, written once for the cells, sys.run and the fleet.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"
#include "strata.h"

pid_t spawn_fork(void)
{
  pid_t pid = fork();
  if(pid == 0)
    (void)setpgid(0, 0);
  else if(pid > 0)
    (void)setpgid(pid, pid);
  return pid;
}

int spawn_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

void spawn_kill_group(pid_t pid, int sig)
{
  if(pid > 0)
    (void)kill(-pid, sig);
}

void spawn_kill(pid_t pid, int sig)
{
  if(pid <= 0)
    return;
  (void)kill(-pid, sig);
  (void)kill(pid, sig);
}

int spawn_reap(pid_t pid, int block, int *status, struct rusage *ru)
{
  for(;;) {
    pid_t k = wait4(pid, status, block ? 0 : WNOHANG, ru);
    if(k == pid)
      return 1;
    if(k == 0)
      return 0;
    if(errno != EINTR)
      return -1;
  }
}

void spawn_code(int status, int *code, int *sig)
{
  *sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  *code = *sig ? 128 + *sig : WEXITSTATUS(status);
}

void spawn_close(int *fd)
{
  if(*fd >= 0)
    (void)close(*fd);
  *fd = -1;
}

/* In the child: the command's fds in 0-2, then exec; an exec failure's
 * errno goes back on errpipe (close-on-exec: EOF there means it ran). */
static void exec_child(const struct spawn_cmd *c, int in, int out, int err,
                       int errpipe)
{
  sigset_t none;
  int e;
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);
  (void)signal(SIGPIPE, SIG_DFL);
  (void)signal(SIGINT, SIG_DFL);
  (void)signal(SIGTERM, SIG_DFL);
  if(dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
    goto fail;
  if(c->cwd && chdir(c->cwd))
    goto fail;
  if(c->envp)
    execvpe(c->argv[0], c->argv, c->envp);
  else
    execvp(c->argv[0], c->argv);
fail:
  e = errno;
  (void)!write(errpipe, &e, sizeof(e));
  _exit(127);
}

static void nonblock(int fd)
{
  int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
  if(fl >= 0)
    (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int spawn_exec(const struct spawn_cmd *c, struct spawn_proc *p)
{
  int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
  int pex[2] = { -1, -1 }, e, i;
  ssize_t nr;

  memset(p, 0, sizeof(*p));
  p->in = p->out = p->err = -1;
  if(pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
     pipe2(perr, O_CLOEXEC) || pipe2(pex, O_CLOEXEC))
    goto fail;
  p->pid = spawn_fork();
  if(p->pid < 0)
    goto fail;
  if(p->pid == 0) {
    int in = c->null_stdin ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
    exec_child(c, in >= 0 ? in : pin[0], pout[1], perr[1], pex[1]);
  }
  spawn_close(&pin[0]);
  spawn_close(&pout[1]);
  spawn_close(&perr[1]);
  spawn_close(&pex[1]);
  if(c->null_stdin)
    spawn_close(&pin[1]);
  while((nr = read(pex[0], &e, sizeof(e))) < 0 && errno == EINTR)
    ;
  if(nr == (ssize_t)sizeof(e))
    p->exec_errno = e;
  spawn_close(&pex[0]);
  p->in = pin[1];
  p->out = pout[0];
  p->err = perr[0];
  nonblock(p->in);
  nonblock(p->out);
  nonblock(p->err);
  return 0;
fail:
  e = errno;
  for(i = 0; i < 2; i++) {
    spawn_close(&pin[i]);
    spawn_close(&pout[i]);
    spawn_close(&perr[i]);
    spawn_close(&pex[i]);
  }
  p->pid = 0;
  errno = e;
  return -1;
}

int spawn_buf_add(struct spawn_buf *b, const char *d, size_t n)
{
  if(b->max && b->n + n > b->max) {
    b->truncated = 1;
    if(b->full == SPAWN_FAIL) {
      errno = EFBIG;
      return -1;
    }
    n = b->max - b->n;
  }
  if(strata_reserve(&b->p, &b->cap, b->n + n + 1, 4096)) {
    b->truncated = 1;
    return b->full == SPAWN_DROP ? 0 : -1;
  }
  if(n)
    memcpy(b->p + b->n, d, n);
  b->n += n;
  b->p[b->n] = '\0';
  return 0;
}

int spawn_buf_read(int fd, struct spawn_buf *b)
{
  for(;;) {
    char buf[65536];
    size_t want = sizeof(buf);
    ssize_t k;
    if(b->full == SPAWN_HOLD && b->max) {
      if(b->n >= b->max)
        return 0;
      if(b->max - b->n < want)
        want = b->max - b->n;
    }
    k = read(fd, buf, want);
    if(k > 0) {
      if(spawn_buf_add(b, buf, (size_t)k))
        return -1;
      continue;
    }
    if(k < 0 && errno == EINTR)
      continue;
    return k < 0 && errno == EAGAIN ? 0 : 1;
  }
}

int spawn_poll_ms(uint64_t deadline, uint64_t now, int cap_ms)
{
  uint64_t left;
  if(!deadline)
    return cap_ms;
  if(now >= deadline)
    return 0;
  left = (deadline - now + 999999) / 1000000;
  return cap_ms >= 0 && left > (uint64_t)cap_ms ? cap_ms : (int)left;
}
