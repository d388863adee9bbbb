/*
 * coll.c - see coll.h.  The measurement follows nccl-tests
 * (NVIDIA/nccl-tests a0b82b2, src/common.cu TimeTest / BenchTime /
 * startColl; the byte counts and factors of src/<coll>.cu); the code is
 * strata's own.  Built without CUDA only the pure parts and a stub exist.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "../cuda/cuda.h"  /* not the toolkit's cuda.h */
#include "lib.h"
#include "strata.h"
#include "value.h"

const char *const nccl_coll_names[NC_COLLS] = {
  "all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce",
  "alltoall", "sendrecv"
};
const char *const nccl_dtype_names[NV_DTYPES] = {
  "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float",
  "double", "bfloat16"
};
const char *const nccl_op_names[NV_OPS] = {
  "sum", "prod", "max", "min", "avg"
};

static int find(const char *const *names, int n, const char *name)
{
  for(int i = 0; i < n; i++)
    if(!strcmp(names[i], name))
      return i;
  return -1;
}

int nccl_coll_find(const char *name)
{ return find(nccl_coll_names, NC_COLLS, name); }
int nccl_dtype_find(const char *name)
{ return find(nccl_dtype_names, NV_DTYPES, name); }
int nccl_op_find(const char *name)
{ return find(nccl_op_names, NV_OPS, name); }

int nccl_coll_reduces(int c)
{
  return c == NC_ALL_REDUCE || c == NC_REDUCE_SCATTER || c == NC_REDUCE;
}

int nccl_coll_rooted(int c) { return c == NC_BROADCAST || c == NC_REDUCE; }

void nccl_coll_counts(int coll, size_t count, size_t elt, int nranks,
                      struct nccl_counts *c)
{
  size_t n = (size_t)(nranks > 0 ? nranks : 1);
  /* (count / nranks) rounded down to whole 16-byte units */
  size_t base = (count / n) & ~(16 / elt - 1);
  memset(c, 0, sizeof(*c));
  switch(coll) {
  case NC_ALL_GATHER:
    c->send = c->param = c->send_inplace_off = base;
    c->recv = base * n;
    break;
  case NC_REDUCE_SCATTER:
    c->send = base * n;
    c->recv = c->param = c->recv_inplace_off = base;
    break;
  case NC_ALLTOALL:
    c->param = base;
    c->send = c->recv = base * n;
    break;
  default:  /* all_reduce, broadcast, reduce, sendrecv */
    c->send = c->recv = c->param = count;
  }
}

double nccl_bus_factor(int coll, int nranks)
{
  double n = nranks;
  switch(coll) {
  case NC_ALL_REDUCE: return 2.0 * (n - 1) / n;
  case NC_ALL_GATHER: case NC_REDUCE_SCATTER: case NC_ALLTOALL:
    return (n - 1) / n;
  default: return 1;
  }
}

void nccl_coll_bw(int coll, size_t param, size_t elt, double sec,
                  int nranks, double *algbw, double *busbw)
{
  double bytes = (double)param * (double)elt;
  if(coll == NC_ALL_GATHER || coll == NC_REDUCE_SCATTER ||
     coll == NC_ALLTOALL)
    bytes *= nranks;
  *algbw = sec > 0 ? bytes / 1.0e9 / sec : 0;
  *busbw = *algbw * nccl_bus_factor(coll, nranks);
}

int nccl_sweep_sizes(size_t min, size_t max, size_t factor, size_t step,
                     size_t *out, int cap)
{
  int n = 0;
  for(size_t s = min; s <= max;) {
    if(n < cap)
      out[n] = s;
    n++;
    if(factor > 1 && s > 0)
      s *= factor;
    else if(step > 0)
      s += step;
    else
      break;
  }
  return n;
}

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime_api.h>

int strata_nccl_fill(void *buf, size_t n, int dtype, int op, int nranks,
                     int rank, unsigned long long off, unsigned seed,
                     int sms, cudaStream_t s);
