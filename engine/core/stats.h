/*
 * stats.h - full-resolution latency samples and the summary every
 * measuring family reports (min, mean, stdev, percentiles, max).
 *
 * Samples are kept whole, not bucketed: runs are bounded (iterations or
 * duration) and exact percentiles are what perftest and warp print.
 * Percentiles use the nearest-rank method on the sorted samples.
 */
#ifndef STRATA_STATS_H
#define STRATA_STATS_H

#include <stddef.h>
#include <stdint.h>

struct stats_samples {
  double *v;        /* samples, any unit the caller picks */
  size_t n;         /* samples recorded */
  size_t cap;       /* allocated slots */
  int sorted;       /* v is sorted ascending */
};

struct stats_summary {
  size_t n;
  double min, max, mean, stdev;
  double p50, p90, p95, p99, p999;
};

/* Reserve room for cap samples up front (hot loops must not allocate).
 * Returns 0, or -1 when out of memory. */
int stats_init(struct stats_samples *s, size_t cap);
/* Append one sample; grows the array when full. -1 when out of memory. */
int stats_add(struct stats_samples *s, double x);
/* Percentile p in [0,100], nearest rank; sorts on first use. NaN if empty. */
double stats_percentile(struct stats_samples *s, double p);
/* Fill sum with every figure; n = 0 and NaNs when empty. */
void stats_summarize(struct stats_samples *s, struct stats_summary *sum);
/* Merge b's samples into a (per-thread samples summed after join). */
int stats_merge(struct stats_samples *a, const struct stats_samples *b);
void stats_free(struct stats_samples *s);

#endif
