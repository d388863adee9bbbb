/*
 * workload.h - S3 transfers measured wholly in C: GET (whole or ranged),
 * PUT, or multipart upload, over plain HTTP ("tcp") or S3 over RDMA
 * ("rc": hipobj-rc-v2), by `concurrency` threads, each with its own
 * connection, QP and registered buffer, as warp does it (one request in
 * flight per worker, latency = request start to last byte / completion).
 * No lua.h: the binding converts options and results.
 */
#ifndef STRATA_S3RDMA_WORKLOAD_H
#define STRATA_S3RDMA_WORKLOAD_H

#include <stdint.h>

#include "cuobj_desc.h"
#include "s3.h"
#include "stats.h"

/* The transport, i.e. the token provider: plain HTTP, hipobj-rc-v2 (RC,
 * plain libibverbs), or NVIDIA cuObject (DC, one round trip). */
enum s3rdma_mode { S3RDMA_MODE_TCP = 0, S3RDMA_MODE_RC, S3RDMA_MODE_CUOBJ };
enum s3rdma_op { S3RDMA_OP_GET = 0, S3RDMA_OP_PUT, S3RDMA_OP_MULTIPART };

struct s3rdma_run_opts {
  const struct s3_config *data_cfg;   /* plain S3 (service "s3") */
  const struct s3_config *ctrl_cfg;   /* control path ("hipobj") */
  const char *dev;                    /* RDMA device, NULL = first */
  int port, gid_index;                /* 1-based; -1 = auto */
  enum s3rdma_mode mode;
  enum s3rdma_op op;
  const char *bucket, *prefix;        /* objects <prefix><n> */
  uint64_t size;                      /* object size */
  uint64_t range_off, range_len;      /* GET range (len 0: whole) */
  uint64_t part_size;                 /* multipart */
  int objects;                        /* distinct objects (>= 1) */
  int concurrency;                    /* worker threads (>= 1) */
  int requests;                       /* GET/PUT requests; multipart:
                                         uploads (= objects) */
  uint64_t seed;                      /* pattern seed of the run */
  int verify;                         /* check GET bytes */
  int readback;                       /* PUT/multipart: GET back over
                                         HTTP and check every byte */
  int http_fallback;                  /* retry a DECLINED request over
                                         HTTP, counted apart */
  double landing_grace_s;             /* wait for the IMM after READY */
  double put_grace_s;                 /* RC PUT: READY out -> WRITE; < 0:
                                         S3RDMA_PUT_GRACE_NS */
  int gpu_memory;                     /* transfers land in / leave from
                                         CUDA device memory (RDMA: a
                                         dma-buf MR; HTTP: a copy through
                                         host memory, timed) */
  int gpu_device;                     /* CUDA device index */
  enum s3rdma_token_contract contract;  /* cuObject: token form */
  int ctrl_host_port;                 /* RC control path: sign host:port
                                         (else host only, the default) */
  double timeout_s;                   /* whole run; 0 = none */
};

struct s3rdma_run_result {
  uint64_t requests, ok, declined, failed;
  uint64_t bytes;                     /* moved by the chosen transport */
  uint64_t fallback_requests, fallback_bytes;   /* DECLINED -> HTTP */
  uint64_t reply_ok, landed_ok;       /* witnesses 1 and 2 per request */
  uint64_t verified, verify_errors;   /* bytes checked / found wrong */
  uint64_t readback_ok, readback_errors;
  uint64_t rdma_get_bytes, rdma_put_bytes;  /* what the server's
                                               write/read counters must
                                               show */
  uint64_t duration_ns;
  double cpu_s;                       /* this process, user + system */
  int ncpu;
  struct stats_samples lat_ms;        /* per request */
  char first_error[400];              /* "<step>: <why>", "" when none */
  char setup_error[400];              /* the run could not start */
  int setup_skip;                     /* setup_error is a SKIP reason */
  uint64_t gpu_copy_errors;           /* staging copies that failed */
  int cuda_threads_bound;             /* workers that had a current CUDA
                                         context (memory "cuda") */
  char token_decoded[160];            /* cuObject: the first descriptor's
                                         fields (no secret in them) */
};

/*
 * Run the workload; fills *res (stats_free(&res->lat_ms) after).  Returns
 * 0 when it ran (whatever the per-request outcomes), -1 when it could not
 * start (res->setup_error; res->setup_skip when a prerequisite is
 * absent: no RDMA device).
 */
int s3rdma_run(const struct s3rdma_run_opts *o,
               struct s3rdma_run_result *res);

#endif
