/*
 * gpupath.c - facts of the GPU-memory path (gpupath.h); libcufile's come
 * from engine/core/cufile_load.c, the one loader of that library.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cufile_load.h"
#include "gpupath.h"

void s3rdma_gpupath_facts(struct s3rdma_gpupath *g)
{
  struct rlimit rl;

  memset(g, 0, sizeof(*g));
  g->memlock = getrlimit(RLIMIT_MEMLOCK, &rl) ? 0 :
               rl.rlim_cur == RLIM_INFINITY ? -1 : (int64_t)rl.rlim_cur;
  g->peermem = access("/sys/module/nvidia_peermem", F_OK) == 0;
  g->cufile_loaded =
    cufile_load_facts(S3RDMA_CUFILE_DESC_SYM, g->cufile_path,
                      sizeof(g->cufile_path), &g->cufile_version,
                      &g->cufile_desc_str, g->cufile_why,
                      sizeof(g->cufile_why));
}
