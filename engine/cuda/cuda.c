/*
 * cuda.c - see cuda.h.  Built on the CUDA runtime (libcudart_static),
 * which opens libcuda.so.1 itself on first use; the two driver calls the
 * runtime lacks (dma-buf export, address ranges, one attribute) come
 * through cudaGetDriverEntryPointByVersion, so nothing here links
 * libcuda.  Without STRATA_HAVE_CUDA only the stubs at the end exist.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda.h"

static pid_t cuda_pid;  /* the process that initialised CUDA */

/* Fork probe: shared by both builds. */
struct probe_msg {
  int status, count;
  char err[256];
};

int cuda_probe_forked(int *count, char *err, size_t len)
{
  struct probe_msg m;
  int fds[2], status = 0;
  pid_t pid;
  ssize_t got = 0;

  *count = 0;
  if(cuda_pid == getpid())  /* CUDA is up here already: ask directly */
    return cuda_count(count, err, len);
  if(pipe(fds) < 0) {
    snprintf(err, len, "cuda.probe: pipe: %s", strerror(errno));
    return CUDA_FAILED;
  }
  pid = fork();
  if(pid < 0) {
    snprintf(err, len, "cuda.probe: fork: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return CUDA_FAILED;
  }
  if(pid == 0) {
    close(fds[0]);
    memset(&m, 0, sizeof(m));
    m.status = cuda_count(&m.count, m.err, sizeof(m.err));
    if(write(fds[1], &m, sizeof(m)) != (ssize_t)sizeof(m))
      _exit(1);
    _exit(0);
  }
  close(fds[1]);
  {
    struct pollfd p = { .fd = fds[0], .events = POLLIN };
    int r;
    do
      r = poll(&p, 1, 30000);
    while(r < 0 && errno == EINTR);
    if(r > 0)
      got = read(fds[0], &m, sizeof(m));
  }
  close(fds[0]);
  if(got != (ssize_t)sizeof(m))
    kill(pid, SIGKILL);
  while(waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if(got != (ssize_t)sizeof(m)) {
    snprintf(err, len, "cuda.probe: the probe process died or hung "
             "(wait status %d)", status);
    return CUDA_FAILED;
  }
  *count = m.count;
  if(m.status != CUDA_OK)
    snprintf(err, len, "%s", m.err);
  return m.status;
}

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime_api.h>

/* Driver API bits used through entry points (toolkit cuda.h would clash
 * with this family's cuda.h; these values are the driver API's). */
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED 124
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 1
typedef CUresult (*get_handle_fn)(void *, CUdeviceptr, size_t, int,
                                  unsigned long long);
typedef CUresult (*get_range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);
typedef CUresult (*dev_attr_fn)(int *, int, int);
typedef CUresult (*err_name_fn)(CUresult, const char **);

int strata_mix_launch(uint64_t *out, size_t n, uint64_t seed,
                      unsigned rounds, int sms, cudaStream_t stream);

static int set_err(cudaError_t e, const char *what, char *err, size_t len)
{
  snprintf(err, len, "%s: %s %s (%d)", what, cudaGetErrorName(e),
           cudaGetErrorString(e), (int)e);
  switch(e) {
  case cudaErrorInsufficientDriver:
  case cudaErrorNoDevice:
  case cudaErrorStubLibrary:
  case cudaErrorSystemNotReady:
  case cudaErrorSystemDriverMismatch:
  case cudaErrorCompatNotSupportedOnDevice:
  case cudaErrorDevicesUnavailable:
    return CUDA_ABSENT;
  default:
    return CUDA_FAILED;
  }
}

#define CK(call, what) \
  do { \
    cudaError_t ck_e = (call); \
    if(ck_e != cudaSuccess) { \
      result = set_err(ck_e, what, err, len); \
      goto fail; \
    } \
  } while(0)

/* Initialise in this process; refuse a state inherited through fork. */
static int ensure_init(int *count, char *err, size_t len)
{
  int n = 0, result;
  cudaError_t e;
  if(cuda_pid && cuda_pid != getpid()) {
    snprintf(err, len, "CUDA was initialised in process %d before this "
             "one forked: CUDA must start in the child only",
             (int)cuda_pid);
    return CUDA_FAILED;
  }
  e = cudaGetDeviceCount(&n);
  cuda_pid = getpid();
  if(e == cudaErrorInsufficientDriver &&
     !dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
    snprintf(err, len, "no CUDA driver: libcuda.so.1 is not installed "
             "(cudaGetDeviceCount: %s)", cudaGetErrorName(e));
    return CUDA_ABSENT;
  }
  if(e != cudaSuccess)
    return set_err(e, "cudaGetDeviceCount", err, len);
  if(n == 0) {
    snprintf(err, len, "no CUDA device");
    return CUDA_ABSENT;
  }
  result = CUDA_OK;
  if(count)
    *count = n;
  return result;
}

int cuda_count(int *count, char *err, size_t len)
{
  *count = 0;
  return ensure_init(count, err, len);
}

static void *driver_fn(const char *name, unsigned version)
{
  void *p = NULL;
  enum cudaDriverEntryPointQueryResult q;
  if(cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault,
                                      &q) != cudaSuccess ||
     q != cudaDriverEntryPointSuccess)
    return NULL;
  return p;
}

static const char *driver_err(CUresult r)
{
  const char *s = NULL;
  err_name_fn f = (err_name_fn)driver_fn("cuGetErrorName", 6000);
  if(!f || f(r, &s) != 0 || !s)
    return "CUDA driver error";
  return s;
}

static int check_dev(int dev, char *err, size_t len)
{
  int n = 0;
  int result = ensure_init(&n, err, len);
  if(result != CUDA_OK)
    return result;
  if(dev < 0 || dev >= n) {
    snprintf(err, len, "no CUDA device %d (%d present)", dev, n);
    return CUDA_ABSENT;
  }
  return CUDA_OK;
}

static int read_numa(const char *bus)
{
  char path[96];
  int v = -1;
  FILE *f;
  snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bus);
  f = fopen(path, "r");
  if(f) {
    if(fscanf(f, "%d", &v) != 1)
      v = -1;
    fclose(f);
  }
  return v;
}

