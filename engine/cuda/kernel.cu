/*
 * kernel.cu - the check kernel of G2: a splitmix64 chain per element,
 * integer-only so the host can recompute every output bit-exactly.  The
 * host side (launch, timing, comparison) lives in cuda.c; this file only
 * launches.  Compiled by nvcc through engine/cuda/CMakeLists.txt.
 */
#include <stdint.h>
#include <cuda_runtime.h>

__device__ static inline uint64_t mix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void strata_mix_kernel(uint64_t *out, size_t n, uint64_t seed,
                                  unsigned rounds)
{
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for(size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
      i += stride) {
    uint64_t x = seed ^ i;
    for(unsigned r = 0; r < rounds; r++)
      x = mix(x);
    out[i] = x;
  }
}

/* Launch on the current device and stream; returns the launch error. */
extern "C" int strata_mix_launch(uint64_t *out, size_t n, uint64_t seed,
                                 unsigned rounds, int sms,
                                 cudaStream_t stream)
{
  int blocks = sms > 0 ? sms * 8 : 1024;
  strata_mix_kernel<<<blocks, 256, 0, stream>>>(out, n, seed, rounds);
  return (int)cudaGetLastError();
}
