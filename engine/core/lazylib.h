/*
 * lazylib.h - a shared library opened on first use instead of linked.
 *
 * strata forks one child per matrix cell from a fork server, and every
 * library the binary links is mapped in the server and in each child:
 * each costs CPU in every fork and every exit (docs/performance.md,
 * "Runner").  A library that a trivial cell never uses (libcurl,
 * libibverbs, libcrypto, liburing) is therefore not linked: its callers'
 * functions are defined by a shim (engine/http/curl_load.c,
 * engine/verbs/verbs_load.c, engine/core/crypto_load.c,
 * engine/storage/uring_load.c) with the library's own prototypes, and
 * the shim fills a table of the real ones on first use with
 * lazylib_ready(), once per process.
 */
#ifndef STRATA_LAZYLIB_H
#define STRATA_LAZYLIB_H

#include <stddef.h>

struct lazylib_sym {
  void **slot;              /* where the address goes */
  const char *name;
  const char *version;      /* the symbol version the headers bind, e.g.
                               "IBVERBS_1.1" (dlvsym); NULL: dlsym */
};

struct lazylib {
  const char *soname;       /* e.g. "libibverbs.so.1" */
  const char *package;      /* the Debian package that ships it */
  const struct lazylib_sym *syms;
  size_t nsyms;
  int state;                /* 0 not tried, 1 loaded, -1 could not be */
  char why[320];            /* why not, when state is -1 */
};

/* 1 when l's functions are there: the first call (from any thread) dlopens
 * l->soname (never unloaded: the addresses stay valid) and resolves every
 * symbol, setting l->state and, when it could not, l->why. */
int lazylib_ready(struct lazylib *l);
/* 1 when this process has soname mapped (without loading it). */
int lazylib_mapped(const char *soname);
/* For a loader that looks its symbols up itself (optional ones, its own
 * messages: engine/core/cufile_load.c): l's dlopen handle once
 * lazylib_ready(l), else NULL. */
void *lazylib_handle(struct lazylib *l);
/* Why l could not be opened, in dlopen's own words (dlerror) where that
 * was the reason, else l->why. */
void lazylib_dlerror(const struct lazylib *l, char *buf, size_t len);

/* What every loader gives its callers, over its struct lazylib and its
 * own ready() (lazylib_ready, and what a failure means to its callers):
 * prefix_load() (0, or -1 and prefix_load_error() says why) and
 * prefix_loaded() (mapped in this process, without loading it). */
#define LAZYLIB_ENTRY_POINTS(prefix, lib)                                 \
  int prefix##_load(void) { return ready() ? 0 : -1; }                    \
  const char *prefix##_load_error(void) { return ready() ? "" : (lib).why; } \
  int prefix##_loaded(void) { return lazylib_mapped((lib).soname); }

#endif
