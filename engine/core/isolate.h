/*
 * isolate.h - run one piece of work in a forked child with a deadline
 * and resource limits.
 *
 * Why a process and not a coroutine: a primitive stuck in a C call (a
 * verbs poll, a curl transfer, a CUDA kernel) cannot be interrupted from
 * Lua, and a crash in one must not lose the results already gathered.
 * The child writes its answer to a pipe; the parent waits with a timeout
 * and kills the child's whole process group when it overruns.
 *
 * Limits (docs/cli.md, "Limits"): memory, CPU time and open files are
 * set in the child with setrlimit before the work starts; the size of the
 * answer is counted by the parent, which kills a child that writes more.
 * Which one was crossed comes back in r->limit.
 */
#ifndef STRATA_ISOLATE_H
#define STRATA_ISOLATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum isolate_status {
  ISOLATE_OK,          /* child answered and exited 0 */
  ISOLATE_TIMEOUT,     /* deadline passed; child group killed */
  ISOLATE_CRASHED,     /* child died (signal or exit code) mid-answer */
  ISOLATE_INTERRUPTED, /* strata_stop_flag was raised; child killed */
  ISOLATE_SYSERR,      /* fork/pipe failed: detail in errno */
  ISOLATE_LIMIT        /* a resource limit was crossed: r->limit says which */
};

enum isolate_limit {
  ISOLATE_LIMIT_NONE,
  ISOLATE_LIMIT_MEMORY,    /* RLIMIT_DATA, or the caller's own heap cap */
  ISOLATE_LIMIT_CPU,       /* RLIMIT_CPU: SIGXCPU / CPU time used */
  ISOLATE_LIMIT_FILES,     /* RLIMIT_NOFILE */
  ISOLATE_LIMIT_OUTPUT     /* the answer grew past limits.output_bytes */
};

/* 0 in a field: no limit of that kind. */
struct isolate_limits {
  uint64_t memory_bytes;   /* RLIMIT_DATA (heap + anonymous mappings) */
  double cpu_s;            /* RLIMIT_CPU, user + system, all threads */
  uint64_t open_files;     /* RLIMIT_NOFILE */
  uint64_t output_bytes;   /* what the child may write to the pipe */
};

struct isolate_result {
  enum isolate_status status;
  char *payload;       /* what the child wrote (malloc'd, NUL ended) */
  size_t len;
  int term_signal;     /* for ISOLATE_CRASHED: signal, or 0 */
  int exit_code;       /* for ISOLATE_CRASHED: exit code when no signal */
  enum isolate_limit limit;  /* for ISOLATE_LIMIT */
  double cpu_s;        /* CPU time the child used (user + system) */
  long maxrss_kib;     /* its peak resident set */
  int lost;            /* its fork server died with it: exit status unknown */
  uint64_t started_ns; /* when it started (strata_now_ns), or 0 */
  uint64_t exited_ns;  /* when it was reaped, or 0 */
};

/* Called in the child: write the answer to fd; return the exit code.  An
 * exit code of ISOLATE_EXIT_MEMORY / ISOLATE_EXIT_FILES says the child saw
 * its memory / open-files limit refuse it (the answer may be partial). */
typedef int (*isolate_child_fn)(int fd, void *arg);
#define ISOLATE_EXIT_MEMORY 97
#define ISOLATE_EXIT_FILES 98
/* Called in the parent about every tick_ms while waiting. */
typedef void (*isolate_tick_fn)(double elapsed_s, void *arg);
/* Called in the parent for a question the child asked (isolate_ask): the
 * answer in *reply (malloc'd, freed by the caller; NULL and 0 for none). */
typedef void (*isolate_ask_fn)(const char *q, size_t len, char **reply,
                               size_t *rlen, void *arg);
/* What the parent does while the child runs; NULL: nothing. */
struct isolate_hooks {
  isolate_tick_fn tick;   /* about every tick_ms */
  int tick_ms;
  isolate_ask_fn ask;     /* NULL: the child cannot ask */
  void *arg;              /* passed to both */
};

/*
 * In the child: ask the parent (its ask hook) and wait for the answer
 * (*reply malloc'd, the caller frees it).  The question and answer go
 * over a socket of their own, so a cell can ask for what it needs (the
 * runner's results, t.result) instead of being handed all of it before
 * it starts.  -1 (errno) when there is no one to ask or the parent went.
 */
int isolate_ask(const char *q, size_t len, char **reply, size_t *rlen);

/*
 * Fork, run child(fd, arg) in a new process group under lim (NULL: none),
 * collect what it writes.  timeout_s <= 0 waits forever (still
 * interruptible).  r->payload is owned by the caller (free it).  Returns
 * r->status.
 */
