/*
 * cufile.c - cuFile (GPUDirect Storage) reads and writes of one device
 * buffer (cufile.h).
 *
 * libcufile is loaded by engine/core/cufile_load.c (its declarations are
 * there), shared with the s3rdma family's GPU-path facts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cuda.h"
#include "cufile.h"
#include "cufile_load.h"
#include "strata.h"

/* CUfileOpError 5001 .. 5050 by name: the enum order of cycufile.pxd,
 * numbered as the CUDA 13.0 header on the H200 machine printed them
 * (tests/gpu/cufile_abi.c; tests/storage/results/h200-2026-12-01/
 * cufile_abi.txt: 5021 and 5032 are unused). */
static const char *const op_errors[] = {
  "CU_FILE_DRIVER_NOT_INITIALIZED",
  "CU_FILE_DRIVER_INVALID_PROPS",
  "CU_FILE_DRIVER_UNSUPPORTED_LIMIT",
  "CU_FILE_DRIVER_VERSION_MISMATCH",
  "CU_FILE_DRIVER_VERSION_READ_ERROR",
  "CU_FILE_DRIVER_CLOSING",
  "CU_FILE_PLATFORM_NOT_SUPPORTED",
  "CU_FILE_IO_NOT_SUPPORTED",
  "CU_FILE_DEVICE_NOT_SUPPORTED",
  "CU_FILE_NVFS_DRIVER_ERROR",
  "CU_FILE_CUDA_DRIVER_ERROR",
  "CU_FILE_CUDA_POINTER_INVALID",
  "CU_FILE_CUDA_MEMORY_TYPE_INVALID",
  "CU_FILE_CUDA_POINTER_RANGE_ERROR",
  "CU_FILE_CUDA_CONTEXT_MISMATCH",
  "CU_FILE_INVALID_MAPPING_SIZE",
  "CU_FILE_INVALID_MAPPING_RANGE",
  "CU_FILE_INVALID_FILE_TYPE",
  "CU_FILE_INVALID_FILE_OPEN_FLAG",
  "CU_FILE_DIO_NOT_SET",
  "",
  "CU_FILE_INVALID_VALUE",
  "CU_FILE_MEMORY_ALREADY_REGISTERED",
  "CU_FILE_MEMORY_NOT_REGISTERED",
  "CU_FILE_PERMISSION_DENIED",
  "CU_FILE_DRIVER_ALREADY_OPEN",
  "CU_FILE_HANDLE_NOT_REGISTERED",
  "CU_FILE_HANDLE_ALREADY_REGISTERED",
  "CU_FILE_DEVICE_NOT_FOUND",
  "CU_FILE_INTERNAL_ERROR",
  "CU_FILE_GETNEWFD_FAILED",
  "",
  "CU_FILE_NVFS_SETUP_ERROR",
  "CU_FILE_IO_DISABLED",
  "CU_FILE_BATCH_SUBMIT_FAILED",
  "CU_FILE_GPU_MEMORY_PINNING_FAILED",
  "CU_FILE_BATCH_FULL",
  "CU_FILE_ASYNC_NOT_SUPPORTED",
  "CU_FILE_INTERNAL_BATCH_SETUP_ERROR",
  "CU_FILE_INTERNAL_BATCH_SUBMIT_ERROR",
  "CU_FILE_INTERNAL_BATCH_GETSTATUS_ERROR",
  "CU_FILE_INTERNAL_BATCH_CANCEL_ERROR",
  "CU_FILE_NOMEM_ERROR",
  "CU_FILE_IO_ERROR",
  "CU_FILE_INTERNAL_BUF_REGISTER_ERROR",
  "CU_FILE_HASH_OPR_ERROR",
  "CU_FILE_INVALID_CONTEXT_ERROR",
  "CU_FILE_NVFS_INTERNAL_DRIVER_ERROR",
  "CU_FILE_BATCH_NOCOMPAT_ERROR",
  "CU_FILE_IO_MAX_ERROR"
};

static const char *op_error(int e)
{
  if(e > 5000 && e <= 5050 && op_errors[e - 5001][0])
    return op_errors[e - 5001];
  return "CUfileOpError";
}

