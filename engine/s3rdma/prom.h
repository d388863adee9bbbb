/*
 * prom.h - AIStor's S3-over-RDMA counters (GET -> read_*, PUT and
 * UploadPart -> write_*; docs/s3-rdma.md "Counters"): their names, and the reply of
 * an existing Prometheus server's instant-query API.  No lua.h.
 */
#ifndef STRATA_S3RDMA_PROM_H
#define STRATA_S3RDMA_PROM_H

#include <stddef.h>

#define S3RDMA_METRIC_READ "minio_api_rdma_read_bytes_total"
#define S3RDMA_METRIC_WRITE "minio_api_rdma_write_bytes_total"
#define S3RDMA_METRIC_READ_OPS "minio_api_rdma_read_ops_total"
#define S3RDMA_METRIC_WRITE_OPS "minio_api_rdma_write_ops_total"

/*
 * The value of a Prometheus instant query's first result
 * ({"data":{"result":[{"value":[t,"v"]}]}}) in json.  0, or -1 when the
 * reply holds no result.  (Exposition text is read with the counters
 * family's prom_fetch / prom_sum.)
 */
int s3rdma_prom_query_value(const char *json, double *out);

#endif
