/*
 * verbs_load.c - libibverbs, loaded the first time the engine calls it.
 *
 * libibverbs and the two libraries it brings (libnl-3, libnl-route-3)
 * were mapped in the fork server and in every cell's child, which made
 * each fork and exit slower for cells that never touch RDMA
 * (engine/core/lazylib.h).  So the binary is not linked against it: the
 * ibv_* functions the engine calls are defined here with the prototypes
 * of infiniband/verbs.h and forward to libibverbs' own, resolved once per
 * process.  Everything else the engine uses from verbs.h is inline
 * (ibv_post_send, ibv_poll_cq, ibv_query_gid_ex, ibv_reg_mr: they go
 * through the context's ops or to the functions below).
 *
 * Each symbol is bound to the version a link against the same headers
 * binds (the default version in rdma-core's libibverbs.map,
 * docs/provenance.md): most functions have an old IBVERBS_1.0 one too.
 * `nm -u` of the binary lists what must be here; a call to an ibv_
 * function missing here fails the link.
 *
 * Without the library every function fails as libibverbs fails without
 * a device (NULL or an error, errno ENOSYS), and verbs_load_error() says
 * why (verbs_dev_open reports it as "no RDMA device: ...": a SKIP).
 */
#include <infiniband/verbs.h>

#include <errno.h>

#include "lazylib.h"
#include "verbs_load.h"

#ifndef STRATA_LIBIBVERBS_SONAME
#define STRATA_LIBIBVERBS_SONAME "libibverbs.so.1"
#endif

/* verbs.h turns these names into inline wrappers; the real ones are
 * what is defined here */
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

static struct {
  struct ibv_device **(*get_device_list)(int *);
  void (*free_device_list)(struct ibv_device **);
  const char *(*get_device_name)(struct ibv_device *);
  struct ibv_context *(*open_device)(struct ibv_device *);
  int (*close_device)(struct ibv_context *);
  int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
  int (*query_port)(struct ibv_context *, uint8_t,
                    struct _compat_ibv_port_attr *);
  int (*query_gid_ex)(struct ibv_context *, uint32_t, uint32_t,
                      struct ibv_gid_entry *, uint32_t, size_t);
  ssize_t (*query_gid_table)(struct ibv_context *, struct ibv_gid_entry *,
                             size_t, uint32_t, size_t);
  struct ibv_pd *(*alloc_pd)(struct ibv_context *);
  int (*dealloc_pd)(struct ibv_pd *);
  struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
  struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *, void *, size_t, uint64_t,
                                 unsigned int);
  struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *, uint64_t, size_t,
                                  uint64_t, int, int);
  int (*dereg_mr)(struct ibv_mr *);
  struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *,
                              struct ibv_comp_channel *, int);
  int (*destroy_cq)(struct ibv_cq *);
  struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
  int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
  int (*query_qp)(struct ibv_qp *, struct ibv_qp_attr *, int,
                  struct ibv_qp_init_attr *);
  int (*destroy_qp)(struct ibv_qp *);
  const char *(*port_state_str)(enum ibv_port_state);
  const char *(*wc_status_str)(enum ibv_wc_status);
} fn;

#define V11 "IBVERBS_1.1"
static const struct lazylib_sym syms[] = {
  { (void **)&fn.get_device_list, "ibv_get_device_list", V11 },
  { (void **)&fn.free_device_list, "ibv_free_device_list", V11 },
  { (void **)&fn.get_device_name, "ibv_get_device_name", V11 },
  { (void **)&fn.open_device, "ibv_open_device", V11 },
  { (void **)&fn.close_device, "ibv_close_device", V11 },
  { (void **)&fn.query_device, "ibv_query_device", V11 },
  { (void **)&fn.query_port, "ibv_query_port", V11 },
  { (void **)&fn.query_gid_ex, "_ibv_query_gid_ex", "IBVERBS_1.11" },
  { (void **)&fn.query_gid_table, "_ibv_query_gid_table", "IBVERBS_1.11" },
  { (void **)&fn.alloc_pd, "ibv_alloc_pd", V11 },
  { (void **)&fn.dealloc_pd, "ibv_dealloc_pd", V11 },
  { (void **)&fn.reg_mr, "ibv_reg_mr", V11 },
  { (void **)&fn.reg_mr_iova2, "ibv_reg_mr_iova2", "IBVERBS_1.8" },
  { (void **)&fn.reg_dmabuf_mr, "ibv_reg_dmabuf_mr", "IBVERBS_1.12" },
  { (void **)&fn.dereg_mr, "ibv_dereg_mr", V11 },
  { (void **)&fn.create_cq, "ibv_create_cq", V11 },
  { (void **)&fn.destroy_cq, "ibv_destroy_cq", V11 },
  { (void **)&fn.create_qp, "ibv_create_qp", V11 },
  { (void **)&fn.modify_qp, "ibv_modify_qp", V11 },
  { (void **)&fn.query_qp, "ibv_query_qp", V11 },
  { (void **)&fn.destroy_qp, "ibv_destroy_qp", V11 },
  { (void **)&fn.port_state_str, "ibv_port_state_str", V11 },
  { (void **)&fn.wc_status_str, "ibv_wc_status_str", V11 },
};