/* The bytes of the region as the file holds them vs the GPU's copy. */
static int compare(int fd, const struct cufile_opts *o, void *dev,
                   size_t chunk, struct cufile_result *r, char *err,
                   size_t len)
{
  char *f = malloc(chunk), *g = malloc(chunk);
  int st = CUDA_OK;
  if(!f || !g) {
    snprintf(err, len, "verify: cannot allocate %zu bytes", chunk);
    st = CUDA_FAILED;
  }
  for(uint64_t done = 0; st == CUDA_OK && done < o->size;) {
    size_t n = o->size - done < chunk ? (size_t)(o->size - done) : chunk;
    ssize_t k = pread(fd, f, n, (off_t)(o->offset + done));
    if(k != (ssize_t)n) {
      snprintf(err, len, "verify: pread %s at %llu: %s", o->path,
               (unsigned long long)(o->offset + done),
               k < 0 ? strerror(errno) : "short read");
      st = CUDA_FAILED;
      break;
    }
    st = cuda_copy(g, (char *)dev + done, n, err, len);
    for(size_t i = 0; st == CUDA_OK && i < n; i++)
      if(f[i] != g[i] && !r->verify_errors++)
        r->first_bad = done + i;
    done += n;
  }
  r->verified = st == CUDA_OK;
  free(f);
  free(g);
  return st;
}

/* The bytes to write: a known pattern (cuda_mix of the word's index),
 * put on the GPU chunk by chunk. */
static int fill_pattern(const struct cufile_opts *o, void *dev, size_t chunk,
                        char *err, size_t errlen)
{
  uint64_t *h = malloc(chunk + 8);
  int ok = h != NULL;
  for(uint64_t done = 0; ok && done < o->size; done += chunk) {
    size_t n = o->size - done < chunk ? (size_t)(o->size - done) : chunk;
    for(size_t i = 0; i < (n + 7) / 8; i++)
      h[i] = cuda_mix((done >> 3) + i);
    ok = cuda_copy((char *)dev + done, h, n, err, errlen) == CUDA_OK;
  }
  free(h);
  return ok ? 0 : -1;
}

/* The file's handle with cuFile (*fh); *fd may be swapped for a buffered
 * descriptor when the O_DIRECT one is refused.  0, or -1 with err. */
static int register_file(const struct cufile_api *a,
                         const struct cufile_opts *o, int *fd, void **fh,
                         struct cufile_result *r, char *err, size_t errlen)
{
  cufile_descr_t d;
  cufile_error_t e;
  memset(&d, 0, sizeof(d));
  d.type = CUFILE_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = *fd;
  e = a->handle_register(fh, &d);
  if(e.err && o->direct) {
    /* compatibility mode may refuse an O_DIRECT descriptor on a file
     * system it cannot do direct I/O on: try the file buffered */
    int bfd = open(o->path, o->write ? O_RDWR : O_RDONLY);
    if(bfd >= 0) {
      d.handle.fd = bfd;
      e = a->handle_register(fh, &d);
      if(e.err)
        close(bfd);
      else {
        close(*fd);
        *fd = bfd;
        r->direct = 0;
      }
    }
  }
  if(e.err) {
    snprintf(err, errlen, "cuFileHandleRegister %s: %s (%d), CUresult %d "
             "(cuFile's log says why: cufile.log, CUFILE_LOGFILE_PATH)",
             o->path, op_error(e.err), e.err, e.cu_err);
    *fh = NULL;
    return -1;
  }
  return 0;
}

/* The timed part: the region read into (or written from) the GPU buffer
 * in chunks, then fsync'd after a write.  0, or -1 with err. */
