/*
 * fleet.c - a group of child processes read line by line (fleet.h).
 * One poll loop over every child's stdout and stderr (and stdin while
 * there is input left to write): a launcher reads N nodes' results as
 * they arrive, without a thread per node and without blocking on the
 * slowest one.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata.h"
#include "fleet.h"

int fleet_spawn(struct fleet_group *g, char *const argv[], char *const envp[],
                const char *in, size_t in_len)
{
  struct spawn_cmd c = { argv, envp, NULL, 0 };
  struct spawn_proc sp;
  struct fleet_proc *p;

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
  for(int s = 0; s < 2; s++) {
    p->s[s].b.max = FLEET_MAX_LINE;   /* then a line is handed out cut */
    p->s[s].b.full = SPAWN_HOLD;
  }
  if(in_len) {
    p->in = malloc(in_len);
    if(!p->in)
      return -1;
    memcpy(p->in, in, in_len);
    p->in_len = in_len;
  }
  /* a child that exits before reading its stdin must not kill us */
  (void)signal(SIGPIPE, SIG_IGN);
  if(spawn_exec(&c, &sp)) {
    int e = errno;
    free(p->in);
    p->in = NULL;
    errno = e;
    return -1;
  }
  p->pid = sp.pid;
  p->in_fd = sp.in;
  p->s[0].fd = sp.out;
  p->s[1].fd = sp.err;
  if(!p->in_len)
    spawn_close(&p->in_fd);
  return g->n++;
}

/* Hand out one line of stream s of child i when it holds one (or its
 * rest at EOF, or FLEET_MAX_LINE bytes without a newline). */
static int take_line(struct fleet_group *g, int i, int s,
                     struct fleet_event *ev)
{
  struct fleet_stream *st = &g->p[i].s[s];
  char *nl;
  size_t n, skip;

  if(!st->b.n)
    return 0;
  nl = memchr(st->b.p, '\n', st->b.n);
  if(nl) {
    n = (size_t)(nl - st->b.p);
    skip = n + 1;
  } else if(st->fd < 0 || st->b.n >= FLEET_MAX_LINE) {
    n = st->b.n < FLEET_MAX_LINE ? st->b.n : FLEET_MAX_LINE;
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
  memcpy(g->line, st->b.p, n);
  g->line[n] = '\0';
  memmove(st->b.p, st->b.p + skip, st->b.n - skip);
  st->b.n -= skip;
  ev->kind = FLEET_EV_LINE;
  ev->proc = i;
  ev->stream = s + 1;
  ev->line = g->line;
  ev->len = n;
  return 1;
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
  spawn_close(&p->in_fd);
  free(p->in);
  p->in = NULL;
}

static void reap(struct fleet_proc *p)
{
  int st;
  if(!p->pid || spawn_reap(p->pid, 0, &st, NULL) != 1)
    return;
  p->pid = 0;
  spawn_code(st, &p->code, &p->signal);
  spawn_close(&p->in_fd);
}

/* A line any child holds, looked for from g->next round (so one chatty
 * child does not starve the others): 1 with *ev, 0 none, -1 no memory. */
static int take_any(struct fleet_group *g, struct fleet_event *ev)
{
  for(int k = 0; k < g->n; k++) {
    int i = (g->next + k) % g->n;
    for(int s = 0; s < 2; s++) {
      int rc = take_line(g, i, s, ev);
      if(rc) {
        g->next = (i + 1) % g->n;
        return rc;
      }
    }
  }
  return 0;
}

/* What one poll waits on, and what was seen while filling it in. */
struct watch {
  struct pollfd *pf;
  int *who;                  /* per pf: child * 3 + (0 out, 1 err, 2 in) */
  int nf;
  int waiting;               /* children to look at again soon */
  int left;                  /* children not yet reported */
};

/* Child i into w: its exit once its output is closed (1 with *ev), its
 * output given up on a drain that took too long (2: look again), or its
 * open fds to poll (0). */
static int watch_child(struct fleet_group *g, int i, struct watch *w,
                       struct fleet_event *ev)
{
  struct fleet_proc *p = &g->p[i];
  w->left++;
  if(p->s[0].fd < 0 && p->s[1].fd < 0) {
    reap(p);
    if(p->pid) {
      w->waiting++;          /* output closed, process still there */
      return 0;
    }
    p->reported = 1;
    ev->kind = FLEET_EV_EXIT;
    ev->proc = i;
    ev->code = p->code;
    ev->signal = p->signal;
    return 1;
  }
  if(p->pid) {
    reap(p);
    if(!p->pid)
      p->reaped_ns = strata_now_ns();
  }
  if(!p->pid && strata_now_ns() - p->reaped_ns > FLEET_DRAIN_NS) {
    /* gone, but a process it left behind holds its output: what was
     * written is handed out; the rest is not waited for */
    spawn_close(&p->s[0].fd);
    spawn_close(&p->s[1].fd);
    return 2;
  }
  if(!p->pid)
    w->waiting++;            /* reaped: poll again soon for the drain */
  for(int s = 0; s < 2; s++)
    if(p->s[s].fd >= 0) {
      w->pf[w->nf] = (struct pollfd){ .fd = p->s[s].fd, .events = POLLIN };
      w->who[w->nf++] = i * 3 + s;
    }
  if(p->in_fd >= 0) {
    w->pf[w->nf] = (struct pollfd){ .fd = p->in_fd, .events = POLLOUT };
    w->who[w->nf++] = i * 3 + 2;
  }
  return 0;
}

/* Poll what w holds for up to wait_ms; read and feed what is ready.
 * 0, or -1 with errno. */
static int pump(struct fleet_group *g, struct watch *w, int wait_ms)
{
  int r = poll(w->pf, (nfds_t)w->nf, wait_ms);
  if(r < 0)
    return -1;
  for(int k = 0; k < w->nf && r > 0; k++) {
    struct fleet_proc *p = &g->p[w->who[k] / 3];
    int s = w->who[k] % 3, rc;
    if(!w->pf[k].revents)
      continue;
    if(s == 2) {
      feed(p);
      continue;
    }
    rc = spawn_buf_read(p->s[s].fd, &p->s[s].b);
    if(rc < 0)
      return -1;
    if(rc)
      spawn_close(&p->s[s].fd);  /* EOF, or an error that ends it */
  }
  return 0;
}

/* How long one poll waits: until the caller's end, but at most 20 ms
 * while a child is to be looked at again and 100 ms otherwise (an exit
 * is no poll event while a process left behind holds the output). */
static int poll_ms(int timeout_ms, uint64_t end, int waiting)
{
  int cap = waiting ? 20 : 100;
  if(timeout_ms < 0)
    return cap;
  return spawn_poll_ms(end, strata_now_ns(), cap);
}

int fleet_next(struct fleet_group *g, int timeout_ms, struct fleet_event *ev)
{
  uint64_t end = strata_now_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms)
                 * 1000000ull;
  struct watch w = { 0 };
  int rc = 0;

