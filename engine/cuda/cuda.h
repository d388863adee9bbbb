/*
 * cuda.h - strata's CUDA primitives as a small C API other families use
 * (verbs and s3 register and fill these buffers): devices, device and
 * pinned-host allocations, timed copies, a verifiable kernel, and the
 * dma-buf export of a device range for GPU-memory RDMA registration.
 *
 * CUDA initialises lazily, in the process that first calls one of these
 * (the runner forks a child per cell and never initialises CUDA in the
 * parent).  The CUDA runtime is linked statically and loads libcuda.so.1
 * itself at first use, so a binary built with CUDA starts on a host with
 * no driver; every function then returns CUDA_ABSENT with the reason.
 * Built without CUDA (STRATA_HAVE_CUDA undefined) every function returns
 * CUDA_ABSENT, "built without CUDA".
 *
 * All functions return a cuda_status; on anything but CUDA_OK, err (len
 * bytes) holds "<what>: <cudaErrorName> <text> (<code>)".
 */
#ifndef STRATA_CUDA_H
#define STRATA_CUDA_H

#include <stddef.h>
#include <stdint.h>

enum cuda_status {
  CUDA_OK = 0,
  CUDA_ABSENT = 1,  /* no build support, driver or device: SKIP */
  CUDA_FAILED = 2   /* a real error: FAIL/ERROR */
};

enum cuda_mem_kind { CUDA_MEM_DEVICE = 0, CUDA_MEM_PINNED = 1 };

enum cuda_copy_dir {
  CUDA_COPY_H2D = 0, CUDA_COPY_D2H, CUDA_COPY_D2D, CUDA_COPY_P2P
};

/*
 * The Lua buffer (userdata "strata.cuda.buffer", made by cuda.alloc)
 * starts with this struct: another family's binding accepts a buffer
 * with luaL_testudata(L, i, CUDA_BUFFER_META) and reads it without
 * linking this family.  ptr is NULL once closed.
 */
#define CUDA_BUFFER_META "strata.cuda.buffer"
struct cuda_buffer {
  void *ptr;
  size_t size;
  int kind;      /* enum cuda_mem_kind */
  int device;
};

struct cuda_device {
  int index;
  char name[256];
  char uuid[48];           /* "GPU-xxxxxxxx-xxxx-..." as nvidia-smi */
  char bus_id[32];         /* "0000:18:00.0" */
  int cc_major, cc_minor;
  int sms;
  long long mem_total;
  int numa_node;           /* -1 unknown */
  int dmabuf;              /* 1 if the driver can export dma-buf */
  int driver_version, runtime_version;  /* 13000 = 13.0 */
};

/* Count devices (initialises CUDA in this process). */
int cuda_count(int *count, char *err, size_t len);

/*
 * Probe in a forked child so the calling process stays CUDA-free: the
 * runner's parent may call it.  *count gets the device count.
 */
int cuda_probe_forked(int *count, char *err, size_t len);

int cuda_device_info(int dev, struct cuda_device *out, char *err,
                     size_t len);

/*
 * Allocate len bytes: device memory on dev, or pinned (page-locked,
 * portable) host memory.  *ptr is NULL on failure.  Free with
 * cuda_free(&ptr, kind) (NULL-safe, sets *ptr to NULL).  Device memory is
 * allocated in whole CUDA_ALLOC_ALIGN units (cuda_alloc_size) so that its
 * dma-buf export covers whole host pages: cuMemGetAddressRange reports a
 * cudaMalloc(len) range as exactly len bytes, and
 * cuMemGetHandleForAddressRange refuses a range that does not end on a
 * page (CUDA_ERROR_INVALID_VALUE, seen on an H200 for 2, 128, 4095, 4097
 * and 65535 bytes).  perftest does the same (src/cuda_memory.c:
 * ACCEL_PAGE_SIZE 64 KiB for the allocation, the export range rounded to
 * the host page).
 */
#define CUDA_ALLOC_ALIGN ((size_t)64 * 1024)
static inline size_t cuda_alloc_size(size_t len)
{
  return (len + CUDA_ALLOC_ALIGN - 1) & ~(CUDA_ALLOC_ALIGN - 1);
}

