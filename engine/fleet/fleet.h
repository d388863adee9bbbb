/*
 * fleet.h - a group of child processes whose output is read line by line
 * as it comes, from all of them at once (the launcher side of
 * `strata run --fleet`: one srun per node, each node's results journaled
 * as they arrive, a silent node seen as silent, a dead one as dead).
 *
 * Each child runs in its own process group (started by spawn.h); its
 * stdin is fed from a buffer (then closed), its stdout and stderr are
 * split into lines.
 */
#ifndef STRATA_FLEET_H
#define STRATA_FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spawn.h"

struct fleet_stream {
  int fd;                    /* -1 once at EOF */
  struct spawn_buf b;        /* bytes read, not yet handed out as lines */
};

struct fleet_proc {
  pid_t pid;                 /* 0 once reaped */
  int in_fd;                 /* -1 once all of in is written (or failed) */
  char *in;                  /* stdin bytes (owned) */
  size_t in_len, in_off;
  struct fleet_stream s[2];  /* 0 stdout, 1 stderr */
  int code, signal;          /* exit status once reaped */
  int reported;              /* the exit event was handed out */
  uint64_t reaped_ns;        /* when it was reaped (output may still be
                              * open, held by a process it left behind) */
};

struct fleet_group {
  struct fleet_proc *p;
  int n, cap;
  int next;                  /* round robin: which child is looked at first */
  char *line;                /* the last line handed out (owned) */
  size_t line_cap;
};

enum fleet_ev_kind { FLEET_EV_NONE, FLEET_EV_LINE, FLEET_EV_EXIT };

struct fleet_event {
  enum fleet_ev_kind kind;
  int proc;                  /* index of the child */
  int stream;                /* LINE: 1 stdout, 2 stderr */
  const char *line;          /* LINE: without its '\n'; valid until the
                              * next fleet_next */
  size_t len;
  int code, signal;          /* EXIT: exit code (128 + signal if killed) */
};

/* A child reaped while something it left holds its output open: after
 * this long the output is closed and the exit reported. */
#define FLEET_DRAIN_NS 2000000000ull

/* Lines longer than this are handed out cut at this length. */
#define FLEET_MAX_LINE (64u << 20)

/* Start argv (argv[0] looked up on PATH) with envp (NULL = inherit) and
 * in_len bytes of stdin (copied).  Returns the child's index, or -1 with
 * errno (pipe/fork failure; an exec failure is the child's exit 127). */
int fleet_spawn(struct fleet_group *g, char *const argv[], char *const envp[],
                const char *in, size_t in_len);

/* The next event within timeout_ms (< 0: wait until one): a complete line
 * of a child, or a child's exit once its output is drained.  Returns 1
 * with *ev filled, 0 on timeout (or when no child is left to report:
 * ev->kind NONE), -1 with errno on a poll failure (EINTR included: the
 * caller checks its stop flag). */
int fleet_next(struct fleet_group *g, int timeout_ms, struct fleet_event *ev);

/* Send sig to child i's process group (no-op once reaped). */
void fleet_kill(struct fleet_group *g, int i, int sig);

/* Children not yet reported as exited. */
int fleet_running(const struct fleet_group *g);

/* Kill every child's group (SIGKILL), reap them, free everything. */
void fleet_free(struct fleet_group *g);

#endif
