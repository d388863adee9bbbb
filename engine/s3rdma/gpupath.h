/*
 * gpupath.h - read-only facts of the GPU-memory S3-over-RDMA path that
 * only C can see: the locked-memory limit, the libcufile the loader
 * picks for its SONAME (and whether it exports what libcuobjclient
 * needs), and whether nvidia_peermem is loaded.  The judging is in
 * lua/strata/lib/s3preflight.lua.  No lua.h.
 */
#ifndef STRATA_S3RDMA_GPUPATH_H
#define STRATA_S3RDMA_GPUPATH_H

#include <stddef.h>
#include <stdint.h>

/* libcuobjclient 1.2.0 imports this from libcufile (nm -D): it exists in
 * cuFile >= 1.18 only (minio/rdma-training docs/troubleshooting.md, 2;
 * present in libcufile.so.1.18.0 of minio/minio-cpp @769130e). */
#define S3RDMA_CUFILE_DESC_SYM "_Z20cuFileRDMADescStrGetPKvmm12CUfileOpcodePPc"

struct s3rdma_gpupath {
  int64_t memlock;          /* RLIMIT_MEMLOCK soft limit, bytes; -1 =
                               unlimited */
  int cufile_loaded;        /* the SONAME resolved and loaded */
  char cufile_path[512];    /* the file the loader mapped for it */
  int cufile_version;       /* cuFileGetVersion, 0 when not callable */
  int cufile_desc_str;      /* exports S3RDMA_CUFILE_DESC_SYM */
  char cufile_why[300];     /* dlopen's message when not loaded */
  int peermem;              /* /sys/module/nvidia_peermem exists */
};

/* Fill *g; never fails (absent things are recorded as absent). */
void s3rdma_gpupath_facts(struct s3rdma_gpupath *g);

#endif