int strata_nccl_check(const void *buf, size_t n, const struct nv_expect *e,
                      unsigned long long *wrong, int sms, cudaStream_t s);

struct rank {
  int dev, sms;
  nccl_comm comm;
  cudaStream_t st;
  cudaEvent_t e0, e1;
  char *send, *recv;
  unsigned long long *wrong;   /* device counter of the check kernel */
};

struct run {
  const struct nccl_opts *o;
  const struct nccl_api *nc;
  struct rank r[NCCL_MAX_DEVS];
  int n;
  size_t elt, buf_bytes;
  struct nccl_counts c;        /* of the current size */
  unsigned seed;
  int a2a_grouped;
  char *err;
  size_t len;
};

static int nccl_fail(struct run *x, const char *what, nccl_result e,
                     nccl_comm comm)
{
  const char *last = x->nc->ncclGetLastError(comm);
  snprintf(x->err, x->len, "%s: %s (%d)%s%s", what,
           x->nc->ncclGetErrorString(e), e, last && *last ? ": " : "",
           last ? last : "");
  return CUDA_FAILED;
}

static int cuda_fail(struct run *x, const char *what, cudaError_t e)
{
  snprintf(x->err, x->len, "%s: %s %s (%d)", what, cudaGetErrorName(e),
           cudaGetErrorString(e), (int)e);
  return CUDA_FAILED;
}

#define NC(call, what, comm) \
  do { nccl_result nc_e = (call); \
       if(nc_e != 0) return nccl_fail(x, what, nc_e, comm); } while(0)
#define CU(call, what) \
  do { cudaError_t cu_e = (call); \
       if(cu_e != cudaSuccess) return cuda_fail(x, what, cu_e); } while(0)

/* The sizes of one -b/-e point, as nccl-tests' setupArgs. */
static void setup(struct run *x, size_t size)
{
  nccl_coll_counts(x->o->coll, size / x->elt, x->elt, x->n, &x->c);
}

/* startColl: one collective on every rank, each iteration at another
 * offset of the buffers (nccl-tests: "avoid cache effects"). */
static int launch(struct run *x, int in_place, int iter)
{
  const struct nccl_opts *o = x->o;
  const struct nccl_api *nc = x->nc;
  size_t total = (x->c.send > x->c.recv ? x->c.send : x->c.recv) * x->elt;
  size_t steps = total ? o->max_bytes / total : 1;
  size_t shift = total * ((size_t)iter % (steps ? steps : 1));
  size_t cnt = x->c.param, pb = cnt * x->elt;
  int n = x->n;

  if(n > 1)
    NC(nc->ncclGroupStart(), "ncclGroupStart", NULL);
  for(int i = 0; i < n; i++) {
    struct rank *r = &x->r[i];
    char *rb = r->recv + shift, *sb = r->send + shift;
    const char *sp = in_place ? rb + x->c.send_inplace_off * x->elt * i : sb;
    char *rp = rb + (in_place ? x->c.recv_inplace_off * x->elt * i : 0);
    switch(o->coll) {
    case NC_ALL_REDUCE:
      NC(nc->ncclAllReduce(sp, rp, cnt, o->dtype, o->op, r->comm, r->st),
         "ncclAllReduce", r->comm);
      break;
    case NC_ALL_GATHER:
      NC(nc->ncclAllGather(sp, rp, cnt, o->dtype, r->comm, r->st),
         "ncclAllGather", r->comm);
      break;
    case NC_BROADCAST:
      NC(nc->ncclBroadcast(sp, rp, cnt, o->dtype, o->root, r->comm, r->st),
         "ncclBroadcast", r->comm);
      break;
    case NC_REDUCE_SCATTER:
      NC(nc->ncclReduceScatter(sp, rp, cnt, o->dtype, o->op, r->comm,
                               r->st), "ncclReduceScatter", r->comm);
      break;
    case NC_REDUCE:
      NC(nc->ncclReduce(sp, rp, cnt, o->dtype, o->op, o->root, r->comm,
                        r->st), "ncclReduce", r->comm);
      break;
    case NC_ALLTOALL:
      /* as nccl-tests: ncclAlltoAll where NCCL has it (2.28+), else
       * grouped send/recv, one chunk per peer */
      if(!x->a2a_grouped) {
        NC(nc->ncclAlltoAll(sp, rp, cnt, o->dtype, r->comm, r->st),
           "ncclAlltoAll", r->comm);
        break;
      }
      NC(nc->ncclGroupStart(), "ncclGroupStart", NULL);
      for(int p = 0; p < n; p++) {
        NC(nc->ncclSend(sp + p * pb, cnt, o->dtype, p, r->comm, r->st),
           "ncclSend", r->comm);
        NC(nc->ncclRecv(rp + p * pb, cnt, o->dtype, p, r->comm, r->st),
           "ncclRecv", r->comm);
      }
      NC(nc->ncclGroupEnd(), "ncclGroupEnd", NULL);
      break;
    default:            /* sendrecv: to rank+1, from rank-1 (a ring) */
      NC(nc->ncclGroupStart(), "ncclGroupStart", NULL);
      NC(nc->ncclSend(sp, cnt, o->dtype, (i + 1) % n, r->comm, r->st),
         "ncclSend", r->comm);
      NC(nc->ncclRecv(rp, cnt, o->dtype, (i - 1 + n) % n, r->comm, r->st),
         "ncclRecv", r->comm);
      NC(nc->ncclGroupEnd(), "ncclGroupEnd", NULL);
    }
  }
  if(n > 1)
    NC(nc->ncclGroupEnd(), "ncclGroupEnd", NULL);
  return CUDA_OK;
}

