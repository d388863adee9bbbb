/*
 * fleet.c - a group of child processes read line by line (fleet.h).
 * One poll loop over every child's stdout and stderr (and stdin while
 * there is input left to write): a launcher reads N nodes' results as
 * they arrive, without a thread per node and without blocking on the
 * slowest one.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "strata.h"
#include "fleet.h"

static void close_fd(int *fd)
{
  if(*fd >= 0) {
    (void)close(*fd);
    *fd = -1;
  }
}

static int nonblock(int fd)
{
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int fleet_spawn(struct fleet_group *g, char *const argv[], char *const envp[],
                const char *in, size_t in_len)
{
  int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
  struct fleet_proc *p;
  pid_t pid;
  int e;

  if(g->n == g->cap) {
    int cap = g->cap ? g->cap * 2 : 8;
    struct fleet_proc *np = realloc(g->p, (size_t)cap * sizeof(*np));
    if(!np)
      return -1;
    g->p = np;
    g->cap = cap;
  }
  p = &g->p[g->n];
  memset(p, 0, sizeof(*p));
  p->in_fd = p->s[0].fd = p->s[1].fd = -1;
  if(in_len) {
    p->in = malloc(in_len);
    if(!p->in)
      return -1;
    memcpy(p->in, in, in_len);
    p->in_len = in_len;
  }
  if(pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
     pipe2(perr, O_CLOEXEC))
    goto fail;
  /* a child that exits before reading its stdin must not kill us */
  (void)signal(SIGPIPE, SIG_IGN);
  pid = fork();
  if(pid < 0)
    goto fail;
  if(pid == 0) {
    sigset_t none;
    (void)setpgid(0, 0);
    (void)signal(SIGPIPE, SIG_DFL);
    (void)signal(SIGINT, SIG_DFL);
    (void)signal(SIGTERM, SIG_DFL);
    sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    if(dup2(pin[0], 0) < 0 || dup2(pout[1], 1) < 0 || dup2(perr[1], 2) < 0)
      _exit(127);
    if(envp)
      execvpe(argv[0], argv, envp);
    else
      execvp(argv[0], argv);
    _exit(127);
  }
  (void)setpgid(pid, pid);
  (void)close(pin[0]);
  (void)close(pout[1]);
  (void)close(perr[1]);
  p->pid = pid;
  p->in_fd = pin[1];
  p->s[0].fd = pout[0];
  p->s[1].fd = perr[0];
  (void)nonblock(p->in_fd);
  (void)nonblock(p->s[0].fd);
  (void)nonblock(p->s[1].fd);
  if(!p->in_len)
    close_fd(&p->in_fd);
  return g->n++;

fail:
  e = errno;
  close_fd(&pin[0]);
  close_fd(&pin[1]);
  close_fd(&pout[0]);
  close_fd(&pout[1]);
  close_fd(&perr[0]);
  close_fd(&perr[1]);
  free(p->in);
  p->in = NULL;
  errno = e;
  return -1;
}

/* Hand out one line of stream s of child i when it holds one (or its
 * rest at EOF, or FLEET_MAX_LINE bytes without a newline). */
static int take_line(struct fleet_group *g, int i, int s,
                     struct fleet_event *ev)
{
  struct fleet_stream *st = &g->p[i].s[s];
  char *nl;
  size_t n, skip;

  if(!st->len)
    return 0;
  nl = memchr(st->buf, '\n', st->len);
  if(nl) {
    n = (size_t)(nl - st->buf);
    skip = n + 1;
  } else if(st->fd < 0 || st->len >= FLEET_MAX_LINE) {
    n = st->len < FLEET_MAX_LINE ? st->len : FLEET_MAX_LINE;
    skip = n;
  } else {
    return 0;
  }
  if(n + 1 > g->line_cap) {
    char *b = realloc(g->line, n + 1);
    if(!b)
      return -1;
    g->line = b;
    g->line_cap = n + 1;
  }
  memcpy(g->line, st->buf, n);
  g->line[n] = '\0';
  memmove(st->buf, st->buf + skip, st->len - skip);
  st->len -= skip;
  ev->kind = FLEET_EV_LINE;
  ev->proc = i;
  ev->stream = s + 1;
  ev->line = g->line;
  ev->len = n;
  return 1;
}

/* Read what stream s of child i has now; EOF closes it. */
static int fill(struct fleet_stream *st)
{
  for(;;) {
    ssize_t r;
    if(st->cap - st->len < 65536) {
      size_t cap = st->cap ? st->cap * 2 : 65536;
      char *b = realloc(st->buf, cap);
      if(!b)
        return -1;
      st->buf = b;
      st->cap = cap;
    }
    r = read(st->fd, st->buf + st->len, st->cap - st->len);
    if(r > 0) {
      st->len += (size_t)r;
      if(st->len >= FLEET_MAX_LINE)
        return 0;
      continue;
    }
    if(r < 0 && (errno == EAGAIN || errno == EINTR))
      return 0;
    close_fd(&st->fd);       /* EOF, or an error that ends the stream */
    return 0;
  }
}

static void feed(struct fleet_proc *p)
{
  while(p->in_off < p->in_len) {
    ssize_t w = write(p->in_fd, p->in + p->in_off, p->in_len - p->in_off);
    if(w > 0) {
      p->in_off += (size_t)w;
      continue;
    }
    if(w < 0 && (errno == EAGAIN || errno == EINTR))
      return;
    break;                   /* EPIPE: the child stopped reading */
  }
  close_fd(&p->in_fd);
  free(p->in);
  p->in = NULL;
}

