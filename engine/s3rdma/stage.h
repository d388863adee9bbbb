/*
 * stage.h - model staging over S3 over RDMA (the T4 path): a model's
 * named shards GET by key straight into one registered buffer, host or
 * GPU memory, each shard at its offset, the way llm.stage does it over
 * S3/TCP (engine/llm/stage.h) but with the bytes moved by RDMA: through
 * hipobj-rc-v2 (rc_client.h: PREPARE -> connect -> READY, the server
 * RDMA-WRITEs into the buffer) or the cuObject one-round-trip form
 * (single.h, a descriptor minted for the region by libcuobjclient).
 * A shard larger than `piece` moves as ranged GETs (x-amz-rdma-offset /
 * Range) of at most piece bytes.  Timed from the first request to the
 * last byte landed; every transfer's witnesses are counted.  No lua.h.
 */
#ifndef STRATA_S3RDMA_STAGE_H
#define STRATA_S3RDMA_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "cuobj_desc.h"
#include "s3.h"
#include "workload.h"

struct s3rdma_stage_opts {
  const struct s3_config *data_cfg;   /* plain S3 (cuObject; verify) */
  const struct s3_config *ctrl_cfg;   /* hipobj-rc-v2 control path */
  const char *dev;                    /* RDMA device, NULL = first */
  int port, gid_index;
  enum s3rdma_mode mode;              /* S3RDMA_MODE_RC or _CUOBJ */
  const char *bucket;
  const struct s3_object *shards;     /* sizes as listed */
  size_t n;
  int concurrency;                    /* workers, one transfer each */
  uint64_t piece;                     /* bytes per transfer (ranged) */
  int gpu_memory, gpu_device;         /* land in CUDA device memory */
  int verify;                         /* GET every shard again over HTTP
                                         and compare with what landed */
  double landing_grace_s;
  int ctrl_host_port;
  enum s3rdma_token_contract contract;
};

struct s3rdma_stage_result {
  uint64_t bytes;             /* landed, by RDMA */
  double seconds;             /* first request to last byte landed */
  double first_byte_s;        /* to the first transfer's completion */
  size_t failed;              /* shards not landed whole */
  uint64_t transfers, reply_ok, landed_ok, declined;
  uint64_t verified, verify_errors;   /* shards compared / differing */
  double cpu_s;
  char error[400];            /* the first failure, "<step>: <why>" */
  int setup_skip;             /* error is a reason to SKIP (no device,
                                 no GPU, no cuObject) */
};

/* 0 when it ran (per-shard failures counted), -1 when it could not start
 * (r->error; r->setup_skip when a prerequisite is absent). */
int s3rdma_stage(const struct s3rdma_stage_opts *o,
                 struct s3rdma_stage_result *r);

#endif
