/*
 * check.h - the one assertion of the C unit tests.
 *
 * CHECK(cond) evaluates cond in every build type. assert() does not: the
 * default RelWithDebInfo build (and Release) defines NDEBUG, which removes
 * assert() and any work written inside it, so a test built that way would
 * skip the very calls it tests. A failed check prints file:line and the
 * expression, counts, and the test goes on; main() ends with
 * `return check_result("name_test");` (exit 1 if anything failed).
 * check_near and check_fixture are what several tests compare and read
 * with.
 */
#ifndef STRATA_CHECK_H
#define STRATA_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "strata.h"

static int check_failures;

#define CHECK(cond) do { \
    if(!(cond)) { \
      check_failures++; \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
              #cond); \
    } \
  } while(0)

/* CHECKF: CHECK that also prints a printf-style account of the values. */
#define CHECKF(cond, ...) do { \
    if(!(cond)) { \
      check_failures++; \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, \
              #cond); \
      fprintf(stderr, __VA_ARGS__); \
      fputc('\n', stderr); \
    } \
  } while(0)

/* a and b equal but for rounding: within 1e-9 of b (relative; absolute
 * near 0). */
static inline int check_near(double a, double b)
{
  return fabs(a - b) <= 1e-9 * (fabs(b) + 1);
}

/* The fixture dir/rel, NUL ended (*len its length, when len): a test
 * cannot go on without its input, so a missing one ends it (exit 2).
 * Not inlined: GCC 12 then takes the buffer for a local (-Wdangling-
 * pointer). */
__attribute__((noinline, unused))
static char *check_fixture(const char *dir, const char *rel, size_t *len)
{
  char path[4096], *buf = NULL;
  size_t n = 0;
  snprintf(path, sizeof(path), "%s/%s", dir, rel);
  if(strata_read_file(path, 0, &buf, NULL, &n)) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  if(len)
    *len = n;
  return buf;
}

/* The test's exit status: 0 when every check held, else 1 (with a count). */
static inline int check_result(const char *name)
{
  if(check_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
    return 1;
  }
  printf("%s: ok\n", name);
  return 0;
}

#endif