  memset(ev, 0, sizeof(*ev));
  w.pf = calloc((size_t)g->n * 3 + 1, sizeof(*w.pf));
  w.who = calloc((size_t)g->n * 3 + 1, sizeof(*w.who));
  if(!w.pf || !w.who) {
    rc = -1;
    goto out;
  }
  for(;;) {
    int again = 0;
    if((rc = take_any(g, ev)))
      goto out;
    w.nf = w.waiting = w.left = 0;
    for(int i = 0; i < g->n && !again; i++) {
      if(g->p[i].reported)
        continue;
      rc = watch_child(g, i, &w, ev);
      if(rc == 1)
        goto out;
      again = rc == 2;
    }
    rc = 0;
    if(again)
      continue;
    if(!w.left)
      goto out;
    if(pump(g, &w, poll_ms(timeout_ms, end, w.waiting))) {
      rc = -1;
      goto out;
    }
    if(timeout_ms >= 0 && strata_now_ns() >= end) {
      /* lines that arrived in this last poll are still handed out */
      rc = take_any(g, ev);
      goto out;
    }
  }
out:
  free(w.pf);
  free(w.who);
  return rc;
}

void fleet_kill(struct fleet_group *g, int i, int sig)
{
  if(i < 0 || i >= g->n || !g->p[i].pid)
    return;
  spawn_kill_group(g->p[i].pid, sig);
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
      int st;
      spawn_kill_group(p->pid, SIGKILL);
      (void)spawn_reap(p->pid, 1, &st, NULL);
      p->pid = 0;
    }
    spawn_close(&p->in_fd);
    for(int s = 0; s < 2; s++) {
      spawn_close(&p->s[s].fd);
      free(p->s[s].b.p);
    }
    free(p->in);
  }
  free(g->p);
  free(g->line);
  memset(g, 0, sizeof(*g));
}