static struct lazylib lib = {
  STRATA_LIBIBVERBS_SONAME, "libibverbs1", syms,
  sizeof(syms) / sizeof(syms[0]), 0, ""
};
/* 1 when the real functions are there; else 0 with errno ENOSYS */
static int ready(void)
{
  if(lazylib_ready(&lib))
    return 1;
  errno = ENOSYS;
  return 0;
}

LAZYLIB_ENTRY_POINTS(verbs, lib)

struct ibv_device **ibv_get_device_list(int *num_devices)
{
  if(ready())
    return fn.get_device_list(num_devices);
  if(num_devices)
    *num_devices = 0;
  return NULL;
}

void ibv_free_device_list(struct ibv_device **list)
{
  if(ready())
    fn.free_device_list(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
  return ready() ? fn.get_device_name(device) : NULL;
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
  return ready() ? fn.open_device(device) : NULL;
}

int ibv_close_device(struct ibv_context *context)
{
  return ready() ? fn.close_device(context) : -1;
}

int ibv_query_device(struct ibv_context *context,
                     struct ibv_device_attr *device_attr)
{
  return ready() ? fn.query_device(context, device_attr) : ENOSYS;
}

int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                   struct _compat_ibv_port_attr *port_attr)
{
  return ready() ? fn.query_port(context, port_num, port_attr) : ENOSYS;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
                      uint32_t gid_index, struct ibv_gid_entry *entry,
                      uint32_t flags, size_t entry_size)
{
  return ready() ? fn.query_gid_ex(context, port_num, gid_index, entry,
                                   flags, entry_size) : ENOSYS;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context,
                             struct ibv_gid_entry *entries,
                             size_t max_entries, uint32_t flags,
                             size_t entry_size)
{
  return ready() ? fn.query_gid_table(context, entries, max_entries, flags,
                                      entry_size) : -ENOSYS;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
  return ready() ? fn.alloc_pd(context) : NULL;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
  return ready() ? fn.dealloc_pd(pd) : ENOSYS;
}

/* what ibv_reg_mr's inline wrapper calls when it cannot prove the access
 * flags need no ibv_reg_mr_iova2 (always, at -O0: the Debug build) */
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
                          int access)
{
  return ready() ? fn.reg_mr(pd, addr, length, access) : NULL;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
                                uint64_t iova, unsigned int access)
{
  return ready() ? fn.reg_mr_iova2(pd, addr, length, iova, access) : NULL;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
                                 size_t length, uint64_t iova, int fd,
                                 int access)
{
  return ready() ? fn.reg_dmabuf_mr(pd, offset, length, iova, fd, access)
                 : NULL;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
  return ready() ? fn.dereg_mr(mr) : ENOSYS;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
                             void *cq_context,
                             struct ibv_comp_channel *channel,
                             int comp_vector)
{
  return ready() ? fn.create_cq(context, cqe, cq_context, channel,
                                comp_vector) : NULL;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
  return ready() ? fn.destroy_cq(cq) : ENOSYS;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
                             struct ibv_qp_init_attr *qp_init_attr)
{
  return ready() ? fn.create_qp(pd, qp_init_attr) : NULL;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
  return ready() ? fn.modify_qp(qp, attr, attr_mask) : ENOSYS;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
                 struct ibv_qp_init_attr *init_attr)
{
  return ready() ? fn.query_qp(qp, attr, attr_mask, init_attr) : ENOSYS;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
  return ready() ? fn.destroy_qp(qp) : ENOSYS;
}

const char *ibv_port_state_str(enum ibv_port_state port_state)
{
  return ready() ? fn.port_state_str(port_state) : "unknown";
}

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
  return ready() ? fn.wc_status_str(status) : "unknown";
}
