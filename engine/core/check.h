/*
 * check.h - the one assertion of the C unit tests.
 *
 * CHECK(cond) evaluates cond in every build type. assert() does not: the
 * default RelWithDebInfo build (and Release) defines NDEBUG, which removes
 * assert() and any work written inside it, so a test built that way would
 * skip the very calls it tests. A failed check prints file:line and the
 * expression, counts, and the test goes on; main() ends with
 * `return check_result("name_test");` (exit 1 if anything failed).
 */
#ifndef STRATA_CHECK_H
#define STRATA_CHECK_H

#include <stdio.h>

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