/* testStreamSynchronize: poll every stream, watching NCCL's async error. */
static int sync_all(struct run *x)
{
  int left = x->n, done[NCCL_MAX_DEVS] = { 0 };
  while(left) {
    for(int i = 0; i < x->n; i++) {
      cudaError_t e;
      nccl_result ae = 0;
      if(done[i])
        continue;
      e = cudaStreamQuery(x->r[i].st);
      if(e == cudaSuccess) {
        done[i] = 1;
        left--;
        continue;
      }
      if(e != cudaErrorNotReady)
        return cuda_fail(x, "cudaStreamQuery", e);
      NC(x->nc->ncclCommGetAsyncError(x->r[i].comm, &ae),
         "ncclCommGetAsyncError", x->r[i].comm);
      if(ae != 0)
        return nccl_fail(x, "NCCL asynchronous error", ae, x->r[i].comm);
    }
    if(left)
      sched_yield();
  }
  return CUDA_OK;
}

static int value_op(const struct nccl_opts *o)
{
  return nccl_coll_reduces(o->coll) ? o->op : NV_SUM;
}

/* <coll>InitData: result buffers zeroed, each rank's input written. */
static int init_data(struct run *x, int in_place)
{
  const struct nccl_opts *o = x->o;
  size_t e = x->elt;
  x->seed = x->seed * 747796405u + 2891336453u;
  for(int i = 0; i < x->n; i++) {
    struct rank *r = &x->r[i];
    char *data = in_place ? r->recv : r->send;
    int s;
    CU(cudaSetDevice(r->dev), "cudaSetDevice");
    CU(cudaMemsetAsync(r->recv, 0, x->c.recv * e, r->st), "cudaMemset");
    if(o->coll == NC_ALL_GATHER && in_place)
      data = r->recv + (size_t)i * x->c.send * e;
    if(o->coll == NC_BROADCAST && i != o->root)
      continue;
    s = strata_nccl_fill(data, x->c.send, o->dtype, value_op(o), x->n,
                         o->coll == NC_BROADCAST ? o->root : i, 0, x->seed,
                         r->sms, r->st);
    if(s)
      return cuda_fail(x, "fill kernel", (cudaError_t)s);
  }
  return sync_all(x);
}

