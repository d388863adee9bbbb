/*
 * coll.h - NCCL collectives measured as nccl-tests measures them
 * (NVIDIA/nccl-tests a0b82b2, v2.19.6: src/common.cu, src/<coll>.cu), in
 * one process with one communicator per GPU.  docs/nccl.md has the
 * method; the pure parts (byte counts, bandwidth factors, the size sweep)
 * are here so the unit test checks them without a GPU.
 */
#ifndef STRATA_NCCL_COLL_H
#define STRATA_NCCL_COLL_H

#include <stddef.h>

enum nccl_coll {
  NC_ALL_REDUCE = 0, NC_ALL_GATHER, NC_BROADCAST, NC_REDUCE_SCATTER,
  NC_REDUCE, NC_ALLTOALL, NC_SENDRECV, NC_COLLS
};

/* nccl-tests' names (the <name>_perf binaries). */
extern const char *const nccl_coll_names[NC_COLLS];
/* nccl-tests' -d and -o names: test_typenames, test_opnames. */
extern const char *const nccl_dtype_names[];   /* NV_DTYPES of them */
extern const char *const nccl_op_names[];      /* NV_OPS of them */

int nccl_coll_find(const char *name);   /* -1 unknown */
int nccl_dtype_find(const char *name);
int nccl_op_find(const char *name);
/* Whether the collective reduces (takes an op) / has a root. */
int nccl_coll_reduces(int coll);
int nccl_coll_rooted(int coll);

/* Element counts of one size, as <coll>GetCollByteCount. */
struct nccl_counts {
  size_t send, recv, param, send_inplace_off, recv_inplace_off;
};
void nccl_coll_counts(int coll, size_t count, size_t elt, int nranks,
                      struct nccl_counts *c);

/* <coll>GetBw: algbw = bytes / 1e9 / sec, busbw = algbw x factor. */
double nccl_bus_factor(int coll, int nranks);
void nccl_coll_bw(int coll, size_t param, size_t elt, double sec,
                  int nranks, double *algbw, double *busbw);

/* The sizes of -b min -e max with -f factor (> 1) or -i step; at most
 * cap of them written, the number the sweep has returned. */
int nccl_sweep_sizes(size_t min, size_t max, size_t factor, size_t step,
                     size_t *out, int cap);

#define NCCL_MAX_DEVS 64
#define NCCL_MAX_SIZES 128

struct nccl_opts {
  int coll, dtype, op, root;
  int ndev, devs[NCCL_MAX_DEVS];
  size_t min_bytes, max_bytes, factor, step;
  int warmup, iters;
  int check;            /* count wrong elements after each half */
  int nvls;             /* leave NCCL_NVLS_ENABLE as it is; else set 0 */
  int alltoall_grouped; /* alltoall by grouped send/recv even where
                           ncclAlltoAll exists (nccl-tests uses it) */
};

struct nccl_half {
  double time_us;       /* the chosen timer's time per iteration */
  double host_us;       /* nccl-tests' timer: host clock, launch -> sync */
  double event_us;      /* CUDA events around the iterations, slowest GPU */
  double algbw, busbw;  /* GB/s from time_us */
  long long wrong;      /* -1 not checked */
};

struct nccl_row {
  size_t size, count;   /* size = max(send, recv) bytes; count = param */
  struct nccl_half oop, ip;
};

struct nccl_result {
  int nranks, version, nrows;
  int use_events;
  int alltoall_grouped; /* alltoall ran as grouped send/recv */
  char library[256];
  struct nccl_row rows[NCCL_MAX_SIZES];
};

/*
 * Run the sweep: communicators on o->devs (grouped ncclCommInitRank, as
 * nccl-tests in one process), buffers of max_bytes, warm-up of every size
 * (factor 2, out of place), then for each size out-of-place and in-place
 * timed and checked.  use_events: time_us from CUDA events (else the host
 * clock as nccl-tests).  CUDA_ABSENT (SKIP) when CUDA, a GPU or NCCL is
 * missing; CUDA_FAILED with "<step>: <reason>" otherwise.
 */
int nccl_run(const struct nccl_opts *o, int use_events,
             struct nccl_result *r, char *err, size_t len);

#endif
