/*
 * dc.c - the DC transport probe (dc.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "dc.h"

typedef bool (*is_supported_fn)(struct ibv_device *);
typedef struct ibv_qp *(*create_qp_fn)(struct ibv_context *,
                                       struct ibv_qp_init_attr_ex *,
                                       struct mlx5dv_qp_init_attr *);

/* The kernel driver behind name, e.g. "mlx5_core", "irdma", "rxe". */
static void driver_of(const char *name, char *out, size_t cap)
{
  char path[PATH_MAX], buf[PATH_MAX];
  ssize_t n;
  snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/driver",
           name);
  n = readlink(path, buf, sizeof(buf) - 1);
  if(n > 0) {
    buf[n] = '\0';
    snprintf(out, cap, "%.60s", strrchr(buf, '/') ? strrchr(buf, '/') + 1 :
             buf);
  }
  else if(!strncmp(name, "rxe", 3) || !strncmp(name, "siw", 3))
    snprintf(out, cap, "%.3s (software)", name);
  else
    snprintf(out, cap, "unknown");
}

static int probe_dci(struct ibv_context *ctx, create_qp_fn create,
                     char *why, size_t cap)
{
  struct ibv_qp_init_attr_ex qa;
  struct mlx5dv_qp_init_attr dv;
  struct ibv_pd *pd = ibv_alloc_pd(ctx);
  struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 1, NULL, NULL, 0) : NULL;
  struct ibv_qp *qp = NULL;
  int rc = 0;

  if(!pd || !cq) {
    snprintf(why, cap, "cannot allocate a PD/CQ for the probe: %s",
             strerror(errno));
    goto out;
  }
  memset(&qa, 0, sizeof(qa));
  memset(&dv, 0, sizeof(dv));
  qa.send_cq = cq;
  qa.recv_cq = cq;
  qa.cap.max_send_wr = 1;
  qa.cap.max_send_sge = 1;
  qa.qp_type = IBV_QPT_DRIVER;
  qa.comp_mask = IBV_QP_INIT_ATTR_PD;
  qa.pd = pd;
  dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
  dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
  qp = create(ctx, &qa, &dv);
  if(qp) {
    rc = 1;
    (void)ibv_destroy_qp(qp);
  }
  else
    snprintf(why, cap, "mlx5dv_create_qp(DCI) refused: %s (DC disabled in "
             "firmware, or an mlx5 device without DC)", strerror(errno));
out:
  if(cq)
    (void)ibv_destroy_cq(cq);
  if(pd)
    (void)ibv_dealloc_pd(pd);
  return rc;
}

int verbs_dc_probe(const char *name, char *why, size_t cap)
{
  struct ibv_device **list;
  struct ibv_device *d = NULL;
  struct ibv_context *ctx;
  char drv[64];
  void *lib;
  is_supported_fn is_mlx5;
  create_qp_fn create;
  int n = 0, rc;

  why[0] = '\0';
  list = ibv_get_device_list(&n);
  if(!list || n <= 0) {
    snprintf(why, cap, "no RDMA device");
    if(list)
      ibv_free_device_list(list);
    return -1;
  }
  for(int i = 0; i < n && !d; i++)
    if(!name || !strcmp(ibv_get_device_name(list[i]), name))
      d = list[i];
  if(!d) {
    snprintf(why, cap, "no RDMA device named %s", name);
    ibv_free_device_list(list);
    return -1;
  }
  name = ibv_get_device_name(d);
  driver_of(name, drv, sizeof(drv));
  lib = dlopen("libmlx5.so.1", RTLD_NOW | RTLD_LOCAL);
  is_mlx5 = lib ? (is_supported_fn)dlsym(lib, "mlx5dv_is_supported") : NULL;
  create = lib ? (create_qp_fn)dlsym(lib, "mlx5dv_create_qp") : NULL;
  if(!is_mlx5 || !create || !is_mlx5(d)) {
    snprintf(why, cap, "%s is not an mlx5 device (driver %s): no DC "
             "transport (only NVIDIA ConnectX/BlueField have it)", name,
             drv);
    rc = 0;
  }
  else if(!(ctx = ibv_open_device(d))) {
    snprintf(why, cap, "cannot open %s: %s", name, strerror(errno));
    rc = -1;
  }
  else {
    rc = probe_dci(ctx, create, why, cap);
    if(rc)
      snprintf(why, cap, "%s (driver %s) makes DC initiators", name, drv);
    (void)ibv_close_device(ctx);
  }
  if(lib)
    dlclose(lib);
  ibv_free_device_list(list);
  return rc;
}
