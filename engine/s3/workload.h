/*
 * workload.h - the S3 workload engine: N threads, one kept-alive
 * connection each, running GET, PUT, mixed GET/PUT or multipart uploads
 * for a count of operations or a duration, after a warm-up.
 *
 * Method (as warp and wrk measure): an operation is timed from the
 * request's start to its last byte on CLOCK_MONOTONIC, time to first byte
 * from curl's start-transfer time.  Operations that start during the
 * warm-up are run but not recorded.  Throughput = bytes of recorded
 * operations / (end of the last recorded operation - end of warm-up).
 * Duration mode: no operation starts after the window, except each
 * thread's first recorded one (an object slower than the window is still
 * measured once).
 * Every sample is kept (stats.h: exact percentiles).  Errors are counted
 * by HTTP status + S3 code, or by transport failure; the run goes on.
 */
#ifndef STRATA_S3_WORKLOAD_H
#define STRATA_S3_WORKLOAD_H

#include <stdint.h>

#include "s3.h"
#include "stats.h"

enum s3w_op { S3W_GET, S3W_PUT, S3W_MIXED, S3W_MULTIPART };

/*
 * Where GET data lands and PUT data comes from.  HOST: payload.h (GET
 * into a host buffer, PUT from the regenerable pattern).  CUDA (T3): GET
 * into a pinned host buffer then cudaMemcpy to a device buffer, PUT
 * copies the device buffer to pinned host memory first; the copy is timed
 * as part of the operation (engine/cuda's C API).
 */
enum s3w_mem { S3W_HOST, S3W_CUDA };

#define S3W_ABSENT (-2)   /* s3w_run: a prerequisite is absent (SKIP) */

struct s3w_params {
  enum s3w_op op;
  const char *bucket;
  const char *prefix;       /* keys are <prefix><index> */
  uint64_t size;            /* object size, bytes */
  int concurrency;          /* threads (multipart: parts in flight) */
  uint64_t count;           /* recorded operations; 0: use duration */
  double duration_s;        /* recorded time when count == 0 */
  double warmup_s;          /* unrecorded time first */
  double get_ratio;         /* mixed: fraction of GETs, 0..1 */
  int objects;              /* distinct keys used by GET/PUT/mixed */
  int prepare;              /* PUT every key once before a GET/mixed run */
  uint64_t part_size;       /* multipart part size */
  uint64_t range_len;       /* GET: ranged reads of this length; 0: full */
  int verify;               /* GET: compare every byte with what was PUT */
  enum s3w_mem memory;
  int device;               /* CUDA device index for S3W_CUDA */
  uint64_t seed;
  uint64_t host_buffer_max; /* GET host buffers above this become rings */
};

/* One kind of failure and how often it happened. */
struct s3w_error {
  long status;              /* HTTP status, 0 for a transport failure */
  char code[64];            /* S3 code, or the failure kind */
  uint64_t count;
};

#define S3W_MAX_ERRORS 32

struct s3w_result {
  uint64_t ops, bytes;              /* recorded, successful */
  uint64_t get_ops, get_bytes, put_ops, put_bytes;
  uint64_t warmup_ops, warmup_bytes;  /* run but not recorded */
  uint64_t prepare_bytes;           /* PUT before a GET/mixed run */
  uint64_t errors;                  /* recorded failed operations */
  uint64_t verify_failures;         /* GETs whose bytes differed */
  double elapsed_s;                 /* the recorded window */
  struct stats_samples lat;         /* seconds, every recorded op */
  struct stats_samples ttfb;        /* seconds, every recorded op */
  struct stats_samples lat_get, lat_put;   /* mixed: by kind */
  struct s3w_error err[S3W_MAX_ERRORS];
  int nerr;                         /* distinct kinds in err */
  uint64_t err_other;               /* beyond S3W_MAX_ERRORS kinds */
  double cpu_user_s, cpu_sys_s;     /* this process over the window */
  double host_cpu_util;             /* whole host, 0..1, over the window */
  int ncpu;
  uint64_t mp_uploads;              /* multipart: objects completed */
  double gpu_copy_s;                /* S3W_CUDA: time in host<->device
                                       copies of recorded ops */
  char first_error[256];            /* the first failure, described */
};

/*
 * Run the workload on cfg.  Fills *res (free with s3w_result_free).
 * Returns 0 when the run happened (its errors are counted in res), -1
 * when it could not run at all (err says why: no memory, no threads,
 * preparation failed), S3W_ABSENT when a prerequisite is missing (no
 * CUDA, no GPU: err holds the reason).
 */
int s3w_run(const struct s3_config *cfg, const struct s3w_params *p,
            struct s3w_result *res, char *err, size_t cap);

void s3w_result_free(struct s3w_result *res);

/* Record one failure kind (used by the workload threads' merge). */
void s3w_count_error(struct s3w_result *res, long status, const char *code,
                     uint64_t n);

#endif
