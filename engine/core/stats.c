/*
 * stats.c - exact percentiles over full-resolution samples.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

int stats_init(struct stats_samples *s, size_t cap)
{
  memset(s, 0, sizeof(*s));
  if(!cap)
    return 0;
  s->v = malloc(cap * sizeof(double));
  if(!s->v)
    return -1;
  s->cap = cap;
  return 0;
}

static int grow(struct stats_samples *s, size_t need)
{
  size_t cap = s->cap ? s->cap : 1024;
  double *v;
  while(cap < need)
    cap *= 2;
  if(cap == s->cap)
    return 0;
  v = realloc(s->v, cap * sizeof(double));
  if(!v)
    return -1;
  s->v = v;
  s->cap = cap;
  return 0;
}

int stats_add(struct stats_samples *s, double x)
{
  if(s->n == s->cap && grow(s, s->n + 1))
    return -1;
  s->v[s->n++] = x;
  s->sorted = 0;
  return 0;
}

int stats_merge(struct stats_samples *a, const struct stats_samples *b)
{
  if(grow(a, a->n + b->n))
    return -1;
  memcpy(a->v + a->n, b->v, b->n * sizeof(double));
  a->n += b->n;
  a->sorted = 0;
  return 0;
}

static int cmp_double(const void *pa, const void *pb)
{
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

double stats_percentile(struct stats_samples *s, double p)
{
  size_t rank;
  if(!s->n)
    return NAN;
  if(!s->sorted) {
    qsort(s->v, s->n, sizeof(double), cmp_double);
    s->sorted = 1;
  }
  if(p <= 0)
    return s->v[0];
  if(p >= 100)
    return s->v[s->n - 1];
  /* nearest rank: the smallest sample with at least p% at or below it */
  rank = (size_t)ceil(p / 100.0 * (double)s->n);
  if(rank < 1)
    rank = 1;
  return s->v[rank - 1];
}

void stats_summarize(struct stats_samples *s, struct stats_summary *sum)
{
  double total = 0, m2 = 0, mean = 0;
  memset(sum, 0, sizeof(*sum));
  sum->n = s->n;
  if(!s->n) {
    sum->min = sum->max = sum->mean = sum->stdev = NAN;
    sum->p50 = sum->p90 = sum->p95 = sum->p99 = sum->p999 = NAN;
    return;
  }
  for(size_t i = 0; i < s->n; i++)
    total += s->v[i];
  mean = total / (double)s->n;
  for(size_t i = 0; i < s->n; i++)
    m2 += (s->v[i] - mean) * (s->v[i] - mean);
  sum->mean = mean;
  sum->stdev = s->n > 1 ? sqrt(m2 / (double)(s->n - 1)) : 0;
  sum->p50 = stats_percentile(s, 50);
  sum->p90 = stats_percentile(s, 90);
  sum->p95 = stats_percentile(s, 95);
  sum->p99 = stats_percentile(s, 99);
  sum->p999 = stats_percentile(s, 99.9);
  sum->min = s->v[0];
  sum->max = s->v[s->n - 1];
}

void stats_free(struct stats_samples *s)
{
  free(s->v);
  memset(s, 0, sizeof(*s));
}