static void reap(struct fleet_proc *p)
{
  int st;
  pid_t r;
  if(!p->pid)
    return;
  r = waitpid(p->pid, &st, WNOHANG);
  if(r != p->pid)
    return;
  p->pid = 0;
  if(WIFSIGNALED(st)) {
    p->signal = WTERMSIG(st);
    p->code = 128 + p->signal;
  } else {
    p->code = WEXITSTATUS(st);
  }
  close_fd(&p->in_fd);
}

int fleet_next(struct fleet_group *g, int timeout_ms, struct fleet_event *ev)
{
  uint64_t end = strata_now_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms)
                 * 1000000ull;
  struct pollfd *pf = NULL;
  int *who = NULL, rc = 0;

  memset(ev, 0, sizeof(*ev));
  pf = calloc((size_t)g->n * 3 + 1, sizeof(*pf));
  who = calloc((size_t)g->n * 3 + 1, sizeof(*who));
  if(!pf || !who) {
    rc = -1;
    goto out;
  }
  for(;;) {
    int nf = 0, waiting = 0, left = 0, wait_ms, k_again = 0;
    for(int k = 0; k < g->n; k++) {
      int i = (g->next + k) % g->n;
      for(int s = 0; s < 2; s++) {
        rc = take_line(g, i, s, ev);
        if(rc) {
          g->next = (i + 1) % g->n;
          goto out;
        }
      }
    }
    for(int i = 0; i < g->n; i++) {
      struct fleet_proc *p = &g->p[i];
      if(p->reported)
        continue;
      left++;
      if(p->s[0].fd < 0 && p->s[1].fd < 0) {
        reap(p);
        if(!p->pid) {
          p->reported = 1;
          ev->kind = FLEET_EV_EXIT;
          ev->proc = i;
          ev->code = p->code;
          ev->signal = p->signal;
          rc = 1;
          goto out;
        }
        waiting++;         /* output closed, process still there */
        continue;
      }
      if(p->pid) {
        reap(p);
        if(!p->pid)
          p->reaped_ns = strata_now_ns();
      }
      if(!p->pid && strata_now_ns() - p->reaped_ns > FLEET_DRAIN_NS) {
        /* gone, but a process it left behind holds its output: what was
         * written is handed out above; the rest is not waited for */
        close_fd(&p->s[0].fd);
        close_fd(&p->s[1].fd);
        k_again = 1;
        break;
      }
      if(!p->pid)
        waiting++;         /* reaped: poll again soon for the drain */
      for(int s = 0; s < 2; s++)
        if(p->s[s].fd >= 0) {
          pf[nf].fd = p->s[s].fd;
          pf[nf].events = POLLIN;
          who[nf++] = i * 3 + s;
        }
      if(p->in_fd >= 0) {
        pf[nf].fd = p->in_fd;
        pf[nf].events = POLLOUT;
        who[nf++] = i * 3 + 2;
      }
    }
    if(k_again)
      continue;
    if(!left) {
      rc = 0;
      goto out;
    }
    if(timeout_ms < 0) {
      wait_ms = -1;
    } else {
      uint64_t now = strata_now_ns();
      wait_ms = now >= end ? 0 : (int)((end - now + 999999) / 1000000);
    }
    if(waiting && (wait_ms < 0 || wait_ms > 20))
      wait_ms = 20;          /* poll the unreaped ones again soon */
    else if(wait_ms < 0 || wait_ms > 100)
      wait_ms = 100;         /* an exit is no poll event when a process
                              * left behind holds the output: look */
    {
      int r = poll(pf, (nfds_t)nf, wait_ms);
      if(r < 0) {
        rc = -1;
        goto out;
      }
      for(int k = 0; k < nf && r > 0; k++) {
        struct fleet_proc *p = &g->p[who[k] / 3];
        int s = who[k] % 3;
        if(!pf[k].revents)
          continue;
        if(s == 2) {
          feed(p);
        } else if(fill(&p->s[s])) {
          rc = -1;
          goto out;
        }
      }
    }
    if(timeout_ms >= 0 && strata_now_ns() >= end) {
      /* lines that arrived in this last poll are still handed out */
      for(int i = 0; i < g->n; i++)
        for(int s = 0; s < 2; s++) {
          rc = take_line(g, i, s, ev);
          if(rc)
            goto out;
        }
      rc = 0;
      goto out;
    }
  }
out:
  free(pf);
  free(who);
  return rc;
}

void fleet_kill(struct fleet_group *g, int i, int sig)
{
  if(i < 0 || i >= g->n || !g->p[i].pid)
    return;
  (void)kill(-g->p[i].pid, sig);
}

int fleet_running(const struct fleet_group *g)
{
  int n = 0;
  for(int i = 0; i < g->n; i++)
    if(!g->p[i].reported)
      n++;
  return n;
}

void fleet_free(struct fleet_group *g)
{
  for(int i = 0; i < g->n; i++) {
    struct fleet_proc *p = &g->p[i];
    if(p->pid) {
      (void)kill(-p->pid, SIGKILL);
      (void)waitpid(p->pid, NULL, 0);
      p->pid = 0;
    }
    close_fd(&p->in_fd);
    for(int s = 0; s < 2; s++) {
      close_fd(&p->s[s].fd);
      free(p->s[s].buf);
    }
    free(p->in);
  }
  free(g->p);
  free(g->line);
  memset(g, 0, sizeof(*g));
}
