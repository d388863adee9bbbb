/*
 * cuobj.c - the cuObject token provider, thin on purpose (cuobj.h).
 *
 * cuObjClient (cuobjclient.h, NVIDIA's documentation "cuObjClient API"):
 *   cuObjClient(CUObjOps_t &ops, cuObjProto_t proto = CUOBJ_PROTO_RDMA_DC_V1)
 *   cuObjErr_t cuMemObjGetDescriptor(void *ptr, size_t size)
 *   cuObjErr_t cuMemObjGetRDMAToken(void *ptr, size_t size, size_t off,
 *                                   cuObjOpType_t op, char **desc_out)
 *   cuObjErr_t cuMemObjPutRDMAToken(char *desc)
 *   bool isConnected(void)
 * with CUObjOps_t = struct CUObjIOOps, cuObjProto_t = enum
 * cuObjProto_enum, cuObjOpType_t = enum cuObjOpType_enum.  strata only
 * mints tokens (it never calls cuObjGet/Put), so the callback table is
 * left zeroed.  The object's size is not published: it is constructed in
 * a 64 KiB zeroed block.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuobj.h"

#define CUOBJ_PROTO_RDMA_DC_V1 1001
#define CUOBJ_GET 0
#define CUOBJ_PUT 1
#define OBJ_BLOCK (64u << 10)

typedef void (*ctor_fn)(void *self, void *ops, int proto);
typedef void (*dtor_fn)(void *self);
typedef int (*getdesc_fn)(void *self, void *ptr, size_t size);
typedef int (*putdesc_fn)(void *self, void *ptr);
typedef int (*gettok_fn)(void *self, void *ptr, size_t size, size_t off,
                         int op, char **out);
typedef int (*puttok_fn)(void *self, char *desc);
typedef int (*conn_fn)(void *self);     /* bool in al */

struct s3rdma_cuobj {
  void *lib;
  void *self;              /* the cuObjClient object */
  unsigned char ops[4096]; /* CUObjIOOps, zeroed: no callbacks */
  dtor_fn dtor;
  getdesc_fn getdesc;
  putdesc_fn putdesc;
  gettok_fn gettok;
  puttok_fn puttok;
  void *registered;
};

static const char *const lib_names[] = {
  "libcuobjclient.so", "libcuobjclient.so.1",
  "/usr/local/cuda/lib64/libcuobjclient.so",
  "/usr/local/cuda/targets/x86_64-linux/lib/libcuobjclient.so", NULL
};

struct s3rdma_cuobj *s3rdma_cuobj_open(char *why, size_t cap)
{
  struct s3rdma_cuobj *c = calloc(1, sizeof(*c));
  ctor_fn ctor;
  conn_fn conn;
  const char *missing = NULL;

  if(!c) {
    snprintf(why, cap, "out of memory");
    return NULL;
  }
  for(int i = 0; lib_names[i] && !c->lib; i++)
    c->lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
  if(!c->lib) {
    snprintf(why, cap, "NVIDIA cuObject client library (libcuobjclient.so, "
             "CUDA >= 13.1 or the cuObject package) not found");
    free(c);
    return NULL;
  }
#define SYM(var, type, name) \
  if(!(var = (type)dlsym(c->lib, name)) && !missing) missing = name
  SYM(ctor, ctor_fn, "_ZN11cuObjClientC1ER10CUObjIOOps15cuObjProto_enum");
  SYM(c->dtor, dtor_fn, "_ZN11cuObjClientD1Ev");
  SYM(c->getdesc, getdesc_fn, "_ZN11cuObjClient21cuMemObjGetDescriptorEPvm");
  SYM(c->putdesc, putdesc_fn, "_ZN11cuObjClient21cuMemObjPutDescriptorEPv");
  SYM(c->gettok, gettok_fn,
      "_ZN11cuObjClient20cuMemObjGetRDMATokenEPvmm16cuObjOpType_enumPPc");
  SYM(c->puttok, puttok_fn, "_ZN11cuObjClient20cuMemObjPutRDMATokenEPc");
  SYM(conn, conn_fn, "_ZN11cuObjClient11isConnectedEv");
#undef SYM
  if(missing) {
    snprintf(why, cap, "libcuobjclient.so lacks %s (an API this build of "
             "strata does not know)", missing);
    dlclose(c->lib);
    free(c);
    return NULL;
  }
  c->self = aligned_alloc(64, OBJ_BLOCK);
  if(!c->self) {
    snprintf(why, cap, "out of memory");
    s3rdma_cuobj_close(&c);
    return NULL;
  }
  memset(c->self, 0, OBJ_BLOCK);
  ctor(c->self, c->ops, CUOBJ_PROTO_RDMA_DC_V1);
  if(!(conn(c->self) & 0xff)) {
    snprintf(why, cap, "cuObjClient is not connected (no DC-capable RDMA "
             "NIC: cuObject needs NVIDIA ConnectX)");
    s3rdma_cuobj_close(&c);
    return NULL;
  }
  return c;
}

void s3rdma_cuobj_close(struct s3rdma_cuobj **cp)
{
  struct s3rdma_cuobj *c = cp ? *cp : NULL;
  if(!c)
    return;
  if(c->registered)
    (void)c->putdesc(c->self, c->registered);
  if(c->self && c->dtor)
    c->dtor(c->self);
  free(c->self);
  if(c->lib)
    dlclose(c->lib);
  free(c);
  *cp = NULL;
}

char *s3rdma_cuobj_token(struct s3rdma_cuobj *c, void *ptr, size_t len,
                         size_t off, size_t size, int put, char *why,
                         size_t cap)
{
  char *desc = NULL, *copy;
  if(c->registered != ptr) {
    if(c->registered)
      (void)c->putdesc(c->self, c->registered);
    c->registered = NULL;
    if(c->getdesc(c->self, ptr, len) != 0) {
      snprintf(why, cap, "cuMemObjGetDescriptor(%zu bytes) failed", len);
      return NULL;
    }
    c->registered = ptr;
  }
  if(c->gettok(c->self, ptr, size, off, put ? CUOBJ_PUT : CUOBJ_GET,
               &desc) != 0 || !desc) {
    snprintf(why, cap, "cuMemObjGetRDMAToken failed");
    return NULL;
  }
  copy = strdup(desc);
  (void)c->puttok(c->self, desc);
  if(!copy)
    snprintf(why, cap, "out of memory");
  return copy;
}
