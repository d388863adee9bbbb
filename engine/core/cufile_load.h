/*
 * cufile_load.h - libcufile (GPUDirect Storage), opened on first use for
 * both its users: cuda.cufile's reads and writes (engine/cuda/cufile.c)
 * and the facts of the S3-over-RDMA GPU path (engine/s3rdma/gpupath.c).
 * One loader (cufile_load.c, through lazylib), so the two never disagree
 * on which library a process has.
 *
 * The declarations below are cufile.h's (CUDA 13.0; as generated into
 * NVIDIA/cuda-python cuda_bindings/cuda/bindings/cycufile.pxd from the
 * headers of 12.9.0 .. 13.0.1; tests/gpu/cufile_abi.c checks them against
 * the header on the GPU machine): CUfileError_t is {CUfileOpError err;
 * CUresult cu_err}, both C enums; CUfileDescr_t is {type; union {int fd;
 * void *handle}; const CUfileFSOps_t *fs_ops}; CU_FILE_SUCCESS is 0 and
 * CU_FILE_HANDLE_TYPE_OPAQUE_FD is 1.
 */
#ifndef STRATA_CUFILE_LOAD_H
#define STRATA_CUFILE_LOAD_H

#include <stddef.h>
#include <sys/types.h>

/* The SONAME libcuobjclient asks for (`ldd libcuobjclient.so.1.2.0`). */
#define CUFILE_SONAME "libcufile.so.0"

typedef struct {
  int err;                 /* CUfileOpError */
  int cu_err;              /* CUresult */
} cufile_error_t;

typedef struct {
  int type;                /* CUfileFileHandleType */
  union {
    int fd;
    void *handle;
  } handle;
  const void *fs_ops;
} cufile_descr_t;

#define CUFILE_HANDLE_TYPE_OPAQUE_FD 1

struct cufile_api {
  cufile_error_t (*driver_open)(void);
  cufile_error_t (*driver_close)(void);
  cufile_error_t (*handle_register)(void **fh, cufile_descr_t *d);
  void (*handle_deregister)(void *fh);
  cufile_error_t (*buf_register)(const void *base, size_t len, int flags);
  cufile_error_t (*buf_deregister)(const void *base);
  ssize_t (*read)(void *fh, void *base, size_t size, off_t foff,
                  off_t boff);
  ssize_t (*write)(void *fh, const void *base, size_t size, off_t foff,
                   off_t boff);
  cufile_error_t (*get_version)(int *v);      /* optional */
};

/* The I/O functions into *a: 0, or -1 with why in err ("libcufile
 * (GPUDirect Storage) not found: ..." or "libcufile lacks ..."). */
int cufile_load_api(struct cufile_api *a, char *err, size_t len);

/* The library the loader finds for CUFILE_SONAME, as facts: 1 when it
 * loaded (path: the file mapped, "" if unknown; version: cuFileGetVersion
 * or 0; *has_sym: it exports sym), else 0 with the loader's words in
 * why. */
int cufile_load_facts(const char *sym, char *path, size_t pathlen,
                      int *version, int *has_sym, char *why,
                      size_t whylen);

#endif
