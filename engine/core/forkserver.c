/*
 * forkserver.c - the fork server: a child of the runner that forks each
 * cell from a warm copy of itself (a spare forked between cells), kills
 * it at the runner's word and reaps it, and says when each started and
 * exited; and the runner's end of its socket (send a cell, read what the
 * server said).  The cells' API and the wait loop are in isolate.c.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forkserver.h"
#include "spawn.h"
#include "isolate.h"
#include "strata.h"

/* What ps and top call the server's children (a comm is 15 bytes). */
#define CELL_NAME "strata-cell"

/* Send hdr (+ the fds, the answer pipe and the ask socket, as SCM_RIGHTS
 * when fd[0] >= 0; fd[1] may be -1) and the request bytes, in one call
 * when the socket takes them all. */
int forkserver_send(int sock, const struct srv_req *hdr, const int *fd,
                    const char *req, size_t len)
{
  union { char buf[CMSG_SPACE(2 * sizeof(int))]; struct cmsghdr align; } u;
  struct iovec iov[2] = { { (void *)hdr, sizeof(*hdr) },
                          { (void *)req, len } };
  struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
  ssize_t k;
  if(fd && fd[0] >= 0) {
    struct cmsghdr *cm;
    int n = fd[1] >= 0 ? 2 : 1;
    memset(&u, 0, sizeof(u));
    mh.msg_control = u.buf;
    mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
    cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(cm), fd, n * sizeof(int));
  }
  while((k = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  if(k < 0)
    return -1;
  if((size_t)k < sizeof(*hdr)) {
    if(isolate_full_io(sock, (char *)hdr + k, sizeof(*hdr) - (size_t)k, 1))
      return -1;
    k = 0;
  }
  else
    k -= (ssize_t)sizeof(*hdr);
  return (size_t)k < len
           ? isolate_full_io(sock, (void *)(req + k), len - (size_t)k, 1)
           : 0;
}

/* The header (and the fds that came with it, or -1) and what of the
 * request came with it in one call (*got bytes of more); 0, or -1 at EOF.
 * Only where nothing follows the request: a spare's socket. */
static int srv_recv_more(int sock, struct srv_req *hdr, int *fd,
                         char *more, size_t cap, size_t *got)
{
  union { char buf[CMSG_SPACE(2 * sizeof(int))]; struct cmsghdr align; } u;
  struct iovec iov[2] = { { hdr, sizeof(*hdr) }, { more, cap } };
  struct msghdr mh = { .msg_iov = iov, .msg_iovlen = more ? 2 : 1,
                       .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
  struct cmsghdr *cm;
  ssize_t k;
  fd[0] = fd[1] = -1;
  if(got)
    *got = 0;
  while((k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  if(k <= 0)
    return -1;
  for(cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
    if(cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
      size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      memcpy(fd, CMSG_DATA(cm), (n > 2 ? 2 : n) * sizeof(int));
    }
  if((size_t)k < sizeof(*hdr))
    return isolate_full_io(sock, (char *)hdr + k, sizeof(*hdr) - (size_t)k, 0);
  if(got)
    *got = (size_t)k - sizeof(*hdr);
  return 0;
}

/* The header (and the fds that came with it, or -1); 0, or -1 at EOF.
 * Reads no further: what follows may be the next message. */
static int srv_recv(int sock, struct srv_req *hdr, int *fd)
{
  return srv_recv_more(sock, hdr, fd, NULL, 0, NULL);
}

/* Read a FORK's request into *buf (grown as needed); 0, or -1 at EOF. */
static int recv_req(int sock, uint32_t len, char **buf, size_t *cap)
{
  if(len + 1 > *cap) {
    char *p = realloc(*buf, len + 1);
    if(!p)
      return -1;
    *buf = p;
    *cap = len + 1;
  }
  if(isolate_full_io(sock, *buf, len, 0))
    return -1;
  (*buf)[len] = '\0';
  return 0;
}

/* A FORK the server holds: the one running, or one queued behind it. */
struct srv_job {
  struct srv_req h;
  int fd[2];            /* the answer pipe's write end, the ask socket's */
  char *req;
  struct srv_job *next;
};

static void fds_close(const struct srv_job *j)
{
  if(j->fd[0] >= 0)
    close(j->fd[0]);
  if(j->fd[1] >= 0)
    close(j->fd[1]);
}

static void job_free(struct srv_job *j)
{
  fds_close(j);
  free(j->req);
  free(j);
}

/* The server's word on a cell that never ran or whose fork failed. */
static struct srv_rep no_run(uint64_t seq, int err)
{
  struct srv_rep rep;
  memset(&rep, 0, sizeof(rep));
  rep.op = SRV_EXITED;
  rep.seq = seq;
  rep.err = err;
  return rep;
}

/* The server's own state: the cell running (pid 0: none) and the queue. */
struct srv_state {
  pid_t cell;
  uint64_t seq;         /* the running cell's number */
  int cfd;              /* its pidfd */
  /* the child's end of its ask socket, held until its EXITED is sent: the
   * child's exit alone does not wake the runner (end of file on its end),
   * the EXITED does */
  int afd;
  struct srv_job *head, **tail;
};

/* In a child just forked from the server: the fds of other cells the
 * server holds (the running one's pidfd and ask socket end, the queued
 * ones' pipe and socket ends) and its socket to the runner are none of
 * its cell's business. */
static void server_fds_close(const struct srv_state *st, int runner_sock,
                             const struct srv_job *starting)
{
  const struct srv_job *j;
  close(runner_sock);
  if(starting)
    fds_close(starting);
  if(st->cfd >= 0)
    close(st->cfd);
  if(st->afd >= 0)
    close(st->afd);
  for(j = st->head; j; j = j->next)
    fds_close(j);
}

/* What the server passes around: its callbacks, and the child forked
 * ahead of the next request (the spare), if any. */
struct server_ctx {
  isolate_prepare_fn prepare;
  isolate_idle_fn idle;
  isolate_child_fn child;
  void *arg;
  pid_t spare;       /* 0: none */
  int spare_sock;    /* the server's end of the spare's socket */
  pid_t self;        /* the server's pid */
  const struct srv_state *st;   /* the server's cells */
  int runner_sock;   /* the server's socket to the runner */
  const struct srv_job *starting;   /* the cell being handed to a child */
};

/*
 * The spare: forked between cells, it waits for the next request (the
 * header, the answer pipe and the request, forwarded by the server), runs
 * prepare(req) itself (the server runs it too, for the children after
 * this one) and then the cell.  Forking it while the runner takes the
 * last cell's answer in moves the fork off each cell's critical path.
 */
static void spare_main(struct server_ctx *x, int sock, pid_t server)
{
  struct srv_req h;
  char b[4096], *req = b;
  size_t got;
  int fd[2];
  (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
  if(getppid() != server)
    _exit(0);
  (void)prctl(PR_SET_NAME, CELL_NAME);
  isolate_child_setup();
  if(srv_recv_more(sock, &h, fd, b, sizeof(b) - 1, &got) ||
     h.op != SRV_FORK || fd[0] < 0 || got > h.len)
    _exit(0);   /* the server let it go unused */
  if(got < h.len) {   /* a long request: the rest */
    req = malloc((size_t)h.len + 1);
    if(!req || isolate_full_io(sock, req + got, h.len - got, 0))
      _exit(0);
    memcpy(req, b, got);
  }
  req[h.len] = '\0';
  close(sock);
  if(x->prepare)
    x->prepare(req, h.len, &h.lim, 1, x->arg);
  isolate_run_child(x->child, x->arg, fd[0], fd[1], &h.lim);
}

static void spare_start(struct server_ctx *x)
{
  int sv[2];
  if(x->idle)
    x->idle(x->arg);
  if(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
    return;
  fflush(stdout);
  x->spare = spawn_fork();
  if(x->spare == 0) {
    close(sv[0]);
    server_fds_close(x->st, x->runner_sock, x->starting);
    spare_main(x, sv[1], x->self);
  }
  close(sv[1]);
  if(x->spare < 0) {
    x->spare = 0;
    close(sv[0]);
    return;
  }
  x->spare_sock = sv[0];
}

static void spare_drop(struct server_ctx *x)
{
  int st;
  if(!x->spare)
    return;
  close(x->spare_sock);
  (void)kill(x->spare, SIGKILL);
  (void)spawn_reap(x->spare, 1, &st, NULL);
  x->spare = 0;
}

/*
 * Start j (consumed) in the spare, after the npre messages in rep (the
 * last cell's EXITED), all in one write.  STARTED goes to the runner
 * before the child has its request: a cell never runs unannounced, so a
 * runner that lost the server without a STARTED knows nothing ran and may
 * run it elsewhere.  rep has room for npre + 1.  0, or -1: the runner's
 * socket failed.
 */
static int start_job(struct server_ctx *x, struct srv_state *st,
                     struct srv_job *j, int sock, struct srv_rep *rep,
                     int npre)
{
  uint64_t seq = j->h.seq;
  int e = EAGAIN, tries;
  for(tries = 0; tries < 3; tries++) {
    pid_t pid;
    int cfd;
    errno = 0;
    if(!x->spare) {
      x->starting = j;   /* a spare forked now closes its fds */
      spare_start(x);
      x->starting = NULL;
    }
    if(!x->spare) {
      e = errno ? errno : EAGAIN;
      break;
    }
    pid = x->spare;
    if((cfd = spawn_pidfd(pid)) < 0) {
      e = errno;
      break;
    }
    memset(&rep[npre], 0, sizeof(rep[npre]));
    rep[npre].op = SRV_STARTED;
    rep[npre].seq = seq;
    rep[npre].pid = pid;
    rep[npre].at_ns = strata_now_ns();
    if(isolate_full_io(sock, rep, (size_t)(npre + 1) * sizeof(*rep), 1)) {
      close(cfd);
      job_free(j);
      return -1;
    }
    npre = 0;
    if(!forkserver_send(x->spare_sock, &j->h, j->fd, j->req, j->h.len)) {
      close(x->spare_sock);
      x->spare = 0;
      if(x->prepare)
        x->prepare(j->req, j->h.len, &j->h.lim, 0, x->arg);
      st->cell = pid;
      st->seq = seq;
      st->cfd = cfd;
      st->afd = j->fd[1];
      j->fd[1] = -1;
      job_free(j);
      return 0;
    }
    /* the spare died unused (killed from outside): another one, and
     * another STARTED (the runner keeps the last) */
    close(cfd);
    spare_drop(x);
  }
  job_free(j);
  rep[npre] = no_run(seq, e);
  return isolate_full_io(sock, rep, (size_t)(npre + 1) * sizeof(*rep), 1);
}

/* The cell has exited: end what it left in its group, reap it; then the
 * next queued cell starts (before the runner hears of either). */
static int reap_and_next(struct server_ctx *x, struct srv_state *st, int sock)
{
  struct srv_rep rep[2];
  int n = 1, afd = st->afd, e = 0;
  memset(&rep[0], 0, sizeof(rep[0]));
  rep[0].op = SRV_EXITED;
  rep[0].seq = st->seq;
  rep[0].pid = st->cell;
  spawn_kill_group(st->cell, SIGKILL);
  if(spawn_reap(st->cell, 1, &rep[0].status, &rep[0].ru) < 0)
    rep[0].err = errno;
  rep[0].at_ns = strata_now_ns();
  close(st->cfd);
  st->cfd = st->afd = -1;
  st->cell = 0;
  while(!st->cell && st->head && !e) {
    struct srv_job *j = st->head;
    st->head = j->next;
    if(!st->head)
      st->tail = &st->head;
    e = start_job(x, st, j, sock, rep, n);
    n = 0;
  }
  if(n && !e)
    e = isolate_full_io(sock, rep, sizeof(rep[0]), 1);
  if(afd >= 0)
    close(afd);
  return e;
}

/* KILL: the running cell if it is the one named, or the queued one(s)
 * taken out unstarted. */
static int kill_job(struct srv_state *st, const struct srv_req *h, int sock)
{
  struct srv_job **pp = &st->head;
  if(st->cell && h->seq == st->seq) {
    spawn_kill(st->cell, SIGKILL);
  }
  while(*pp) {
    struct srv_job *j = *pp;
    if(h->all || j->h.seq == h->seq) {
      struct srv_rep rep = no_run(j->h.seq, ECANCELED);
      *pp = j->next;
      job_free(j);
      if(isolate_full_io(sock, &rep, sizeof(rep), 1))
        return -1;
      continue;
    }
    pp = &j->next;
  }
  st->tail = &st->head;
  while(*st->tail)
    st->tail = &(*st->tail)->next;
  return 0;
}

/*
 * The server's loop: a cell runs, from FORK to EXITED, while the next
 * waits in the queue and the next child (the spare) waits for it.  Ends
 * when the runner closes the socket or dies (PR_SET_PDEATHSIG).
 */
static void server_main(int sock, pid_t runner, struct server_ctx *x)
{
  struct srv_state st = { 0, 0, -1, -1, NULL, NULL };

  st.tail = &st.head;
  x->st = &st;
  x->runner_sock = sock;
  /* the runner handles SIGINT/SIGTERM and ends the cells; the server
   * stays until the runner lets it go */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
  if(getppid() != runner)
    _exit(0);
  (void)prctl(PR_SET_NAME, "strata-server");
  isolate_hide_fds();   /* once, for every child it forks */
  x->self = getpid();
  spare_start(x);
  for(;;) {
    struct pollfd p[2] = { { .fd = sock, .events = POLLIN },
                           { .fd = st.cfd, .events = POLLIN } };
    struct srv_job *j;
    struct srv_rep rep[1];

    if(poll(p, st.cell ? 2 : 1, -1) < 0 && errno != EINTR)
      break;
    if(st.cell && (p[1].revents & (POLLIN | POLLHUP))) {
      if(reap_and_next(x, &st, sock))
        break;
      if(!x->spare)
        spare_start(x);
      continue;
    }
    if(!(p[0].revents & (POLLIN | POLLHUP)))
      continue;
    j = calloc(1, sizeof(*j));
    if(!j || srv_recv(sock, &j->h, j->fd)) {
      free(j);
      break;
    }
    if(j->h.op == SRV_KILL) {
      int e = kill_job(&st, &j->h, sock);
      job_free(j);
      if(e)
        break;
      continue;
    }
    if(j->h.op != SRV_FORK || j->fd[0] < 0 ||
       recv_req(sock, j->h.len, &j->req, &(size_t){ 0 })) {
      job_free(j);
      break;
    }
    if(st.cell) {
      *st.tail = j;
      st.tail = &j->next;
      continue;
    }
    if(start_job(x, &st, j, sock, rep, 0))
      break;
    /* the next cell's child, forked while this one runs */
    if(!x->spare)
      spare_start(x);
  }
  spare_drop(x);
  if(st.cell) {
    spawn_kill(st.cell, SIGKILL);
  }
  _exit(0);
}

struct isolate_server *isolate_server_start(isolate_prepare_fn prepare,
                                            isolate_idle_fn idle,
                                            isolate_child_fn child,
                                            void *arg)
{
  struct isolate_server *s;
  int sv[2], probe;
  pid_t me = getpid();

  /* the server finds a cell's exit through its pidfd: no server without */
  probe = spawn_pidfd(me);
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
    struct server_ctx x = { .prepare = prepare, .idle = idle, .child = child,
                            .arg = arg, .spare_sock = -1, .runner_sock = -1 };
    close(sv[0]);
    server_main(sv[1], me, &x);
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
  (void)spawn_reap(s->pid, 1, &st, NULL);
  free(s->notes);
  free(s);
}

/* The server is gone (killed, crashed): later cells fork from here.  What
 * it said before it went stays to be taken. */
void forkserver_lost(struct isolate_server *s)
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

/* Read what the server has said, without blocking, into s->notes; -1
 * once it is gone. */
int forkserver_pump(struct isolate_server *s)
{
  for(;;) {
    size_t want;
    ssize_t k = recv(s->sock, s->part + s->partlen,
                     sizeof(s->part) - s->partlen, MSG_DONTWAIT);
    if(k < 0 && errno == EINTR)
      continue;
    if(k < 0 && errno == EAGAIN)
      return 0;
    if(k <= 0)
      return -1;
    want = sizeof(s->part) - s->partlen;
    s->partlen += (size_t)k;
    while(s->partlen >= sizeof(struct srv_rep)) {
      if(s->nnotes == s->capnotes) {
        size_t c = s->capnotes ? s->capnotes * 2 : 4;
        struct srv_rep *n = realloc(s->notes, c * sizeof(*n));
        if(!n)
          return -1;
        s->notes = n;
        s->capnotes = c;
      }
      memcpy(&s->notes[s->nnotes++], s->part, sizeof(struct srv_rep));
      s->partlen -= sizeof(struct srv_rep);
      memmove(s->part, s->part + sizeof(struct srv_rep), s->partlen);
    }
    if((size_t)k < want)
      return 0;   /* all there was (a recv more would say EAGAIN) */
  }
}

/* The oldest message about cell seq, taken out; 0 when there is none. */
int forkserver_note_take(struct isolate_server *s, uint64_t seq,
                         struct srv_rep *rep)
{
  size_t i;
  for(i = 0; i < s->nnotes; i++)
    if(s->notes[i].seq == seq) {
      *rep = s->notes[i];
      memmove(&s->notes[i], &s->notes[i + 1],
              (s->nnotes - i - 1) * sizeof(*rep));
      s->nnotes--;
      return 1;
    }
  return 0;
}

struct isolate_pending *isolate_server_send(struct isolate_server *s,
                                            const char *req, size_t len,
                                            const struct isolate_limits *lim,
                                            int ask)
{
  int fds[2], av[2] = { -1, -1 }, pass[2];
  struct srv_req h;
  struct isolate_pending *p;

  if(!isolate_server_alive(s) || len > UINT32_MAX) {
    errno = ESRCH;
    return NULL;
  }
  p = calloc(1, sizeof(*p));
  if(!p)
    return NULL;
  if(pipe2(fds, O_CLOEXEC)) {
    free(p);
    return NULL;
  }
  if(ask && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, av)) {
    close(fds[0]);
    close(fds[1]);
    free(p);
    return NULL;
  }
  memset(&h, 0, sizeof(h));
  h.op = SRV_FORK;
  if(lim)
    h.lim = *lim;
  h.len = (uint32_t)len;
  h.seq = ++s->seq;
  pass[0] = fds[1];
  pass[1] = av[1];
  if(forkserver_send(s->sock, &h, pass, req, len)) {
    /* the server was gone before it had the whole request: it forked
     * nothing */
    forkserver_lost(s);
    close(fds[0]);
    close(fds[1]);
    if(ask) {
      close(av[0]);
      close(av[1]);
    }
    free(p);
    errno = ESRCH;
    return NULL;
  }
  close(fds[1]);
  if(ask)
    close(av[1]);
  p->s = s;
  p->rfd = fds[0];
  p->afd = av[0];
  p->seq = h.seq;
  return p;
}
