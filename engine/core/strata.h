/*
 * strata.h - what every primitive family shares: a monotonic clock, a
 * hex digit, a whole-file read and the stop flag; for _lua.c files the
 * "prerequisite absent" error that the runner turns into SKIP, option
 * table helpers that reject unknown keys, a memo call, a traceback
 * handler and result-table setters.
 *
 * Core files (no lua.h) see only the first part; _lua.c files get the
 * rest.  Conventions: ../../shared/STYLE.md, "For strata".
 */
#ifndef STRATA_H
#define STRATA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC: every duration strata reports uses it. */
static inline uint64_t strata_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The value of one hex digit, or -1. */
static inline int strata_hexval(int c)
{
  if(c >= '0' && c <= '9')
    return c - '0';
  if(c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if(c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/*
 * Read the file at path, NUL ended, into *buf.  With cap, (*buf, *cap) is a
 * buffer kept between calls (grown as needed); without, a fresh one the
 * caller frees.  max > 0 bounds the size (EFBIG past it).  Returns 0, or
 * -1 with errno (a fresh buffer is then freed).
 */
int strata_read_file(const char *path, size_t max, char **buf, size_t *cap,
                     size_t *len);

/* Room for need bytes in the growing buffer *p of *cap bytes: its size
 * doubled (from first when empty) until it holds need.  0, or -1 with
 * errno ENOMEM (*p and *cap unchanged).  Every byte buffer that grows as
 * it is written grows this way. */
int strata_reserve(char **p, size_t *cap, size_t need, size_t first);

/* Set by SIGINT/SIGTERM; long C loops poll it and stop early. */
extern volatile int strata_stop_flag;

#ifdef LUA_VERSION_NUM
/*
 * Raise the prerequisite-absent error: a table {skip = "<reason>"} whose
 * __tostring gives "SKIP: <reason>".  The runner reports the test as SKIP
 * with that reason.  Never returns.
 */
int strata_skip(lua_State *L, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

/*
 * Check that the table at idx holds only the keys in allowed (NULL ended);
 * an unknown key raises "<fn>: unknown option '<key>'".
 */
void strata_check_keys(lua_State *L, int idx, const char *fn,
                       const char *const allowed[]);

/* Push memo[v] for the value at idx, or, when memo has none, fn(v): the
 * stack indices of a table of answers already known and of the function
 * that finds the others (redaction's texts and keys). */
void strata_memo_call(lua_State *L, int memo, int fn, int idx);

/* Option getters: absent -> def; wrong type raises naming fn and field. */
lua_Integer strata_opt_int(lua_State *L, int idx, const char *fn,
                           const char *field, lua_Integer def);
lua_Number strata_opt_num(lua_State *L, int idx, const char *fn,
                          const char *field, lua_Number def);
const char *strata_opt_str(lua_State *L, int idx, const char *fn,
                           const char *field, const char *def);
int strata_opt_bool(lua_State *L, int idx, const char *fn,
                    const char *field, int def);

/* Message handler for lua_pcall: the error (or its __tostring) with a
 * traceback appended. */
int strata_traceback(lua_State *L);

/* t[k] = v helpers for building result tables at the top of the stack. */
void strata_set_int(lua_State *L, const char *k, lua_Integer v);
void strata_set_num(lua_State *L, const char *k, lua_Number v);
void strata_set_str(lua_State *L, const char *k, const char *v);
void strata_set_bool(lua_State *L, const char *k, int v);
#endif

#endif