/* CheckData: the wrong elements of every rank's result, summed. */
static int check_data(struct run *x, int in_place, long long *wrong)
{
  const struct nccl_opts *o = x->o;
  int n = x->n;
  *wrong = 0;
  for(int i = 0; i < n; i++) {
    struct rank *r = &x->r[i];
    struct nv_expect ex = { .dtype = o->dtype, .op = value_op(o),
                            .nranks = n, .seed = x->seed };
    const char *buf = r->recv + (in_place ? x->c.recv_inplace_off * x->elt
                                            * (size_t)i : 0);
    int s;
    switch(o->coll) {
    case NC_ALL_REDUCE: ex.reduce = 1; break;
    case NC_REDUCE_SCATTER:
      ex.reduce = 1;
      ex.reduce_off = (uint64_t)i * x->c.recv;
      break;
    case NC_REDUCE:
      if(i != o->root)
        continue;
      ex.reduce = 1;
      break;
    case NC_ALL_GATHER: ex.chunk = x->c.send; break;
    case NC_ALLTOALL:
      ex.chunk = x->c.param;
      ex.src_off = (uint64_t)i * x->c.param;
      break;
    case NC_BROADCAST: ex.fixed_src = o->root; break;
    default: ex.fixed_src = (i - 1 + n) % n;
    }
    CU(cudaSetDevice(r->dev), "cudaSetDevice");
    CU(cudaMemsetAsync(r->wrong, 0, sizeof(*r->wrong), r->st), "cudaMemset");
    s = strata_nccl_check(buf, x->c.recv, &ex, r->wrong, r->sms, r->st);
    if(s)
      return cuda_fail(x, "check kernel", (cudaError_t)s);
  }
  if(sync_all(x) != CUDA_OK)
    return CUDA_FAILED;
  for(int i = 0; i < n; i++) {
    unsigned long long w = 0;
    if(o->coll == NC_REDUCE && i != o->root)
      continue;
    CU(cudaMemcpy(&w, x->r[i].wrong, sizeof(w), cudaMemcpyDeviceToHost),
       "cudaMemcpy");
    *wrong += (long long)w;
  }
  return CUDA_OK;
}

/* One timed pass of BenchTime's loop: iters calls back to back, then the
 * synchronise.  Each timer has a pass of its own: nccl-tests' host clock
 * spans the calls and the synchronise only (it records events only with
 * -I 1), and an event pair recorded inside that span added its host cost
 * to every call's share (bench/nccl/results/2026-12-06-h100-diag: 0.04-0.2
 * us of a 4 us call on one GPU, probe.c's "nt" against "st"). */
static int timed(struct run *x, int in_place, int events, double *us)
{
  const struct nccl_opts *o = x->o;
  uint64_t t0 = 0;
  float ms, worst = 0;
  for(int i = 0; events && i < x->n; i++)
    CU(cudaEventRecord(x->r[i].e0, x->r[i].st), "cudaEventRecord");
  if(!events)
    t0 = strata_now_ns();
  for(int it = 0; it < o->iters; it++)
    if(launch(x, in_place, it) != CUDA_OK)
      return CUDA_FAILED;
  for(int i = 0; events && i < x->n; i++)
    CU(cudaEventRecord(x->r[i].e1, x->r[i].st), "cudaEventRecord");
  if(sync_all(x) != CUDA_OK)
    return CUDA_FAILED;
  if(!events) {
    *us = (double)(strata_now_ns() - t0) / 1e3 / o->iters;
    return CUDA_OK;
  }
  for(int i = 0; i < x->n; i++) {
    CU(cudaEventElapsedTime(&ms, x->r[i].e0, x->r[i].e1),
       "cudaEventElapsedTime");
    if(ms > worst)
      worst = ms;
  }
  *us = (double)worst * 1e3 / o->iters;
  return CUDA_OK;
}

