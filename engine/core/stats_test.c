/* stats_test.c - nearest-rank percentiles and summary on known data. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "stats.h"

int main(void)
{
  struct stats_samples s;
  struct stats_samples b;
  struct stats_summary sum;

  if(stats_init(&s, 4) || stats_init(&b, 0)) {
    fprintf(stderr, "stats_test: stats_init failed\n");
    return 1;
  }
  CHECK(isnan(stats_percentile(&s, 50)));
  for(int i = 100; i >= 1; i--)       /* reverse order: sort must happen */
    CHECK(stats_add(&s, (double)i) == 0);
  CHECK(stats_percentile(&s, 50) == 50);
  CHECK(stats_percentile(&s, 99) == 99);
  CHECK(stats_percentile(&s, 99.9) == 100);
  CHECK(stats_percentile(&s, 0) == 1);
  stats_summarize(&s, &sum);
  CHECK(sum.n == 100 && sum.min == 1 && sum.max == 100);
  CHECK(fabs(sum.mean - 50.5) < 1e-9);
  CHECK(fabs(sum.stdev - 29.011491975882016) < 1e-9);
  CHECK(sum.p95 == 95);

  CHECK(stats_add(&b, 1000) == 0);
  CHECK(stats_merge(&s, &b) == 0);
  CHECK(stats_percentile(&s, 100) == 1000);
  stats_free(&b);
  stats_free(&s);
  return check_result("stats_test");
}
