/*
 * probe.c - where the time of one small NCCL call on one GPU goes (issue
 * 31 item 3).  Built on the GPU host against its NCCL:
 *   nvcc -O2 -o probe bench/nccl/probe.c -I$NCCL_INC -L$NCCL_LIB -lnccl
 *   ./probe [BYTES...]
 * One communicator of one rank, one non-blocking stream, two ncclMemAlloc
 * buffers of 64 MiB (as nccl-tests' AllocateBuffs).  Per size, 51 blocks
 * of 20 calls each in several ways (median per call, microseconds):
 *   nt      nccl-tests' BenchTime: host clock, 20 ncclBroadcast, poll
 *           every stream until idle (testStreamSynchronize)
 *   st      the same with a CUDA event recorded before the clock starts
 *           and one after the last call, inside the timed span (what
 *           strata's coll.c did before issue 31)
 *   enq     only the host time inside the 20 ncclBroadcast calls
 *   ev      the CUDA events' time of the st blocks (GPU time)
 *   cpy     20 cudaMemcpyAsync device-to-device of the same bytes, host
 *           clock to idle: NCCL's one-rank path without NCCL
 *   n1000   nccl-tests' method with 1000 calls a block (launch gaps only)
 * The CPU the thread runs on is printed: run it under taskset to see the
 * core's share.
 */
#define _GNU_SOURCE
#include <nccl.h>
#include <cuda_runtime.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKS 51
#define CK(x) do { int e_ = (int)(x); if(e_) { fprintf(stderr, "%s:%d %s -> %d\n", \
  __FILE__, __LINE__, #x, e_); exit(1); } } while(0)

static double now_us(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static ncclComm_t comm;
static cudaStream_t st;
static cudaEvent_t e0, e1;
static char *sb, *rb;
#define BUF (64u << 20)

static void sync_poll(void)
{
  for(;;) {
    cudaError_t e = cudaStreamQuery(st);
    ncclResult_t ae;
    if(e == cudaSuccess)
      return;
    if(e != cudaErrorNotReady)
      CK(e);
    CK(ncclCommGetAsyncError(comm, &ae));
    CK(ae);
    sched_yield();
  }
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double med(double *v)
{
  qsort(v, BLOCKS, sizeof(*v), cmp);
  return v[BLOCKS / 2];
}

/* one block of n calls; mode 0 nt, 1 st (events), 2 memcpy */
static double block(size_t bytes, int n, int mode, double *enq, double *ev)
{
  size_t steps = BUF / bytes, q = 0;
  double t0, t;
  float ms;
  CK(ncclBroadcast(sb, rb, bytes, ncclInt8, 0, comm, st));
  sync_poll();
  if(mode == 1)
    CK(cudaEventRecord(e0, st));
  t0 = now_us();
  for(int i = 0; i < n; i++) {
    size_t sh = bytes * ((size_t)i % steps);
    double a = now_us();
    if(mode == 2)
      CK(cudaMemcpyAsync(rb + sh, sb + sh, bytes, cudaMemcpyDeviceToDevice, st));
    else
      CK(ncclBroadcast(sb + sh, rb + sh, bytes, ncclInt8, 0, comm, st));
    q += (size_t)((now_us() - a) * 1000);
  }
  if(mode == 1)
    CK(cudaEventRecord(e1, st));
  sync_poll();
  t = (now_us() - t0) / n;
  if(enq)
    *enq = q / 1000.0 / n;
  if(ev && mode == 1) {
    CK(cudaEventElapsedTime(&ms, e0, e1));
    *ev = ms * 1e3 / n;
  }
  return t;
}

int main(int argc, char **argv)
{
  static const size_t def[] = { 1024, 1 << 20, 4 << 20 };
  ncclUniqueId id;
  int ver;
  CK(cudaSetDevice(0));
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(ncclGetUniqueId(&id));
  CK(ncclCommInitRank(&comm, 1, id, 0));
  CK(ncclGetVersion(&ver));
  CK(ncclMemAlloc((void **)&sb, BUF));
  CK(ncclMemAlloc((void **)&rb, BUF));
  CK(cudaMemset(sb, 1, BUF));
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  printf("# probe: NCCL %d, cpu %d\n", ver, sched_getcpu());
  printf("%10s %7s %7s %7s %7s %7s %7s\n", "bytes", "nt", "st", "enq", "ev",
         "cpy", "n1000");
  for(int k = 0; k < (argc > 1 ? argc - 1 : 3); k++) {
    size_t b = argc > 1 ? strtoull(argv[k + 1], NULL, 0) : def[k];
    double nt[BLOCKS], stv[BLOCKS], enq[BLOCKS], ev[BLOCKS], cp[BLOCKS],
           lg[BLOCKS];
    for(int w = 0; w < 5; w++)
      block(b, 20, 0, NULL, NULL);
    for(int i = 0; i < BLOCKS; i++) {   /* interleaved */
      nt[i] = block(b, 20, 0, &enq[i], NULL);
      stv[i] = block(b, 20, 1, NULL, &ev[i]);
      cp[i] = block(b, 20, 2, NULL, NULL);
      lg[i] = i < 11 ? block(b, 1000, 0, NULL, NULL) : 0;
    }
    qsort(lg, 11, sizeof(*lg), cmp);
    printf("%10zu %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f\n", b, med(nt), med(stv),
           med(enq), med(ev), med(cp), lg[5]);
  }
  printf("# cpu at the end %d\n", sched_getcpu());
  ncclMemFree(sb);
  ncclMemFree(rb);
  ncclCommDestroy(comm);
  return 0;
}
