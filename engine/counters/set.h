/*
 * set.h - sets of named values, the currency of every counter source.
 * A set keeps its names when cleared: the next snapshot of the same
 * source adds the same names in the same order, and each is then
 * compared, not allocated again (the sampler takes one every tick).
 */
#ifndef STRATA_COUNTERS_SET_H
#define STRATA_COUNTERS_SET_H

#include <stddef.h>

enum ctr_kind {
  CTR_COUNTER,  /* monotonic: delta, rate, stats of per-interval rates */
  CTR_GAUGE,    /* level: delta = last - first, stats of the values */
  CTR_PCT       /* derived CPU percentage over an interval */
};

struct ctr_set {
  size_t n, cap;
  size_t held;           /* names[0..held) allocated (n <= held) */
  char **names;          /* owned */
  double *vals;
  unsigned char *kinds;  /* enum ctr_kind */
};

void ctr_set_init(struct ctr_set *s);
/* n = 0; keeps the memory and the names for the next snapshot. */
void ctr_set_clear(struct ctr_set *s);
void ctr_set_free(struct ctr_set *s);
/* Append name = v; returns -1 when out of memory.  No allocation when
 * the name is the one held at this position since the last clear. */
int ctr_set_add(struct ctr_set *s, const char *name, double v, int kind);
/* The same for "a.b" and "a.b.c" (joined here: no printf per value);
 * names longer than 511 bytes are cut. */
int ctr_set_add2(struct ctr_set *s, const char *a, const char *b, double v,
                 int kind);
int ctr_set_add3(struct ctr_set *s, const char *a, const char *b,
                 const char *c, double v, int kind);
/* Index of name, or -1 (linear: tests and small sets). */
long ctr_set_find(const struct ctr_set *s, const char *name);

#endif