int cuda_alloc(int dev, size_t len, enum cuda_mem_kind kind, void **ptr,
               char *err, size_t errlen);
void cuda_free(void **ptr, enum cuda_mem_kind kind);

/*
 * Make dev's primary context current on the calling thread (a worker
 * thread has none until it touches CUDA; cuFile/cuObject use the current
 * context and crash without one: minio/rdma-training
 * docs/troubleshooting.md section 5).
 */
int cuda_bind(int dev, char *err, size_t errlen);

/* Plain synchronous copy between any two pointers (fill, read back). */
int cuda_copy(void *dst, const void *src, size_t len, char *err,
              size_t errlen);
/* Set len bytes of device memory to byte. */
int cuda_memset(int dev, void *ptr, int byte, size_t len, char *err,
                size_t errlen);

struct cuda_copy_opts {
  enum cuda_copy_dir dir;
  int device, peer;        /* peer: destination GPU of CUDA_COPY_P2P */
  size_t size;
  int warmup, repeats;     /* repeats <= CUDA_COPY_MAX_REPEATS */
  int verify;              /* compare the bytes after the timed copies */
};
#define CUDA_COPY_MAX_REPEATS 1000

struct cuda_copy_result {
  double median_ms, min_ms, max_ms;
  double gbps;             /* size / median, 1e9 bytes/s */
  double gbps_best;        /* size / min */
  int peer_access;         /* P2P: direct access was enabled */
  int verified;            /* 1 compared equal, 0 not checked */
};

/*
 * Time r->repeats copies of o->size bytes, each bracketed by CUDA events
 * on one stream, after o->warmup untimed ones; the median is reported.
 * Buffers are allocated and freed inside.  A verify mismatch returns
 * CUDA_FAILED with the offset in err.
 */
int cuda_copy_bw(const struct cuda_copy_opts *o, struct cuda_copy_result *r,
                 char *err, size_t len);

struct cuda_kernel_result {
  size_t n;                /* elements computed and checked */
  size_t mismatches;
  size_t first_bad;        /* index of the first mismatch */
  double kernel_ms;
  double gops;             /* mix rounds per ns */
};

/*
 * Run the check kernel on dev: out[i] = mix^rounds(seed ^ i) for n
 * elements (64-bit integer arithmetic, exact), the output poisoned
 * before, then every element compared with the host's computation.
 * Mismatches are a result (CUDA_OK with r->mismatches > 0).
 */
int cuda_kernel_check(int dev, size_t n, unsigned rounds, uint64_t seed,
                      struct cuda_kernel_result *r, char *err, size_t len);

/*
 * Export [ptr, ptr+len) of device memory as a dma-buf file descriptor
 * (cuMemGetHandleForAddressRange, reached through the runtime's driver
 * entry points).  The range is widened to the page it must be aligned
 * to: *fd covers [ptr - *offset, ...), *offset is ptr's offset in it,
 * *length its size.  The caller closes *fd.
 */
int cuda_dmabuf_export(void *ptr, size_t len, int *fd, uint64_t *offset,
                       uint64_t *length, char *err, size_t errlen);

/*
 * The range cuda_dmabuf_export hands to cuMemGetHandleForAddressRange for
 * [ptr, ptr+len) inside the allocation [base, base+asize): start rounded
 * down and the end rounded up to the host page (perftest's rule).
 * Returns 0, or -1 when the rounded range leaves the allocation (memory
 * not from cuda_alloc whose size is not a whole number of pages): the
 * driver would refuse it, so the caller reports why instead.
 */
static inline int cuda_dmabuf_range(uint64_t ptr, uint64_t len,
                                    uint64_t base, uint64_t asize,
                                    uint64_t page, uint64_t *start,
                                    uint64_t *length)
{
  uint64_t s = ptr & ~(page - 1), e = (ptr + len + page - 1) & ~(page - 1);
  if(s < base || e > base + asize || ptr + len > base + asize)
    return -1;
  *start = s;
  *length = e - s;
  return 0;
}

/* The host reference of the check kernel's function (also in C tests). */
static inline uint64_t cuda_mix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

#endif
