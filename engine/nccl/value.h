/*
 * value.h - the data strata's NCCL check writes and expects, shared by the
 * GPU kernels (kernel.cu) and the host unit test.  Element g of rank r
 * holds value(r, g): a small integer, so that every reduction NCCL can do
 * on it (sum, prod, max, min over up to the type's limit of ranks) is exact
 * in the element type and the check compares bit for bit.  avg alone
 * divides, and is compared within the type's rounding.
 *
 * The dtype and op numbers are NCCL's own (nccl.h of NCCL 2.28.9,
 * ncclDataType_t and ncclRedOp_t), so a value crosses to NCCL unchanged.
 */
#ifndef STRATA_NCCL_VALUE_H
#define STRATA_NCCL_VALUE_H

#include <stdint.h>

#ifdef __CUDACC__
#define NV_HD __host__ __device__
#else
#define NV_HD
#endif

enum nccl_dtype {  /* ncclDataType_t */
  NV_INT8 = 0, NV_UINT8 = 1, NV_INT32 = 2, NV_UINT32 = 3, NV_INT64 = 4,
  NV_UINT64 = 5, NV_HALF = 6, NV_FLOAT = 7, NV_DOUBLE = 8, NV_BFLOAT16 = 9,
  NV_DTYPES = 10   /* fp8 (10, 11) is not checked by strata: refused */
};

enum nccl_redop {  /* ncclRedOp_t */
  NV_SUM = 0, NV_PROD = 1, NV_MAX = 2, NV_MIN = 3, NV_AVG = 4, NV_OPS = 5
};

static inline NV_HD int nv_size(int dtype)
{
  switch(dtype) {
  case NV_INT8: case NV_UINT8: return 1;
  case NV_HALF: case NV_BFLOAT16: return 2;
  case NV_INT32: case NV_UINT32: case NV_FLOAT: return 4;
  default: return 8;
  }
}

/* The largest integer a sum may reach and stay exact in the type. */
static inline NV_HD uint32_t nv_sum_limit(int dtype)
{
  switch(dtype) {
  case NV_INT8: return 127;
  case NV_UINT8: return 255;
  case NV_HALF: return 2048;      /* 11-bit significand */
  case NV_BFLOAT16: return 256;   /* 8-bit significand */
  default: return 1u << 20;
  }
}

/* How many ranks may contribute a factor 2 to a product and stay exact. */
static inline NV_HD int nv_prod_ranks(int dtype)
{
  switch(dtype) {
  case NV_INT8: return 6;
  case NV_UINT8: return 7;
  case NV_INT32: return 30;
  case NV_UINT32: return 31;
  case NV_INT64: return 62;
  case NV_UINT64: return 63;
  case NV_HALF: return 15;
  default: return 120;            /* float, double, bfloat16 exponents */
  }
}

static inline NV_HD double nv_value(int dtype, int op, int nranks, int rank,
                                    uint64_t g, uint32_t seed)
{
  uint32_t x = (uint32_t)g * 2654435761u ^ (uint32_t)(g >> 32) * 0x85ebca6bu
               ^ (uint32_t)rank * 0x9e3779b9u ^ seed;
  uint32_t k;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  x *= 0x297a2d39u;
  x ^= x >> 15;
  if(op == NV_PROD)
    return rank < nv_prod_ranks(dtype) ? 1.0 + (x & 1) : 1.0;
  k = nv_sum_limit(dtype) / (uint32_t)(nranks > 0 ? nranks : 1);
  if(k < 1)
    k = 1;
  return (double)(x % (k + 1));
}

/* The reduction of value(0..nranks-1, g). */
static inline NV_HD double nv_reduced(int dtype, int op, int nranks,
                                      uint64_t g, uint32_t seed)
{
  double a = nv_value(dtype, op, nranks, 0, g, seed);
  for(int r = 1; r < nranks; r++) {
    double v = nv_value(dtype, op, nranks, r, g, seed);
    switch(op) {
    case NV_PROD: a *= v; break;
    case NV_MAX: a = v > a ? v : a; break;
    case NV_MIN: a = v < a ? v : a; break;
    default: a += v; break;
    }
  }
  if(op == NV_AVG)
    a /= nranks;
  return a;
}

/*
 * What one result buffer must hold, element i of count:
 *  reduce: value reduced over all ranks at element reduce_off + i;
 *  else:   value(src, src_off + j) with src = i / chunk, j = i % chunk
 *          (chunk 0: src = fixed_src, j = i).
 */
struct nv_expect {
  int dtype, op, nranks, reduce, fixed_src;
  uint32_t seed;
  uint64_t reduce_off, chunk, src_off;
};

static inline NV_HD double nv_expected(const struct nv_expect *e, uint64_t i)
{
  if(e->reduce)
    return nv_reduced(e->dtype, e->op, e->nranks, e->reduce_off + i,
                      e->seed);
  if(e->chunk)
    return nv_value(e->dtype, e->op, e->nranks, (int)(i / e->chunk),
                    e->src_off + i % e->chunk, e->seed);
  return nv_value(e->dtype, e->op, e->nranks, e->fixed_src, e->src_off + i,
                  e->seed);
}

/* Allowed |got - want|: 0 but for avg, which divides. */
static inline NV_HD double nv_tolerance(int dtype, int op, double want)
{
  double a = want < 0 ? -want : want;
  if(op != NV_AVG)
    return 0;
  switch(dtype) {
  case NV_HALF: return a / 1024 + 1e-3;
  case NV_BFLOAT16: return a / 128 + 1e-2;
  case NV_FLOAT: return a * 1e-6;
  case NV_DOUBLE: return a * 1e-12;
  default: return 1;               /* integer avg rounds the quotient */
  }
}

#endif
