/*
 * gpupath.c - facts of the GPU-memory path (gpupath.h).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gpupath.h"

typedef int (*version_fn)(int *);

void s3rdma_gpupath_facts(struct s3rdma_gpupath *g)
{
  struct rlimit rl;
  struct link_map *lm = NULL;
  void *lib;

  memset(g, 0, sizeof(*g));
  g->memlock = getrlimit(RLIMIT_MEMLOCK, &rl) ? 0 :
               rl.rlim_cur == RLIM_INFINITY ? -1 : (int64_t)rl.rlim_cur;
  g->peermem = access("/sys/module/nvidia_peermem", F_OK) == 0;
  /* by SONAME, as libcuobjclient asks for it: whichever copy the loader
   * finds first (or one already mapped) is the one cuObject gets */
  lib = dlopen(S3RDMA_CUFILE_SONAME, RTLD_LAZY | RTLD_LOCAL);
  if(!lib) {
    const char *e = dlerror();
    snprintf(g->cufile_why, sizeof(g->cufile_why), "%s",
             e ? e : "not found");
    return;
  }
  g->cufile_loaded = 1;
  if(!dlinfo(lib, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name)
    snprintf(g->cufile_path, sizeof(g->cufile_path), "%s", lm->l_name);
  g->cufile_desc_str = dlsym(lib, S3RDMA_CUFILE_DESC_SYM) != NULL;
  {
    version_fn v = (version_fn)dlsym(lib, "cuFileGetVersion");
    int ver = 0;
    if(v && v(&ver) == 0)
      g->cufile_version = ver;
  }
  dlclose(lib);
}
