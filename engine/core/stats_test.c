/* stats_test.c - nearest-rank percentiles and summary on known data. */
#include <assert.h>
#include <math.h>
#include <stdio.h>

#include "stats.h"

int main(void)
{
  struct stats_samples s;
  struct stats_summary sum;

  assert(stats_init(&s, 4) == 0);
  assert(isnan(stats_percentile(&s, 50)));
  for(int i = 100; i >= 1; i--)       /* reverse order: sort must happen */
    assert(stats_add(&s, (double)i) == 0);
  assert(stats_percentile(&s, 50) == 50);
  assert(stats_percentile(&s, 99) == 99);
  assert(stats_percentile(&s, 99.9) == 100);
  assert(stats_percentile(&s, 0) == 1);
  stats_summarize(&s, &sum);
  assert(sum.n == 100 && sum.min == 1 && sum.max == 100);
  assert(fabs(sum.mean - 50.5) < 1e-9);
  assert(fabs(sum.stdev - 29.011491975882016) < 1e-9);
  assert(sum.p95 == 95);

  struct stats_samples b;
  assert(stats_init(&b, 0) == 0);
  assert(stats_add(&b, 1000) == 0);
  assert(stats_merge(&s, &b) == 0);
  assert(stats_percentile(&s, 100) == 1000);
  stats_free(&b);
  stats_free(&s);
  printf("stats_test: ok\n");
  return 0;
}
