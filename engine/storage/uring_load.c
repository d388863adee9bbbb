/*
 * uring_load.c - liburing, loaded the first time the storage family
 * calls it: a cell that does no block I/O no longer maps it in the fork
 * server and its own child (engine/core/lazylib.h says why that matters).
 *
 * Most of liburing is inline in liburing.h (io_uring_get_sqe, the
 * io_uring_prep_* helpers, io_uring_wait_cqe, io_uring_cqe_seen); the
 * functions it exports that the engine reaches are defined here with
 * liburing.h's prototypes and forward to the library's, bound to
 * LIBURING_2.0 (LIBURING_2.3 for the two fio's batching needs) as a link
 * against liburing 2.3 binds them (src/liburing.map, docs/provenance.md).  Without the library each fails as liburing fails
 * without io_uring: -ENOSYS; uring_load_error() says why.
 */
#include <liburing.h>

#include <errno.h>

#include "lazylib.h"
#include "uring_load.h"

#ifndef STRATA_LIBURING_SONAME
#define STRATA_LIBURING_SONAME "liburing.so.2"
#endif

static struct {
  int (*queue_init)(unsigned, struct io_uring *, unsigned);
  int (*queue_init_params)(unsigned, struct io_uring *,
                           struct io_uring_params *);
  void (*queue_exit)(struct io_uring *);
  int (*submit)(struct io_uring *);
  int (*get_cqe)(struct io_uring *, struct io_uring_cqe **, unsigned,
                 unsigned, sigset_t *);
  int (*submit_get_events)(struct io_uring *);
  int (*enter)(unsigned, unsigned, unsigned, unsigned, sigset_t *);
} fn;

static const struct lazylib_sym syms[] = {
  { (void **)&fn.queue_init, "io_uring_queue_init", "LIBURING_2.0" },
  { (void **)&fn.queue_init_params, "io_uring_queue_init_params",
    "LIBURING_2.0" },
  { (void **)&fn.queue_exit, "io_uring_queue_exit", "LIBURING_2.0" },
  { (void **)&fn.submit, "io_uring_submit", "LIBURING_2.0" },
  { (void **)&fn.get_cqe, "__io_uring_get_cqe", "LIBURING_2.0" },
  /* fio's commit and wait, one system call each (job.c) */
  { (void **)&fn.submit_get_events, "io_uring_submit_and_get_events",
    "LIBURING_2.3" },
  { (void **)&fn.enter, "io_uring_enter", "LIBURING_2.3" },
};

static struct lazylib lib = {
  STRATA_LIBURING_SONAME, "liburing2", syms,
  sizeof(syms) / sizeof(syms[0]), 0, ""
};
static int ready(void)
{
  return lazylib_ready(&lib);
}

LAZYLIB_ENTRY_POINTS(uring, lib)

int io_uring_queue_init(unsigned entries, struct io_uring *ring,
                        unsigned flags)
{
  return ready() ? fn.queue_init(entries, ring, flags) : -ENOSYS;
}

int io_uring_queue_init_params(unsigned entries, struct io_uring *ring,
                               struct io_uring_params *p)
{
  return ready() ? fn.queue_init_params(entries, ring, p) : -ENOSYS;
}

void io_uring_queue_exit(struct io_uring *ring)
{
  if(ready())
    fn.queue_exit(ring);
}

int io_uring_submit(struct io_uring *ring)
{
  return ready() ? fn.submit(ring) : -ENOSYS;
}

int __io_uring_get_cqe(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
                       unsigned submit, unsigned wait_nr, sigset_t *sigmask)
{
  return ready() ? fn.get_cqe(ring, cqe_ptr, submit, wait_nr, sigmask)
                 : -ENOSYS;
}

int io_uring_submit_and_get_events(struct io_uring *ring)
{
  return ready() ? fn.submit_get_events(ring) : -ENOSYS;
}

int io_uring_enter(unsigned fd, unsigned to_submit, unsigned min_complete,
                   unsigned flags, sigset_t *sig)
{
  return ready() ? fn.enter(fd, to_submit, min_complete, flags, sig)
                 : -ENOSYS;
}