/* BenchTime: one half (out-of-place or in-place) of one size. */
static int bench(struct run *x, int in_place, int use_events,
                 struct nccl_half *h)
{
  const struct nccl_opts *o = x->o;
  if(o->check && init_data(x, in_place) != CUDA_OK)
    return CUDA_FAILED;
  if(launch(x, in_place, 0) != CUDA_OK || sync_all(x) != CUDA_OK ||
     timed(x, in_place, 0, &h->host_us) != CUDA_OK ||
     timed(x, in_place, 1, &h->event_us) != CUDA_OK)
    return CUDA_FAILED;
  h->time_us = use_events ? h->event_us : h->host_us;
  nccl_coll_bw(o->coll, x->c.param, x->elt, h->time_us / 1e6, x->n,
               &h->algbw, &h->busbw);
  h->wrong = -1;
  /* nccl-tests reports no #wrong for in-place alltoall and sendrecv */
  if(o->check && !(in_place && (o->coll == NC_ALLTOALL ||
                                o->coll == NC_SENDRECV))) {
    if(init_data(x, in_place) != CUDA_OK ||
       launch(x, in_place, 0) != CUDA_OK || sync_all(x) != CUDA_OK ||
       check_data(x, in_place, &h->wrong) != CUDA_OK)
      return CUDA_FAILED;
  }
  return CUDA_OK;
}

static int sweep(struct run *x, int use_events, struct nccl_result *res)
{
  const struct nccl_opts *o = x->o;
  size_t sizes[NCCL_MAX_SIZES];
  int ns = nccl_sweep_sizes(o->min_bytes, o->max_bytes, o->factor, o->step,
                            sizes, NCCL_MAX_SIZES);
  nccl_unique_id id;

  NC(x->nc->ncclGetUniqueId(&id), "ncclGetUniqueId", NULL);
  NC(x->nc->ncclGroupStart(), "ncclGroupStart", NULL);
  for(int i = 0; i < x->n; i++) {
    CU(cudaSetDevice(x->r[i].dev), "cudaSetDevice");
    NC(x->nc->ncclCommInitRank(&x->r[i].comm, x->n, id, i),
       "ncclCommInitRank", NULL);
  }
  NC(x->nc->ncclGroupEnd(), "ncclGroupEnd (communicator init)", NULL);
  for(int i = 0; i < x->n; i++) {
    struct rank *r = &x->r[i];
    CU(cudaSetDevice(r->dev), "cudaSetDevice");
    CU(cudaDeviceGetAttribute(&r->sms, cudaDevAttrMultiProcessorCount,
                              r->dev), "cudaDeviceGetAttribute");
    CU(cudaStreamCreateWithFlags(&r->st, cudaStreamNonBlocking),
       "cudaStreamCreate");
    CU(cudaEventCreate(&r->e0), "cudaEventCreate");
    CU(cudaEventCreate(&r->e1), "cudaEventCreate");
    CU(cudaMalloc((void **)&r->wrong, sizeof(*r->wrong)), "cudaMalloc");
    if(x->nc->ncclMemAlloc && x->nc->ncclMemFree) {
      NC(x->nc->ncclMemAlloc((void **)&r->send, x->buf_bytes),
         "ncclMemAlloc", NULL);
      NC(x->nc->ncclMemAlloc((void **)&r->recv, x->buf_bytes),
         "ncclMemAlloc", NULL);
    }
    else {
      CU(cudaMalloc((void **)&r->send, x->buf_bytes), "cudaMalloc");
      CU(cudaMalloc((void **)&r->recv, x->buf_bytes), "cudaMalloc");
    }
  }
  /* TimeTest's warm-up: every size of a factor-2 sweep, out of place */
  for(size_t s = o->min_bytes; s <= o->max_bytes; s = s ? s * 2 : 1) {
    setup(x, s);
    for(int it = 0; it < o->warmup; it++)
      if(launch(x, 0, it) != CUDA_OK)
        return CUDA_FAILED;
    if(sync_all(x) != CUDA_OK)
      return CUDA_FAILED;
  }
  for(int k = 0; k < ns && k < NCCL_MAX_SIZES; k++) {
    struct nccl_row *row = &res->rows[k];
    if(strata_stop_flag) {
      snprintf(x->err, x->len, "stopped by a signal");
      return CUDA_FAILED;
    }
    setup(x, sizes[k]);
    row->size = (x->c.send > x->c.recv ? x->c.send : x->c.recv) * x->elt;
    row->count = x->c.param;
    if(bench(x, 0, use_events, &row->oop) != CUDA_OK ||
       bench(x, 1, use_events, &row->ip) != CUDA_OK)
      return CUDA_FAILED;
    res->nrows = k + 1;
  }
  return CUDA_OK;
}

