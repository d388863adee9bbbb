/*
 * uring_load_test.c - liburing is not mapped until the engine first
 * calls it, and calls through the loader reach the real library: a ring
 * is made, a NOP submitted and its completion reaped (io_uring_submit,
 * __io_uring_get_cqe behind io_uring_wait_cqe), the ring torn down.  A
 * kernel that refuses io_uring (io_uring_disabled, seccomp) still answers
 * through the real io_uring_queue_init: its -errno is shown, and the ring
 * part is skipped as storage_test skips it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <liburing.h>

#include "check.h"
#include "uring_load.h"

int main(void)
{
  struct io_uring ring;
  struct io_uring_sqe *sqe;
  struct io_uring_cqe *cqe = NULL;
  int rc;

  CHECK(!uring_loaded());                   /* nothing has called it yet */
  CHECK(uring_load() == 0);
  CHECKF(strcmp(uring_load_error(), "") == 0, "%s", uring_load_error());
  CHECK(uring_loaded());
  rc = io_uring_queue_init(4, &ring, 0);
  if(rc < 0) {
    printf("uring_load_test: the kernel refuses io_uring (%s): ring part "
           "skipped\n", strerror(-rc));
    return check_result("uring_load_test");
  }
  sqe = io_uring_get_sqe(&ring);
  CHECK(sqe != NULL);
  if(sqe) {
    io_uring_prep_nop(sqe);
    io_uring_sqe_set_data64(sqe, 0x5742a7a);
    CHECK(io_uring_submit(&ring) == 1);
    rc = io_uring_wait_cqe(&ring, &cqe);
    CHECKF(rc == 0 && cqe, "io_uring_wait_cqe: %s", strerror(-rc));
    if(rc == 0 && cqe) {
      CHECK(cqe->user_data == 0x5742a7a && cqe->res == 0);
      io_uring_cqe_seen(&ring, cqe);
    }
  }
  io_uring_queue_exit(&ring);
  return check_result("uring_load_test");
}
