/*
 * isolate.h - run one piece of work in a forked child with a deadline.
 *
 * Why a process and not a coroutine: a primitive stuck in a C call (a
 * verbs poll, a curl transfer, a CUDA kernel) cannot be interrupted from
 * Lua, and a crash in one must not lose the results already gathered.
 * The child writes its answer to a pipe; the parent waits with a timeout
 * and kills the child's whole process group when it overruns.
 */
#ifndef STRATA_ISOLATE_H
#define STRATA_ISOLATE_H

#include <stddef.h>

enum isolate_status {
  ISOLATE_OK,          /* child answered and exited 0 */
  ISOLATE_TIMEOUT,     /* deadline passed; child group killed */
  ISOLATE_CRASHED,     /* child died (signal or exit code) mid-answer */
  ISOLATE_INTERRUPTED, /* strata_stop_flag was raised; child killed */
  ISOLATE_SYSERR       /* fork/pipe failed: detail in errno */
};

struct isolate_result {
  enum isolate_status status;
  char *payload;       /* what the child wrote (malloc'd, NUL ended) */
  size_t len;
  int term_signal;     /* for ISOLATE_CRASHED: signal, or 0 */
  int exit_code;       /* for ISOLATE_CRASHED: exit code when no signal */
};

/* Called in the child: write the answer to fd; return the exit code. */
typedef int (*isolate_child_fn)(int fd, void *arg);
/* Called in the parent about every tick_ms while waiting. */
typedef void (*isolate_tick_fn)(double elapsed_s, void *arg);

/*
 * Fork, run child(fd, arg) in a new process group, collect what it writes.
 * timeout_s <= 0 waits forever (still interruptible).  r->payload is owned
 * by the caller (free it).  Returns r->status.
 */
enum isolate_status isolate_run(isolate_child_fn child, void *child_arg,
                                double timeout_s, isolate_tick_fn tick,
                                void *tick_arg, int tick_ms,
                                struct isolate_result *r);

const char *isolate_strstatus(enum isolate_status s);

#endif