static void teardown(struct run *x)
{
  for(int i = 0; i < x->n; i++) {
    struct rank *r = &x->r[i];
    cudaSetDevice(r->dev);
    if(r->comm)
      x->nc->ncclCommDestroy(r->comm);
    if(x->nc->ncclMemFree) {
      if(r->send) x->nc->ncclMemFree(r->send);
      if(r->recv) x->nc->ncclMemFree(r->recv);
    }
    else {
      if(r->send) cudaFree(r->send);
      if(r->recv) cudaFree(r->recv);
    }
    if(r->wrong) cudaFree(r->wrong);
    if(r->e0) cudaEventDestroy(r->e0);
    if(r->e1) cudaEventDestroy(r->e1);
    if(r->st) cudaStreamDestroy(r->st);
  }
}

int nccl_run(const struct nccl_opts *o, int use_events,
             struct nccl_result *res, char *err, size_t len)
{
  static struct run x;   /* large; one run at a time per process */
  int count = 0, s;

  memset(res, 0, sizeof(*res));
  if(o->ndev < 1 || o->ndev > NCCL_MAX_DEVS || o->iters < 1 ||
     o->dtype < 0 || o->dtype >= NV_DTYPES || o->op < 0 ||
     o->op >= NV_OPS || o->coll < 0 || o->coll >= NC_COLLS ||
     o->min_bytes > o->max_bytes || o->root < 0 || o->root >= o->ndev) {
    snprintf(err, len, "nccl.run: invalid options");
    return CUDA_FAILED;
  }
  s = cuda_count(&count, err, len);
  if(s != CUDA_OK)
    return s;
  for(int i = 0; i < o->ndev; i++)
    if(o->devs[i] < 0 || o->devs[i] >= count) {
      snprintf(err, len, "no CUDA device %d (%d present)", o->devs[i], count);
      return CUDA_ABSENT;
    }
  memset(&x, 0, sizeof(x));
  s = nccl_load(&x.nc, err, len);
  if(s != CUDA_OK)
    return s;
  if(!o->nvls)
    setenv("NCCL_NVLS_ENABLE", "0", 1);
  x.o = o;
  x.n = o->ndev;
  x.elt = (size_t)nv_size(o->dtype);
  x.buf_bytes = cuda_alloc_size(o->max_bytes ? o->max_bytes : 1);
  x.seed = 0x5eed0000u ^ (unsigned)o->coll;
  x.a2a_grouped = o->alltoall_grouped || !x.nc->ncclAlltoAll ||
                  x.nc->version < 22800;
  res->alltoall_grouped = x.a2a_grouped;
  x.err = err;
  x.len = len;
  for(int i = 0; i < x.n; i++)
    x.r[i].dev = o->devs[i];
  res->nranks = x.n;
  res->version = x.nc->version;
  res->use_events = use_events;
  snprintf(res->library, sizeof(res->library), "%s", x.nc->path);
  s = sweep(&x, use_events, res);
  teardown(&x);
  return s;
}

#else  /* !STRATA_HAVE_CUDA */

int nccl_run(const struct nccl_opts *o, int use_events,
             struct nccl_result *res, char *err, size_t len)
{
  (void)o;
  (void)use_events;
  memset(res, 0, sizeof(*res));
  snprintf(err, len, "built without CUDA");
  return CUDA_ABSENT;
}

#endif
