/*
 * stage.h - model staging time: a model's shards GET from S3 into one
 * buffer in host or GPU memory (the T3 path: S3 over TCP, through a
 * pinned staging chunk per connection and a copy to the device), timed
 * from the first request to the last byte in place.  On the s3 family's
 * client (s3.h) and the cuda family's C API (cuda.h).  No lua.h.
 */
#ifndef STRATA_LLM_STAGE_H
#define STRATA_LLM_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "s3.h"

struct llm_stage_opts {
  const struct s3_config *cfg;
  const char *bucket;
  const struct s3_object *shards;  /* sizes from the listing */
  size_t n;
  int concurrency;      /* connections, each GETs whole shards */
  int gpu;              /* 1: into GPU memory (device), 0: host memory */
  int device;
  size_t chunk;         /* pinned staging chunk (GPU); 0 = 8 MiB */
};

struct llm_stage_result {
  uint64_t bytes;       /* landed */
  double seconds;       /* first request start to last byte in place */
  double first_byte_s;  /* to the first byte of any shard */
  size_t failed;        /* shards that did not land whole */
  double copy_s;        /* summed host->device copy time (GPU) */
  char error[320];      /* the first failure */
};

/* 0 with r filled (failed shards counted, the first named in error); -1
 * with error set when it cannot start (memory, no connection); -2 when
 * GPU memory was asked for and there is none (error says why). */
int llm_stage(const struct llm_stage_opts *o, struct llm_stage_result *r);

#endif
