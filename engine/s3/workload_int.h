/*
 * workload_int.h - what workload.c (GET/PUT/mixed) and mpload.c
 * (multipart) share: the run clock, CPU sampling, result bookkeeping.
 */
#ifndef STRATA_S3_WORKLOAD_INT_H
#define STRATA_S3_WORKLOAD_INT_H

#include <pthread.h>
#include <stdint.h>

#include "workload.h"

struct s3w_clock {
  uint64_t t_start;      /* threads released */
  uint64_t t_measure;    /* end of warm-up: recording starts */
  uint64_t t_deadline;   /* duration mode: no op starts after; 0 = none */
  uint64_t t_end;        /* end of the last recorded op */
};

struct s3w_cpu {
  double user_s, sys_s;         /* this process */
  uint64_t host_busy, host_all; /* /proc/stat jiffies */
};

void s3w_clock_start(struct s3w_clock *clk, const struct s3w_params *p);
/* Sleep until clk->t_measure (or the stop flag). */
void s3w_wait_measure(const struct s3w_clock *clk);
void s3w_cpu_sample(struct s3w_cpu *c);
/* Window, CPU figures into res once the threads are joined. */
void s3w_finish(struct s3w_result *res, const struct s3w_clock *clk,
                const struct s3w_cpu *a, const struct s3w_cpu *b);

int s3w_result_init(struct s3w_result *r);
/* Add b's counts, samples and errors into a; 0 or -1 (no memory). */
int s3w_result_merge(struct s3w_result *a, const struct s3w_result *b);
/* Count a failed request (transport failure or non-2xx reply). */
void s3w_record_failure(struct s3w_result *r, const struct s3_req *q,
                        const struct s3_resp *resp);

/* pthread_create with a small stack (512 threads must fit). */
int s3w_spawn(pthread_t *t, void *(*fn)(void *), void *arg);

/* The multipart workload (mpload.c). */
int s3w_multipart(const struct s3_config *cfg, const struct s3w_params *p,
                  struct s3w_result *res, char *err, size_t cap);

#endif
