/*
 * metrics.h - scrape a Prometheus text exposition (ceph-mgr's
 * /metrics, AIStor's /minio/metrics/v3/...) and add up its series.
 */
#ifndef STRATA_S3_METRICS_H
#define STRATA_S3_METRICS_H

#include <stddef.h>

struct prom_sample {
  char *series;          /* "name{labels}" as exposed (malloc'd) */
  size_t name_len;       /* length of the bare metric name */
  double value;
};

struct prom_set {
  struct prom_sample *v;
  size_t n, cap;
};

/*
 * GET url (Authorization: Bearer <bearer> when bearer is non-NULL, never
 * printed) and parse it into *out.  Returns 0, or -1 with err naming the
 * URL and the failure (HTTP status, curl error, timeout).
 */
int prom_scrape(const char *url, const char *bearer, const char *ca_bundle,
                long timeout_ms, struct prom_set *out, char *err,
                size_t cap);

/* Parse exposition text (comments and blank lines skipped); 0 or -1. */
int prom_parse(const char *text, struct prom_set *out);

/* Sum of every series of metric `name` (any labels); 0 when absent. */
double prom_sum(const struct prom_set *s, const char *name, int *found);

void prom_free(struct prom_set *s);

#endif
