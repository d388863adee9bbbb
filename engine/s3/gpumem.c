/*
 * gpumem.c - device and pinned buffers for the T3 path (gpumem.h).
 */
#include <stdio.h>
#include <string.h>

#include "gpumem.h"
#include "strata.h"
#include "workload.h"

#ifdef STRATA_S3_WITH_CUDA
#include "cuda.h"

static int status(int st)
{
  return st == CUDA_OK ? 0 : st == CUDA_ABSENT ? S3W_ABSENT : -1;
}

int gpumem_open(struct gpumem *g, int device, uint64_t size,
                const struct payload *pl, char *err, size_t cap)
{
  int st;
  memset(g, 0, sizeof(*g));
  g->size = size;
  g->device = device;
  st = cuda_alloc(device, (size_t)size, CUDA_MEM_PINNED, &g->host, err,
                  cap);
  if(st == CUDA_OK)
    st = cuda_alloc(device, (size_t)size, CUDA_MEM_DEVICE, &g->dev, err,
                    cap);
  if(st == CUDA_OK) {
    payload_fill(pl, 0, 0, g->host, (size_t)size);
    st = cuda_copy(g->dev, g->host, (size_t)size, err, cap);
  }
  if(st != CUDA_OK)
    gpumem_close(g);
  return status(st);
}

static int timed_copy(struct gpumem *g, void *dst, const void *src,
                      uint64_t n, char *err, size_t cap)
{
  uint64_t t0 = strata_now_ns();
  int st = cuda_copy(dst, src, (size_t)n, err, cap);
  g->last_copy_s = (double)(strata_now_ns() - t0) / 1e9;
  return status(st);
}

int gpumem_to_device(struct gpumem *g, uint64_t n, char *err, size_t cap)
{
  return timed_copy(g, g->dev, g->host, n, err, cap);
}

int gpumem_to_host(struct gpumem *g, uint64_t n, char *err, size_t cap)
{
  return timed_copy(g, g->host, g->dev, n, err, cap);
}

void gpumem_close(struct gpumem *g)
{
  cuda_free(&g->dev, CUDA_MEM_DEVICE);
  cuda_free(&g->host, CUDA_MEM_PINNED);
}

#else  /* built without the cuda family */

int gpumem_open(struct gpumem *g, int device, uint64_t size,
                const struct payload *pl, char *err, size_t cap)
{
  (void)device, (void)size, (void)pl;
  memset(g, 0, sizeof(*g));
  snprintf(err, cap, "built without the cuda family (engine/cuda)");
  return S3W_ABSENT;
}

int gpumem_to_device(struct gpumem *g, uint64_t n, char *err, size_t cap)
{
  (void)g, (void)n;
  snprintf(err, cap, "built without the cuda family");
  return S3W_ABSENT;
}

int gpumem_to_host(struct gpumem *g, uint64_t n, char *err, size_t cap)
{
  (void)g, (void)n;
  snprintf(err, cap, "built without the cuda family");
  return S3W_ABSENT;
}

void gpumem_close(struct gpumem *g)
{
  (void)g;
}
#endif