enum isolate_status isolate_run(isolate_child_fn child, void *child_arg,
                                double timeout_s,
                                const struct isolate_limits *lim,
                                const struct isolate_hooks *hooks,
                                struct isolate_result *r);

/*
 * A fork server: a process forked once, early (before the caller holds
 * much memory), that forks each cell's child on request.  A fork copies
 * the page tables of the process that forks, so forking cells from a
 * small server instead of a runner that holds thousands of results keeps
 * each fork cheap, and the runner's own pages are not write-protected
 * (then copied on its next write) once per cell.
 *
 * The child is the server's, with everything isolate_run gives: its own
 * process group, the limits, the answer pipe (made here, its write end
 * passed with SCM_RIGHTS), the deadline and the kill of the group.  The
 * server alone kills and reaps its children (asked by this process at a
 * deadline), so a pid is never reused under a kill; it says when a child
 * has exited, been reaped and its group killed.  Between cells it forks
 * the next cell's child ahead of time (a spare, waiting for its request),
 * so that each fork happens while this process takes the last answer in.
 * The server ignores SIGINT/SIGTERM (this process ends the cells) and
 * dies with this process (PR_SET_PDEATHSIG), its children with it.
 *
 * prepare(req, len, lim, in_child, arg) runs for each request in the
 * cell's child (in_child 1) before child(fd, arg), and in the server (0):
 * what it keeps there, later cells see.  idle(arg) (may be NULL) runs in the server before it forks
 * a child ahead of a request, while no cell runs.  NULL when the server
 * cannot be had (no pidfd: kernel < 5.3; fork).
 */
struct isolate_server;
typedef void (*isolate_prepare_fn)(const char *req, size_t len,
                                   const struct isolate_limits *lim,
                                   int in_child, void *arg);
typedef void (*isolate_idle_fn)(void *arg);
struct isolate_server *isolate_server_start(isolate_prepare_fn prepare,
                                            isolate_idle_fn idle,
                                            isolate_child_fn child,
                                            void *arg);
/* As isolate_run, the child forked by the server for req.  ISOLATE_SYSERR
 * with errno ESRCH: the server is gone and nothing ran (fork here). */
enum isolate_status isolate_server_run(struct isolate_server *s,
                                       const char *req, size_t len,
                                       double timeout_s,
                                       const struct isolate_limits *lim,
                                       const struct isolate_hooks *hooks,
                                       struct isolate_result *r);
/*
 * The same in two steps, so that this process can do other work while the
 * cell runs: send starts it, or queues it behind the cells sent before it
 * (the server starts each the moment the one before has been reaped, in
 * the order sent; ask: give it an ask socket), and returns NULL with errno
 * ESRCH when the server is gone and nothing ran; wait waits for it as
 * isolate_server_run does (its deadline counts from its start; cells may
 * be waited for in any order) and frees the pending cell: ISOLATE_SYSERR
 * with ESRCH when the server went before the cell started (nothing ran:
 * run it elsewhere), with ECANCELED when a stop or a drop took it out of
 * the queue; drop kills it (or takes it out of the queue) and waits for
 * its end, its answer unread; free only lets go of it (its server stopped:
 * nothing to wait for).
 */
struct isolate_pending;
struct isolate_pending *isolate_server_send(struct isolate_server *s,
                                            const char *req, size_t len,
                                            const struct isolate_limits *lim,
                                            int ask);
enum isolate_status isolate_server_wait(struct isolate_pending *p,
                                        double timeout_s,
                                        const struct isolate_limits *lim,
                                        const struct isolate_hooks *hooks,
                                        struct isolate_result *r);
void isolate_server_drop(struct isolate_pending *p);
void isolate_pending_free(struct isolate_pending *p);
int isolate_server_alive(const struct isolate_server *s);
pid_t isolate_server_pid(const struct isolate_server *s);
/* Let the server go (it exits) and reap it. */
void isolate_server_stop(struct isolate_server *s);

/* fd (the journal, say) is this process's: every cell's child and the
 * fork server get /dev/null in its place.  -1 (errno) past 8 of them. */
int isolate_hide_fd(int fd);

const char *isolate_strstatus(enum isolate_status s);
const char *isolate_strlimit(enum isolate_limit l);

/* Defaults when the site sets none: memory = 3/4 of physical RAM, open
 * files = 4096 (or the hard limit when lower), output = 64 MiB, CPU =
 * none (the wall-clock timeout bounds it). */
void isolate_default_limits(struct isolate_limits *lim);

#endif
