/*
 * lib.h - the part of NCCL's public API strata calls, loaded at run time
 * with dlopen("libnccl.so.2") so that the binary starts and reports SKIP
 * on a host without NCCL.  The declarations follow nccl.h of NCCL 2.28.9
 * (/usr/local/cuda-13.0/include/nccl.h here; the same in NVIDIA/nccl's
 * src/nccl.h.in): every function returns ncclResult_t (an int), a
 * communicator is an opaque pointer, streams are cudaStream_t.
 */
#ifndef STRATA_NCCL_LIB_H
#define STRATA_NCCL_LIB_H

#include <stddef.h>

typedef int nccl_result;                  /* ncclResult_t, 0 = ncclSuccess */
typedef struct ncclComm *nccl_comm;       /* ncclComm_t */
#define NCCL_UNIQUE_ID_LEN 128            /* NCCL_UNIQUE_ID_BYTES */
typedef struct { char internal[NCCL_UNIQUE_ID_LEN]; } nccl_unique_id;
typedef void *nccl_stream;                /* cudaStream_t */

#define NCCL_FUNCS(X) \
  X(ncclGetVersion, nccl_result, (int *)) \
  X(ncclGetErrorString, const char *, (nccl_result)) \
  X(ncclGetLastError, const char *, (nccl_comm)) \
  X(ncclGetUniqueId, nccl_result, (nccl_unique_id *)) \
  X(ncclCommInitRank, nccl_result, (nccl_comm *, int, nccl_unique_id, int)) \
  X(ncclCommDestroy, nccl_result, (nccl_comm)) \
  X(ncclCommGetAsyncError, nccl_result, (nccl_comm, nccl_result *)) \
  X(ncclGroupStart, nccl_result, (void)) \
  X(ncclGroupEnd, nccl_result, (void)) \
  X(ncclAllReduce, nccl_result, (const void *, void *, size_t, int, int, \
                                 nccl_comm, nccl_stream)) \
  X(ncclAllGather, nccl_result, (const void *, void *, size_t, int, \
                                 nccl_comm, nccl_stream)) \
  X(ncclBroadcast, nccl_result, (const void *, void *, size_t, int, int, \
                                 nccl_comm, nccl_stream)) \
  X(ncclReduceScatter, nccl_result, (const void *, void *, size_t, int, \
                                     int, nccl_comm, nccl_stream)) \
  X(ncclReduce, nccl_result, (const void *, void *, size_t, int, int, int, \
                              nccl_comm, nccl_stream)) \
  X(ncclSend, nccl_result, (const void *, size_t, int, int, nccl_comm, \
                            nccl_stream)) \
  X(ncclRecv, nccl_result, (void *, size_t, int, int, nccl_comm, \
                            nccl_stream))

/* Optional: buffers as nccl-tests allocates them (NCCL >= 2.19), and
 * the AlltoAll collective (NCCL >= 2.28; before, grouped send/recv). */
#define NCCL_OPTIONAL(X) \
  X(ncclMemAlloc, nccl_result, (void **, size_t)) \
  X(ncclMemFree, nccl_result, (void *)) \
  X(ncclAlltoAll, nccl_result, (const void *, void *, size_t, int, \
                                nccl_comm, nccl_stream))

struct nccl_api {
#define NCCL_PTR(name, ret, args) ret (*name) args;
  NCCL_FUNCS(NCCL_PTR)
  NCCL_OPTIONAL(NCCL_PTR)
#undef NCCL_PTR
  int version;          /* ncclGetVersion: 22803 = 2.28.3 */
  char path[256];       /* the file dlopen loaded (dladdr) */
};

/*
 * Load libnccl.so.2 once per process (STRATA_NCCL_LIBRARY names another
 * file).  Returns CUDA_OK with *api, CUDA_ABSENT with the reason when the
 * library or one of NCCL_FUNCS is missing.  Touches no GPU.
 */
int nccl_load(const struct nccl_api **api, char *err, size_t len);

/* "2.28.3" from 22803 (NCCL_VERSION_CODE since 2.9: major*10000 +
 * minor*100 + patch; before: major*1000 + minor*100 + patch). */
void nccl_version_text(int code, char *out, size_t len);

#endif
