// kernel.cu - fill and check the buffers of strata's NCCL collectives on
// the GPU (the values are value.h's), so that a check of 8 GiB costs one
// kernel and one counter read, not a copy to the host.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "value.h"

template <typename T> __device__ T to_t(double v) { return (T)v; }
template <> __device__ __half to_t<__half>(double v)
{ return __double2half(v); }
template <> __device__ __nv_bfloat16 to_t<__nv_bfloat16>(double v)
{ return __double2bfloat16(v); }
template <typename T> __device__ double from_t(T v) { return (double)v; }
template <> __device__ double from_t<__half>(__half v)
{ return (double)__half2float(v); }
template <> __device__ double from_t<__nv_bfloat16>(__nv_bfloat16 v)
{ return (double)__bfloat162float(v); }

template <typename T>
__global__ void fill_k(T *buf, size_t n, int dtype, int op, int nranks,
                       int rank, unsigned long long off, unsigned seed)
{
  for(size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
      i += (size_t)gridDim.x * blockDim.x)
    buf[i] = to_t<T>(nv_value(dtype, op, nranks, rank, off + i, seed));
}

template <typename T>
__global__ void check_k(const T *buf, size_t n, struct nv_expect e,
                        unsigned long long *wrong)
{
  unsigned long long bad = 0;
  for(size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
      i += (size_t)gridDim.x * blockDim.x) {
    double want = from_t<T>(to_t<T>(nv_expected(&e, i)));
    double d = from_t<T>(buf[i]) - want;
    if(d < 0)
      d = -d;
    if(!(d <= nv_tolerance(e.dtype, e.op, want)))
      bad++;
  }
  if(bad)
    atomicAdd(wrong, bad);
}

static void grid(size_t n, int sms, unsigned *blocks)
{
  size_t b = (n + 255) / 256, cap = (size_t)(sms > 0 ? sms : 80) * 8;
  *blocks = (unsigned)(b < 1 ? 1 : b > cap ? cap : b);
}

#define DISPATCH(dtype, CALL) \
  switch(dtype) { \
  case NV_INT8: CALL(signed char); break; \
  case NV_UINT8: CALL(unsigned char); break; \
  case NV_INT32: CALL(int); break; \
  case NV_UINT32: CALL(unsigned); break; \
  case NV_INT64: CALL(long long); break; \
  case NV_UINT64: CALL(unsigned long long); break; \
  case NV_HALF: CALL(__half); break; \
  case NV_FLOAT: CALL(float); break; \
  case NV_DOUBLE: CALL(double); break; \
  case NV_BFLOAT16: CALL(__nv_bfloat16); break; \
  default: return (int)cudaErrorInvalidValue; \
  }

extern "C" int strata_nccl_fill(void *buf, size_t n, int dtype, int op,
                                int nranks, int rank,
                                unsigned long long off, unsigned seed,
                                int sms, cudaStream_t s)
{
  unsigned b;
  if(!n)
    return 0;
  grid(n, sms, &b);
#define FILL(T) fill_k<T><<<b, 256, 0, s>>>((T *)buf, n, dtype, op, nranks, \
                                            rank, off, seed)
  DISPATCH(dtype, FILL)
#undef FILL
  return (int)cudaGetLastError();
}

extern "C" int strata_nccl_check(const void *buf, size_t n,
                                 const struct nv_expect *e,
                                 unsigned long long *wrong, int sms,
                                 cudaStream_t s)
{
  unsigned b;
  if(!n)
    return 0;
  grid(n, sms, &b);
#define CHECK(T) check_k<T><<<b, 256, 0, s>>>((const T *)buf, n, *e, wrong)
  DISPATCH(e->dtype, CHECK)
#undef CHECK
  return (int)cudaGetLastError();
}
