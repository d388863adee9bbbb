/*
 * memory.c - buffers for RDMA: page-aligned host memory (optionally huge
 * pages, optionally bound to a NUMA node) and dma-buf registration (GPU
 * memory exported by another family), each with its memory region.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "verbs.h"

#define HUGE_2M (2ul << 20)
#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif

static enum verbs_code reg_fail(const char *what, size_t len, int err)
{
  enum verbs_code c = VERBS_ESYS;
  if(err == ENOMEM)
    c = VERBS_ENOMEM;
  return verbs_fail(c, "%s of %zu bytes: %s (%d)%s", what, len,
                    strerror(err), err,
                    err == ENOMEM ? " (raise 'ulimit -l'?)" : "");
}

enum verbs_code verbs_buf_host(struct verbs_dev *d, struct verbs_buf *b,
                               size_t len, int hugepages, int numa_node,
                               int access)
{
  size_t page = hugepages ? HUGE_2M : (size_t)sysconf(_SC_PAGESIZE);
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  void *p;

  memset(b, 0, sizeof(*b));
  if(len == 0)
    return verbs_fail(VERBS_EINVAL, "buffer of 0 bytes");
  b->map_len = (len + page - 1) / page * page;
  if(hugepages)
    flags |= MAP_HUGETLB;
  p = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, flags, -1, 0);
  if(p == MAP_FAILED) {
    int e = errno;
    b->map_len = 0;
    return verbs_fail(VERBS_ENOMEM, "mmap %zu bytes%s: %s (%d)%s", len,
                      hugepages ? " of huge pages" : "", strerror(e), e,
                      hugepages ? " (are 2 MiB huge pages reserved? "
                                  "/proc/sys/vm/nr_hugepages)" : "");
  }
  b->addr = p;
  b->len = len;
  b->hugepages = hugepages;
  if(numa_node >= 0) {
    unsigned long mask[16] = {0};
    if(numa_node >= (int)(sizeof(mask) * 8)) {
      verbs_buf_free(b);
      return verbs_fail(VERBS_EINVAL, "NUMA node %d out of range",
                        numa_node);
    }
    mask[numa_node / (8 * sizeof(long))] |=
      1ul << (numa_node % (8 * sizeof(long)));
    if(syscall(SYS_mbind, p, b->map_len, MPOL_BIND, mask,
               sizeof(mask) * 8, 0)) {
      int e = errno;
      verbs_buf_free(b);
      return verbs_fail(e == EINVAL ? VERBS_EUNSUPPORTED : VERBS_ESYS,
                        "mbind to NUMA node %d: %s (%d)", numa_node,
                        strerror(e), e);
    }
  }
  memset(p, 0, b->map_len);  /* fault the pages in (and on the node) */
  b->kind = VERBS_MEM_HOST;
  b->mr = ibv_reg_mr(d->pd, p, len, access);
  if(!b->mr) {
    int e = errno;
    verbs_buf_free(b);
    return reg_fail("ibv_reg_mr", len, e);
  }
  return VERBS_OK;
}

enum verbs_code verbs_buf_wrap(struct verbs_dev *d, struct verbs_buf *b,
                               void *addr, size_t len, int access)
{
  memset(b, 0, sizeof(*b));
  b->kind = VERBS_MEM_HOST;
  b->addr = addr;
  b->len = len;
  b->mr = ibv_reg_mr(d->pd, addr, len, access);
  if(!b->mr)
    return reg_fail("ibv_reg_mr", len, errno);
  return VERBS_OK;
}

enum verbs_code verbs_buf_dmabuf(struct verbs_dev *d, struct verbs_buf *b,
                                 int fd, uint64_t offset, size_t length,
                                 uint64_t iova, int access)
{
  int e;

  memset(b, 0, sizeof(*b));
  b->kind = VERBS_MEM_CUDA;
  b->len = length;
  if(fd < 0)
    return verbs_fail(VERBS_EINVAL, "dma-buf fd %d is not valid", fd);
  b->mr = ibv_reg_dmabuf_mr(d->pd, offset, length, iova, fd, access);
  if(b->mr)
    return VERBS_OK;
  e = errno;
  if(e == EOPNOTSUPP || e == ENOSYS || e == EPROTONOSUPPORT)
    return verbs_fail(VERBS_EUNSUPPORTED, "%s cannot register a dma-buf: "
                      "ibv_reg_dmabuf_mr: %s (%d)", d->name, strerror(e), e);
  return reg_fail("ibv_reg_dmabuf_mr", length, e);
}

void verbs_buf_free(struct verbs_buf *b)
{
  if(!b)
    return;
  if(b->mr)
    (void)ibv_dereg_mr(b->mr);
  b->mr = NULL;
  if(b->map_len && b->addr)
    (void)munmap(b->addr, b->map_len);
  b->addr = NULL;
  b->map_len = 0;
}
