/*
 * prom.h - the server's RDMA byte counters, read the two ways a site has
 * them: a Prometheus exposition endpoint scraped directly (AIStor's
 * /minio/metrics/v3/api/rdma, the reference server's /metrics), or an
 * existing Prometheus server's instant-query API.  No lua.h.
 */
#ifndef STRATA_S3RDMA_PROM_H
#define STRATA_S3RDMA_PROM_H

#include <stddef.h>

#define S3RDMA_METRIC_READ "minio_api_rdma_read_bytes_total"
#define S3RDMA_METRIC_WRITE "minio_api_rdma_write_bytes_total"

/*
 * Sum of every sample of metric name (any labels) in exposition text.
 * Returns the number of samples found (0: absent), *out their sum.
 */
int s3rdma_prom_sum(const char *text, const char *name, double *out);

/*
 * GET url (timeout_ms; bearer: a token for "Authorization: Bearer", or
 * NULL) into a malloc'd NUL-ended *body.  Returns the HTTP status, or -1
 * with err (no secrets) when no reply came.
 */
long s3rdma_http_get(const char *url, const char *bearer, long timeout_ms,
                     char **body, char *err, size_t cap);

/*
 * The value of a Prometheus instant query's first result
 * ({"data":{"result":[{"value":[t,"v"]}]}}) in json.  0, or -1 when the
 * reply holds no result.
 */
int s3rdma_prom_query_value(const char *json, double *out);

#endif
