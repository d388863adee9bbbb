/*
 * lib.c - see lib.h.  NCCL is opened like NVML in engine/cuda (dlopen at
 * first use, never linked), so strata needs no NCCL at build time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda/cuda.h"  /* not the toolkit's cuda.h */
#include "lib.h"

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nccl_api api;
static int load_status = -1;
static char load_err[384];

void nccl_version_text(int code, char *out, size_t len)
{
  if(code >= 10000)
    snprintf(out, len, "%d.%d.%d", code / 10000, code / 100 % 100,
             code % 100);
  else
    snprintf(out, len, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

static int load(void)
{
  const char *file = getenv("STRATA_NCCL_LIBRARY");
  void *h;
  Dl_info info;
  if(!file || !*file)
    file = "libnccl.so.2";
  h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if(!h) {
    const char *e = dlerror();
    snprintf(load_err, sizeof(load_err), "%s not loadable (NCCL is not "
             "installed): %s", file, e ? e : "dlopen failed");
    return CUDA_ABSENT;
  }
#define RESOLVE(name, ret, args) \
  *(void **)&api.name = dlsym(h, #name); \
  if(!api.name) { \
    snprintf(load_err, sizeof(load_err), "%s lacks %s (not NCCL, or an NCCL too old)", \
             file, #name); \
    dlclose(h); \
    return CUDA_ABSENT; \
  }
  NCCL_FUNCS(RESOLVE)
#undef RESOLVE
#define RESOLVE_OPT(name, ret, args) *(void **)&api.name = dlsym(h, #name);
  NCCL_OPTIONAL(RESOLVE_OPT)
#undef RESOLVE_OPT
  if(api.ncclGetVersion(&api.version) != 0) {
    snprintf(load_err, sizeof(load_err), "%s: ncclGetVersion failed", file);
    return CUDA_FAILED;
  }
  snprintf(api.path, sizeof(api.path), "%s", file);
  if(dladdr(*(void **)&api.ncclGetVersion, &info) && info.dli_fname)
    snprintf(api.path, sizeof(api.path), "%s", info.dli_fname);
  return CUDA_OK;
}

int nccl_load(const struct nccl_api **out, char *err, size_t len)
{
  int s;
  pthread_mutex_lock(&load_lock);
  if(load_status < 0)
    load_status = load();
  s = load_status;
  pthread_mutex_unlock(&load_lock);
  *out = s == CUDA_OK ? &api : NULL;
  if(s != CUDA_OK)
    snprintf(err, len, "%s", load_err);
  return s;
}
