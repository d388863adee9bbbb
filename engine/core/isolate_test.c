/*
 * isolate_test.c - core/isolate.c without Lua: answers, limits, and the
 * wait for the child's exit (ctest isolate_test, label unit).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "isolate.h"
#include "strata.h"

#include "check.h"

static int answer(int fd, void *arg)
{
  (void)arg;
  return write(fd, "R42", 3) == 3 ? 0 : 1;
}

/* Close the pipe, then take 3 ms to exit: the parent must wait for the
 * exit itself, not poll for it in 10 ms steps. */
static int linger(int fd, void *arg)
{
  struct timespec ts = { 0, 3000000 };
  (void)arg;
  if(write(fd, "Rx", 2) != 2)
    return 1;
  close(fd);
  nanosleep(&ts, NULL);
  return 0;
}

static int chatty(int fd, void *arg)
{
  static char buf[1 << 16];
  (void)arg;
  memset(buf, 'x', sizeof(buf));
  for(int i = 0; i < 64; i++)
    if(write(fd, buf, sizeof(buf)) < 0)
      return 1;
  return 0;
}

static int spin(int fd, void *arg)
{
  volatile unsigned long x = 0;
  (void)fd;
  (void)arg;
  for(;;)
    x++;
  return 0;
}

static int hog(int fd, void *arg)
{
  (void)fd;
  (void)arg;
  for(int i = 0; i < 1000; i++) {
    char *p = malloc(8 << 20);
    if(!p)
      return ISOLATE_EXIT_MEMORY;   /* what core_lua.c's allocator reports */
    memset(p, 1, 8 << 20);
  }
  return 0;
}

int main(void)
{
  struct isolate_result r;
  struct isolate_limits lim;
  double best = 1e9;

  CHECK(isolate_run(answer, NULL, 5, NULL, NULL, NULL, 0, &r) == ISOLATE_OK);
  CHECK(r.len == 3 && !memcmp(r.payload, "R42", 3));
  free(r.payload);

  for(int i = 0; i < 20; i++) {
    uint64_t t0 = strata_now_ns();
    CHECK(isolate_run(linger, NULL, 5, NULL, NULL, NULL, 0, &r) == ISOLATE_OK);
    free(r.payload);
    double s = (double)(strata_now_ns() - t0) / 1e9;
    if(s < best)
      best = s;
  }
  /* the old 10 ms waitpid polling could not be faster than 10 ms here */
  printf("linger: fastest of 20: %.2f ms\n", best * 1e3);
  CHECK(best < 0.0095);

  memset(&lim, 0, sizeof(lim));
  lim.output_bytes = 1 << 20;
  CHECK(isolate_run(chatty, NULL, 10, &lim, NULL, NULL, 0, &r) == ISOLATE_LIMIT);
  CHECK(r.limit == ISOLATE_LIMIT_OUTPUT);
  free(r.payload);

  memset(&lim, 0, sizeof(lim));
  lim.cpu_s = 1;
  CHECK(isolate_run(spin, NULL, 20, &lim, NULL, NULL, 0, &r) == ISOLATE_LIMIT);
  CHECK(r.limit == ISOLATE_LIMIT_CPU && r.cpu_s >= 0.5);
  free(r.payload);

#if !defined(__SANITIZE_ADDRESS__)
  /* (under ASan RLIMIT_DATA is not set: its shadow memory would count) */
  memset(&lim, 0, sizeof(lim));
  lim.memory_bytes = 64 << 20;
  CHECK(isolate_run(hog, NULL, 20, &lim, NULL, NULL, 0, &r) == ISOLATE_LIMIT);
  CHECK(r.limit == ISOLATE_LIMIT_MEMORY);
  free(r.payload);
#else
  (void)hog;
#endif

  CHECK(isolate_run(spin, NULL, 0.3, NULL, NULL, NULL, 0, &r) == ISOLATE_TIMEOUT);
  free(r.payload);

  return check_result("isolate_test");
}
