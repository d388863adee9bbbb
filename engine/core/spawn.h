/*
 * spawn.h - the one way strata starts a child process and watches it:
 * fork into a process group of its own (so one kill ends it and all it
 * started), its pidfd (its exit as a poll event), exec of a command with
 * pipes for stdin, stdout and stderr, output captured into a buffer with
 * a cap, a deadline turned into a poll timeout, and the exit read back as
 * a code (128 + signal when killed).
 *
 * Its users: core/isolate.c and the fork server (a cell: a fork without
 * exec), sys.run (engine/sys/sys.c: one command, its output captured
 * whole) and the fleet's process group (engine/fleet/fleet.c: many
 * commands, their output read line by line).
 */
#ifndef STRATA_SPAWN_H
#define STRATA_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* fork(); the child in a process group of its own, set on both sides so
 * that a kill of -pid right after the fork never misses it.  Returns as
 * fork() does. */
pid_t spawn_fork(void);

/* A pidfd for pid (its exit is POLLIN), or -1 with errno (ENOSYS on a
 * kernel before 5.3). */
int spawn_pidfd(pid_t pid);

/* Send sig to pid's process group (what pid started goes with it) and to
 * pid itself, in case it left the group; only before pid is reaped. */
void spawn_kill(pid_t pid, int sig);

/* Send sig to pid's process group only (after the reap: what it left). */
void spawn_kill_group(pid_t pid, int sig);

/* Reap pid (block: wait for it; else WNOHANG), EINTR retried.  1 with
 * *status (and *ru when not NULL), 0 not yet exited, -1 with errno. */
int spawn_reap(pid_t pid, int block, int *status, struct rusage *ru);

/* A wait status as a code (the exit code; 128 + signal when killed) and
 * the signal (0 when it exited). */
void spawn_code(int status, int *code, int *sig);

/* A command: argv[0] looked up on PATH, never through a shell. */
struct spawn_cmd {
  char *const *argv;
  char *const *envp;         /* NULL = inherit */
  const char *cwd;           /* NULL = inherit */
  int null_stdin;            /* stdin from /dev/null, no pipe */
};

/* A command started: the parent's ends of its pipes, non-blocking, each
 * -1 when there is none (or once closed). */
struct spawn_proc {
  pid_t pid;
  int in, out, err;
  int exec_errno;            /* exec failed (the child exits 127): why */
};

/* Start c with default signal dispositions and an empty signal mask in
 * the child.  Returns 0 (an exec failure too: p->exec_errno), or -1 with
 * errno when a pipe or the fork failed. */
int spawn_exec(const struct spawn_cmd *c, struct spawn_proc *p);

/* Close *fd when open and set it to -1. */
void spawn_close(int *fd);

/* Output captured from a pipe.  Past max bytes: SPAWN_DROP reads on and
 * drops the rest (truncated set), SPAWN_HOLD leaves it in the pipe until
 * the buffer is taken from, SPAWN_FAIL is an error (truncated set). */
enum spawn_full { SPAWN_DROP, SPAWN_HOLD, SPAWN_FAIL };

struct spawn_buf {
  char *p;                   /* NUL ended once anything was added */
  size_t n, cap;
  size_t max;                /* 0: no cap */
  enum spawn_full full;
  int truncated;
};

/* Append n bytes; -1: past max under SPAWN_FAIL, or out of memory (under
 * SPAWN_DROP the bytes are dropped instead, truncated set). */
int spawn_buf_add(struct spawn_buf *b, const char *d, size_t n);

/* Read what fd holds now into b.  1 at EOF or a read error (the caller
 * closes fd), 0 when it would block (or b is full under SPAWN_HOLD), -1
 * when spawn_buf_add failed. */
int spawn_buf_read(int fd, struct spawn_buf *b);

/* Milliseconds to poll for when the deadline (strata_now_ns's clock; 0 =
 * none) is nearer than cap_ms; never below 0. */
int spawn_poll_ms(uint64_t deadline, uint64_t now, int cap_ms);

#endif
