/*
 * cuobj.h - NVIDIA cuObject's client library (libcuobjclient.so), loaded
 * at run time when present, to mint the DC descriptor that AIStor expects
 * in x-amz-rdma-token.  The library's API is a C++ class (cuObjClient);
 * its methods are resolved by their Itanium-ABI names.  What was and was
 * not verified: docs/s3-rdma.md, "cuObject".  No lua.h.
 */
#ifndef STRATA_S3RDMA_CUOBJ_H
#define STRATA_S3RDMA_CUOBJ_H

#include <stddef.h>

struct s3rdma_cuobj;

/* cuObject pins at most this much in one registration
 * (cuMemObjGetDescriptor): minio/minio-cpp @769130e include/miniocpp/
 * rdma.h kCuObjMaxMemoryRegSize; at 4 GiB libminiocpp segfaults
 * (minio/rdma-training docs/troubleshooting.md section 4). */
#define S3RDMA_CUOBJ_MAX_REG (4ull << 30)

/*
 * Load the library and make a client.  NULL with why (the reason to SKIP:
 * library absent, a symbol missing, not connected) when it cannot.
 */
struct s3rdma_cuobj *s3rdma_cuobj_open(char *why, size_t cap);
void s3rdma_cuobj_close(struct s3rdma_cuobj **c);

/*
 * Register ptr/len (host or CUDA memory) and mint the descriptor for a
 * GET (put = 0) or PUT of size bytes at buffer offset off: a malloc'd
 * string to send verbatim.  NULL with why on failure.
 */
char *s3rdma_cuobj_token(struct s3rdma_cuobj *c, void *ptr, size_t len,
                         size_t off, size_t size, int put, char *why,
                         size_t cap);

#endif