static int transfer(const struct cufile_api *a, const struct cufile_opts *o,
                    void *fh, int fd, void *dev, size_t chunk,
                    struct cufile_result *r, char *err, size_t errlen)
{
  uint64_t t0 = strata_now_ns();
  for(uint64_t done = 0; done < o->size;) {
    size_t n = o->size - done < chunk ? (size_t)(o->size - done) : chunk;
    ssize_t k = o->write ?
      a->write(fh, dev, n, (off_t)(o->offset + done), (off_t)done) :
      a->read(fh, dev, n, (off_t)(o->offset + done), (off_t)done);
    if(k <= 0) {
      snprintf(err, errlen, "%s %s at %llu (%zu bytes): returned %zd%s%s",
               o->write ? "cuFileWrite" : "cuFileRead", o->path,
               (unsigned long long)(o->offset + done), n, k,
               k == -1 ? ", errno " : k == 0 ? " (end of file)" : "",
               k == -1 ? strerror(errno) : "");
      return -1;
    }
    done += (uint64_t)k;
    r->bytes = done;
  }
  if(o->write && fsync(fd)) {
    snprintf(err, errlen, "fsync %s: %s", o->path, strerror(errno));
    return -1;
  }
  r->seconds = (double)(strata_now_ns() - t0) / 1e9;
  return 0;
}

/* The file read back through the page cache and compared with the GPU's
 * copy. */
static int verify_file(const struct cufile_opts *o, void *dev, size_t chunk,
                       struct cufile_result *r, char *err, size_t errlen)
{
  int vfd = open(o->path, O_RDONLY), st;
  if(vfd < 0) {
    snprintf(err, errlen, "verify: open %s: %s", o->path, strerror(errno));
    return CUDA_FAILED;
  }
  st = compare(vfd, o, dev, chunk, r, err, errlen);
  close(vfd);
  return st;
}

int cufile_io(const struct cufile_opts *o, struct cufile_result *r,
              char *err, size_t errlen)
{
  struct cufile_api a;
  cufile_error_t e;
  void *dev = NULL, *fh = NULL;
  size_t chunk = o->chunk ? o->chunk : (size_t)16 << 20;
  int fd = -1, opened = 0, st;
  struct stat sb;
  uint64_t t0;

  memset(r, 0, sizeof(*r));
  if(cufile_load_api(&a, err, errlen))
    return CUDA_ABSENT;
  snprintf(r->mode, sizeof(r->mode), "%s",
           stat("/sys/module/nvidia_fs", &sb) ? "compat" : "gds");
  if((st = cuda_alloc(o->device, (size_t)(o->size ? o->size : 1),
                      CUDA_MEM_DEVICE, &dev, err, errlen)) != CUDA_OK)
    return st;
  st = CUDA_FAILED;
  if(o->write && fill_pattern(o, dev, chunk, err, errlen))
    goto out;
  r->direct = o->direct;
  fd = open(o->path, (o->write ? O_RDWR | O_CREAT : O_RDONLY) |
            (o->direct ? O_DIRECT : 0), 0644);
  if(fd < 0) {
    snprintf(err, errlen, "open %s%s: %s", o->path,
             o->direct ? " (O_DIRECT)" : "", strerror(errno));
    goto out;
  }
  t0 = strata_now_ns();
  e = a.driver_open();
  if(e.err) {
    snprintf(err, errlen, "cuFileDriverOpen: %s (%d), CUresult %d (no GDS "
             "and no compatibility mode? /etc/cufile.json "
             "properties.allow_compat_mode)", op_error(e.err), e.err,
             e.cu_err);
    st = CUDA_ABSENT;
    goto out;
  }
  opened = 1;
  if(a.get_version)
    (void)a.get_version(&r->version);
  if(register_file(&a, o, &fd, &fh, r, err, errlen))
    goto out;
  e = a.buf_register(dev, (size_t)o->size, 0);
  r->buf_registered = !e.err;    /* optional: cuFile bounces otherwise */
  r->register_s = (double)(strata_now_ns() - t0) / 1e9;
  if(transfer(&a, o, fh, fd, dev, chunk, r, err, errlen))
    goto out;
  st = o->verify ? verify_file(o, dev, chunk, r, err, errlen) : CUDA_OK;
out:
  if(r->buf_registered)
    (void)a.buf_deregister(dev);
  if(fh)
    a.handle_deregister(fh);
  if(opened)
    (void)a.driver_close();
  if(fd >= 0)
    close(fd);
  cuda_free(&dev, CUDA_MEM_DEVICE);
  return st;
}
