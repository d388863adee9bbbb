/*
 * forkserver.h - what isolate.c (the cells, the waits) and forkserver.c
 * (the server process and the runner's end of its socket) share; private
 * to engine/core.  The public API is isolate.h.
 */
#ifndef STRATA_FORKSERVER_H
#define STRATA_FORKSERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "isolate.h"

struct srv_rep;

struct isolate_server {
  pid_t pid;   /* the server process (a child of this one) */
  int sock;    /* stream socket to it; -1 once it is gone */
  uint64_t seq;              /* the number of the last cell sent */
  /* what came from the server and no wait has taken yet: the messages
   * read whole (for any cell), then the start of one */
  struct srv_rep *notes;
  size_t nnotes, capnotes;
  char part[1024];
  size_t partlen;
};

/*
 * The runner and the server speak fixed-size messages over a stream
 * socket.  The runner sends FORK (a number for the cell, its limits and
 * request; the answer pipe's write end and the child's end of the ask
 * socket as SCM_RIGHTS) and, at a deadline or a stop, KILL (the cell's
 * number; a stop: every cell queued too).  A FORK that comes while a cell
 * runs waits in the server's queue and starts the moment that cell has
 * been reaped, without a word from the runner: the runner sends the next
 * cell before it waits for this one, and is off the path from one cell
 * to the next.  The server says STARTED (the pid, and when) just before it
 * hands a cell's child its request (a cell never runs unannounced), and
 * EXITED once the child has exited, its group has been killed and it has
 * been reaped; the two for consecutive cells go in one write.  The server
 * is the parent and the only one that kills or reaps, so a pid or a
 * process group it signals is never one reused by someone else.
 */
enum { SRV_FORK = 'F', SRV_KILL = 'K' };
enum { SRV_STARTED = 'S', SRV_EXITED = 'X' };
struct srv_req {
  int op;
  int all;                     /* SRV_KILL: and every cell queued (a stop) */
  uint64_t seq;                /* the cell's number */
  struct isolate_limits lim;   /* SRV_FORK: the cell's limits */
  uint32_t len;                /* SRV_FORK: bytes of request that follow */
};
struct srv_rep {
  int op;
  int err;                     /* errno of a failed fork or wait, else 0 */
  uint64_t seq;                /* the cell's number */
  uint64_t at_ns;              /* when it started, or was reaped */
  pid_t pid;                   /* the child */
  int status;                  /* SRV_EXITED: wait4's status */
  struct rusage ru;            /* SRV_EXITED: the child's usage */
};

/* A cell sent to the server and not yet waited for. */
struct isolate_pending {
  struct isolate_server *s;
  int rfd;          /* the answer pipe's read end */
  int afd;          /* the ask socket's parent end, or -1 */
  uint64_t seq;     /* its number at the server */
};

/* forkserver.c: the runner's end of the server's socket */
int forkserver_send(int sock, const struct srv_req *hdr, const int *fd,
                    const char *req, size_t len);
int forkserver_pump(struct isolate_server *s);
int forkserver_note_take(struct isolate_server *s, uint64_t seq,
                         struct srv_rep *rep);
void forkserver_lost(struct isolate_server *s);

/* isolate.c: what a cell's child does, whoever forked it */
void isolate_hide_fds(void);
void isolate_child_setup(void);
void isolate_run_child(isolate_child_fn child, void *arg, int wfd, int afd,
                       const struct isolate_limits *lim);
int isolate_full_io(int fd, void *buf, size_t n, int out);

#endif