int cuda_device_info(int dev, struct cuda_device *out, char *err,
                     size_t len)
{
  struct cudaDeviceProp p;
  dev_attr_fn attr;
  const unsigned char *u;
  int result = check_dev(dev, err, len);

  memset(out, 0, sizeof(*out));
  if(result != CUDA_OK)
    return result;
  CK(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  out->index = dev;
  snprintf(out->name, sizeof(out->name), "%s", p.name);
  u = (const unsigned char *)p.uuid.bytes;
  snprintf(out->uuid, sizeof(out->uuid),
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
           "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
           u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  snprintf(out->bus_id, sizeof(out->bus_id), "%04x:%02x:%02x.0",
           p.pciDomainID, p.pciBusID, p.pciDeviceID);
  out->cc_major = p.major;
  out->cc_minor = p.minor;
  out->sms = p.multiProcessorCount;
  out->mem_total = (long long)p.totalGlobalMem;
  out->numa_node = read_numa(out->bus_id);
  attr = (dev_attr_fn)driver_fn("cuDeviceGetAttribute", 2000);
  if(!attr || attr(&out->dmabuf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
                   dev) != 0)
    out->dmabuf = 0;
  CK(cudaDriverGetVersion(&out->driver_version), "cudaDriverGetVersion");
  CK(cudaRuntimeGetVersion(&out->runtime_version), "cudaRuntimeGetVersion");
  return CUDA_OK;
fail:
  return result;
}

int cuda_alloc(int dev, size_t size, enum cuda_mem_kind kind, void **ptr,
               char *err, size_t len)
{
  int result = check_dev(dev, err, len);
  *ptr = NULL;
  if(result != CUDA_OK)
    return result;
  CK(cudaSetDevice(dev), "cudaSetDevice");
  if(kind == CUDA_MEM_DEVICE)
    CK(cudaMalloc(ptr, cuda_alloc_size(size)), "cudaMalloc");
  else
    CK(cudaHostAlloc(ptr, size, cudaHostAllocPortable), "cudaHostAlloc");
  return CUDA_OK;
fail:
  *ptr = NULL;
  return result;
}

void cuda_free(void **ptr, enum cuda_mem_kind kind)
{
  if(!ptr || !*ptr)
    return;
  if(kind == CUDA_MEM_DEVICE)
    (void)cudaFree(*ptr);
  else
    (void)cudaFreeHost(*ptr);
  *ptr = NULL;
}

int cuda_bind(int dev, char *err, size_t len)
{
  int result = check_dev(dev, err, len);
  if(result != CUDA_OK)
    return result;
  CK(cudaSetDevice(dev), "cudaSetDevice");
  CK(cudaFree(NULL), "cudaFree(NULL)");      /* context made current now */
  return CUDA_OK;
fail:
  return result;
}

int cuda_copy(void *dst, const void *src, size_t size, char *err,
              size_t len)
{
  int result = ensure_init(NULL, err, len);
  if(result != CUDA_OK)
    return result;
  CK(cudaMemcpy(dst, src, size, cudaMemcpyDefault), "cudaMemcpy");
  return CUDA_OK;
fail:
  return result;
}

int cuda_memset(int dev, void *ptr, int byte, size_t size, char *err,
                size_t len)
{
  int result = check_dev(dev, err, len);
  if(result != CUDA_OK)
    return result;
  CK(cudaSetDevice(dev), "cudaSetDevice");
  CK(cudaMemset(ptr, byte, size), "cudaMemset");
  CK(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return CUDA_OK;
fail:
  return result;
}

/* Compare the first size bytes of host buffer p with the pattern. */
static int host_verify(const unsigned char *p, size_t size, uint64_t seed,
                       size_t *bad)
{
  size_t words = size / 8;
  for(size_t k = 0; k < words; k++) {
    uint64_t v, w = cuda_mix(seed ^ k);
    memcpy(&v, p + 8 * k, 8);
    if(v != w) {
      *bad = 8 * k;
      return 0;
    }
  }
  if(size % 8) {
    uint64_t w = cuda_mix(seed ^ words);
    if(memcmp(p + 8 * words, &w, size % 8)) {
      *bad = 8 * words;
      return 0;
    }
  }
  return 1;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One copy measurement's two buffers: where each lives and its kind. */
struct copy_bufs {
  void *src, *dst;
  enum cuda_mem_kind sk, dk;
  int sdev, ddev;
  size_t alloc;               /* the size rounded up to whole words */
  uint64_t seed;              /* of the source pattern */
};

/* P2P: direct access between the two GPUs where they have it, enabled
 * both ways (r->peer_access says which path the copies take). */
static int copy_peer_access(const struct cuda_copy_opts *o,
                            struct cuda_copy_result *r, char *err,
                            size_t len)
{
  int can = 0, result = CUDA_OK;
  CK(cudaDeviceCanAccessPeer(&can, o->device, o->peer),
     "cudaDeviceCanAccessPeer");
  if(can) {
    cudaError_t e;
    CK(cudaSetDevice(o->device), "cudaSetDevice");
    e = cudaDeviceEnablePeerAccess(o->peer, 0);
    if(e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
      CK(e, "cudaDeviceEnablePeerAccess");
    CK(cudaSetDevice(o->peer), "cudaSetDevice");
    e = cudaDeviceEnablePeerAccess(o->device, 0);
    if(e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
      CK(e, "cudaDeviceEnablePeerAccess");
    (void)cudaGetLastError();
  }
  r->peer_access = can;
fail:
  return result;
}

/*
 * Source pattern (never zeros: they hide unwritten output), written on
 * the GPU.  A pinned source gets it by DMA from the destination, then
 * the destination is poisoned: the CPU never wrote the source, so its
 * cache holds none of it (a CPU-written source measured ~15% slower
 * at 1 MiB H2D on an H200: the copy engine snoops dirty lines).
 */
static int copy_fill(const struct copy_bufs *b, int device, char *err,
                     size_t len)
{
  struct cudaDeviceProp p;
  void *gen = b->sk == CUDA_MEM_PINNED ? b->dst : b->src;
  int gdev = b->sk == CUDA_MEM_PINNED ? b->ddev : b->sdev;
  int result = CUDA_OK;
  CK(cudaGetDeviceProperties(&p, gdev), "cudaGetDeviceProperties");
  CK(cudaSetDevice(gdev), "cudaSetDevice");
  CK((cudaError_t)strata_mix_launch(gen, b->alloc / 8, b->seed, 1,
                                    p.multiProcessorCount, NULL),
     "fill kernel launch");
  CK(cudaDeviceSynchronize(), "fill kernel");
  if(b->sk == CUDA_MEM_PINNED) {
    CK(cudaMemcpy(b->src, b->dst, b->alloc, cudaMemcpyDefault),
       "source fill");
    CK(cudaMemset(b->dst, 0xa5, b->alloc), "poison");
    CK(cudaDeviceSynchronize(), "poison");
  }
  else if(b->dk == CUDA_MEM_DEVICE) {
    CK(cudaSetDevice(b->ddev), "cudaSetDevice");
    CK(cudaMemset(b->dst, 0xa5, b->alloc), "poison");
    CK(cudaDeviceSynchronize(), "poison");
  }
  /* A pinned destination is fresh zeroed pages: no poison needed (the
   * pattern is not zeros), and a CPU write would cache it. */
  CK(cudaSetDevice(device), "cudaSetDevice");
fail:
  return result;
}

/* One copy of size bytes on stream, the way o->dir asks. */
static cudaError_t copy_once(const struct cuda_copy_opts *o,
                             const struct copy_bufs *b, cudaStream_t stream)
{
  if(o->dir == CUDA_COPY_P2P)
    return cudaMemcpyPeerAsync(b->dst, b->ddev, b->src, b->sdev, o->size,
                               stream);
  return cudaMemcpyAsync(b->dst, b->src, o->size, cudaMemcpyDefault, stream);
}

/* The warm-up copies, then the timed ones back to back, an event between
 * each two: r gets min, median and max of the per-copy times. */
static int copy_time(const struct cuda_copy_opts *o, const struct copy_bufs *b,
                     cudaStream_t stream, struct cuda_copy_result *r,
                     char *err, size_t len)
{
  const char *what = o->dir == CUDA_COPY_P2P ? "cudaMemcpyPeerAsync"
                                             : "cudaMemcpyAsync";
  cudaEvent_t ev[CUDA_COPY_MAX_REPEATS + 1];
  double ms[CUDA_COPY_MAX_REPEATS];
  int nev, result = CUDA_OK;
  for(nev = 0; nev <= o->repeats; nev++)
    CK(cudaEventCreate(&ev[nev]), "cudaEventCreate");
  for(int i = 0; i < o->warmup; i++)
    CK(copy_once(o, b, stream), what);
  CK(cudaStreamSynchronize(stream), "warm-up copies");
  CK(cudaEventRecord(ev[0], stream), "cudaEventRecord");
  for(int i = 0; i < o->repeats; i++) {
    CK(copy_once(o, b, stream), what);
    CK(cudaEventRecord(ev[i + 1], stream), "cudaEventRecord");
  }
  CK(cudaStreamSynchronize(stream), "timed copies");
  for(int i = 0; i < o->repeats; i++) {
    float f = 0;
    CK(cudaEventElapsedTime(&f, ev[i], ev[i + 1]), "cudaEventElapsedTime");
    ms[i] = f;
  }
  qsort(ms, (size_t)o->repeats, sizeof(double), cmp_double);
  r->min_ms = ms[0];
  r->max_ms = ms[o->repeats - 1];
  r->median_ms = o->repeats % 2 ? ms[o->repeats / 2]
    : (ms[o->repeats / 2 - 1] + ms[o->repeats / 2]) / 2;
  r->gbps = r->median_ms > 0 ? o->size / (r->median_ms * 1e6) : 0;
  r->gbps_best = r->min_ms > 0 ? o->size / (r->min_ms * 1e6) : 0;
fail:
  for(int i = 0; i < nev; i++)
    (void)cudaEventDestroy(ev[i]);
  return result;
}

/* The destination read back (from the GPU when it lives there) and
 * compared with the pattern. */
static int copy_verify(const struct cuda_copy_opts *o,
                       const struct copy_bufs *b, struct cuda_copy_result *r,
                       char *err, size_t len)
{
  unsigned char *check = NULL;
  const unsigned char *got = b->dst;
  size_t bad = 0;
  int result = CUDA_OK;
  if(b->dk == CUDA_MEM_DEVICE) {
    check = malloc(b->alloc);
    if(!check) {
      snprintf(err, len, "verify: out of host memory (%zu bytes)", b->alloc);
      return CUDA_FAILED;
    }
    CK(cudaMemcpy(check, b->dst, o->size, cudaMemcpyDefault),
       "verify read-back");
    got = check;
  }
  if(!host_verify(got, o->size, b->seed, &bad)) {
    snprintf(err, len, "copied bytes differ from the source at offset "
             "%zu of %zu", bad, o->size);
    result = CUDA_FAILED;
    goto fail;
  }
  r->verified = 1;
fail:
  free(check);
  return result;
}

int cuda_copy_bw(const struct cuda_copy_opts *o, struct cuda_copy_result *r,
                 char *err, size_t len)
{
  struct copy_bufs b = { NULL, NULL, CUDA_MEM_DEVICE, CUDA_MEM_DEVICE,
                         o->device, o->device, (o->size + 7) & ~(size_t)7,
                         0x5eed0000u + (uint64_t)o->dir };
  cudaStream_t stream = NULL;
  int result;

  memset(r, 0, sizeof(*r));
  if(o->repeats < 1 || o->repeats > CUDA_COPY_MAX_REPEATS || o->warmup < 0 ||
     o->size == 0) {
    snprintf(err, len, "repeats must be 1..%d, warmup >= 0, size > 0",
             CUDA_COPY_MAX_REPEATS);
    return CUDA_FAILED;
  }
  result = check_dev(o->device, err, len);
  if(result == CUDA_OK && o->dir == CUDA_COPY_P2P)
    result = check_dev(o->peer, err, len);
  if(result != CUDA_OK)
    return result;
  b.sk = o->dir == CUDA_COPY_H2D ? CUDA_MEM_PINNED : CUDA_MEM_DEVICE;
  b.dk = o->dir == CUDA_COPY_D2H ? CUDA_MEM_PINNED : CUDA_MEM_DEVICE;
  if(o->dir == CUDA_COPY_P2P) {
    if(o->peer == o->device) {
      snprintf(err, len, "p2p needs two different GPUs (device = peer = %d)",
               o->device);
      return CUDA_FAILED;
    }
    b.ddev = o->peer;
    if((result = copy_peer_access(o, r, err, len)) != CUDA_OK)
      return result;
  }
  result = cuda_alloc(b.sdev, b.alloc, b.sk, &b.src, err, len);
  if(result == CUDA_OK)
    result = cuda_alloc(b.ddev, b.alloc, b.dk, &b.dst, err, len);
  if(result != CUDA_OK)
    goto fail;
  CK(cudaSetDevice(o->device), "cudaSetDevice");
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
     "cudaStreamCreate");
  result = copy_fill(&b, o->device, err, len);
  if(result == CUDA_OK)
    result = copy_time(o, &b, stream, r, err, len);
  if(result == CUDA_OK && o->verify)
    result = copy_verify(o, &b, r, err, len);
fail:
  if(stream)
    (void)cudaStreamDestroy(stream);
  cuda_free(&b.src, b.sk);
  cuda_free(&b.dst, b.dk);
  return result;
}

int cuda_kernel_check(int dev, size_t n, unsigned rounds, uint64_t seed,
                      struct cuda_kernel_result *r, char *err, size_t len)
{
  uint64_t *d = NULL, *h = NULL;
  cudaStream_t stream = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  struct cudaDeviceProp p;
  float f = 0;
  int result = check_dev(dev, err, len);

  memset(r, 0, sizeof(*r));
  if(result != CUDA_OK)
    return result;
  if(n == 0) {
    snprintf(err, len, "n must be > 0");
    return CUDA_FAILED;
  }
  CK(cudaSetDevice(dev), "cudaSetDevice");
  CK(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
     "cudaStreamCreate");
  CK(cudaEventCreate(&e0), "cudaEventCreate");
  CK(cudaEventCreate(&e1), "cudaEventCreate");
  CK(cudaMalloc((void **)&d, n * 8), "cudaMalloc");
  CK(cudaHostAlloc((void **)&h, n * 8, cudaHostAllocDefault),
     "cudaHostAlloc");
  /* Warm-up launch (module load), then poison and the timed launch. */
  CK((cudaError_t)strata_mix_launch(d, n, seed + 1, 1, p.multiProcessorCount,
                                    stream), "kernel launch");
  CK(cudaMemsetAsync(d, 0xff, n * 8, stream), "cudaMemsetAsync");
  memset(h, 0, n * 8);
  CK(cudaEventRecord(e0, stream), "cudaEventRecord");
  CK((cudaError_t)strata_mix_launch(d, n, seed, rounds,
                                    p.multiProcessorCount, stream),
     "kernel launch");
  CK(cudaEventRecord(e1, stream), "cudaEventRecord");
  CK(cudaMemcpyAsync(h, d, n * 8, cudaMemcpyDeviceToHost, stream),
     "cudaMemcpyAsync");
  CK(cudaStreamSynchronize(stream), "kernel run");
  CK(cudaEventElapsedTime(&f, e0, e1), "cudaEventElapsedTime");
  r->n = n;
  r->kernel_ms = f;
  r->gops = f > 0 ? (double)n * rounds / (f * 1e6) : 0;
  for(size_t i = 0; i < n; i++) {
    uint64_t x = seed ^ i;
    for(unsigned k = 0; k < rounds; k++)
      x = cuda_mix(x);
    if(h[i] != x) {
      if(!r->mismatches)
        r->first_bad = i;
      r->mismatches++;
    }
  }
  result = CUDA_OK;
fail:
  if(d)
    (void)cudaFree(d);
  if(h)
    (void)cudaFreeHost(h);
  if(e0)
    (void)cudaEventDestroy(e0);
  if(e1)
    (void)cudaEventDestroy(e1);
  if(stream)
    (void)cudaStreamDestroy(stream);
  return result;
}

int cuda_dmabuf_export(void *ptr, size_t size, int *fd, uint64_t *offset,
                       uint64_t *length, char *err, size_t len)
{
  get_handle_fn get_handle;
  get_range_fn get_range;
  CUdeviceptr base = 0;
  uint64_t start = 0, range = 0;
  size_t asize = 0;
  struct cudaPointerAttributes pa;
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  int ok = 0, result = ensure_init(NULL, err, len);
  CUresult cr;

  *fd = -1;
  *offset = *length = 0;
  if(result != CUDA_OK)
    return result;
  CK(cudaPointerGetAttributes(&pa, ptr), "cudaPointerGetAttributes");
  if(pa.type != cudaMemoryTypeDevice) {
    snprintf(err, len, "not device memory (a dma-buf covers GPU memory)");
    return CUDA_FAILED;
  }
  get_handle = (get_handle_fn)driver_fn("cuMemGetHandleForAddressRange",
                                        11070);
  get_range = (get_range_fn)driver_fn("cuMemGetAddressRange", 3020);
  {
    dev_attr_fn attr = (dev_attr_fn)driver_fn("cuDeviceGetAttribute", 2000);
    if(attr && attr(&ok, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
                    pa.device) != 0)
      ok = 0;
  }
  if(!get_handle || !get_range || !ok) {
    snprintf(err, len, "the CUDA driver cannot export dma-buf on GPU %d "
             "(needs driver >= 515 with the open kernel modules and "
             "Linux >= 5.12)", pa.device);
    return CUDA_ABSENT;
  }
  cr = get_range(&base, &asize, (CUdeviceptr)(uintptr_t)ptr);
  if(cr != 0) {
    snprintf(err, len, "cuMemGetAddressRange: %s (%d)", driver_err(cr), cr);
    return CUDA_FAILED;
  }
  if(cuda_dmabuf_range((uint64_t)(uintptr_t)ptr, size, base, asize, page,
                       &start, &range) != 0) {
    snprintf(err, len, "dma-buf export of %zu bytes at %p: the allocation "
             "[%#llx, +%zu) does not cover whole %llu-byte pages around it "
             "(allocate with cuda_alloc, which rounds to %zu bytes)", size,
             ptr, (unsigned long long)base, asize,
             (unsigned long long)page, CUDA_ALLOC_ALIGN);
    return CUDA_FAILED;
  }
  cr = get_handle(fd, (CUdeviceptr)start, (size_t)range,
                  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if(cr != 0) {
    *fd = -1;
    snprintf(err, len, "cuMemGetHandleForAddressRange: %s (%d)",
             driver_err(cr), cr);
    return CUDA_FAILED;
  }
  *offset = (uint64_t)(uintptr_t)ptr - start;
  *length = range;
  return CUDA_OK;
fail:
  return result;
}

#else  /* !STRATA_HAVE_CUDA */

#define NO_CUDA(err, len) \
  (snprintf(err, len, "built without CUDA"), CUDA_ABSENT)

int cuda_count(int *count, char *err, size_t len)
{
  *count = 0;
  return NO_CUDA(err, len);
}

int cuda_device_info(int dev, struct cuda_device *out, char *err,
                     size_t len)
{
  (void)dev;
  memset(out, 0, sizeof(*out));
  return NO_CUDA(err, len);
}

int cuda_alloc(int dev, size_t size, enum cuda_mem_kind kind, void **ptr,
               char *err, size_t len)
{
  (void)dev, (void)size, (void)kind;
  *ptr = NULL;
  return NO_CUDA(err, len);
}

void cuda_free(void **ptr, enum cuda_mem_kind kind)
{
  (void)kind;
  if(ptr)
    *ptr = NULL;
}

int cuda_bind(int dev, char *err, size_t len)
{
  (void)dev;
  return NO_CUDA(err, len);
}

int cuda_copy(void *dst, const void *src, size_t size, char *err,
              size_t len)
{
  (void)dst, (void)src, (void)size;
  return NO_CUDA(err, len);
}

int cuda_memset(int dev, void *ptr, int byte, size_t size, char *err,
                size_t len)
{
  (void)dev, (void)ptr, (void)byte, (void)size;
  return NO_CUDA(err, len);
}

int cuda_copy_bw(const struct cuda_copy_opts *o, struct cuda_copy_result *r,
                 char *err, size_t len)
{
  (void)o;
  memset(r, 0, sizeof(*r));
  return NO_CUDA(err, len);
}

int cuda_kernel_check(int dev, size_t n, unsigned rounds, uint64_t seed,
                      struct cuda_kernel_result *r, char *err, size_t len)
{
  (void)dev, (void)n, (void)rounds, (void)seed;
  memset(r, 0, sizeof(*r));
  return NO_CUDA(err, len);
}

int cuda_dmabuf_export(void *ptr, size_t size, int *fd, uint64_t *offset,
                       uint64_t *length, char *err, size_t len)
{
  (void)ptr, (void)size;
  *fd = -1;
  *offset = *length = 0;
  return NO_CUDA(err, len);
}
#endif
