/*
 * dc.h - does an RDMA device have the DC (Dynamically Connected)
 * transport?  NVIDIA cuObject's protocol CUOBJ_PROTO_RDMA_DC_V1 (what
 * AIStor speaks) needs it, and only mlx5 devices (ConnectX, BlueField)
 * have it: irdma (E810), rxe, siw and the rest do not.
 *
 * Method, as UCX decides it (openucx/ucx src/uct/ib/mlx5/dv/
 * ib_mlx5dv_md.c, uct_ib_mlx5_check_dc): the device must be an mlx5 one
 * (mlx5dv_is_supported) and mlx5dv_create_qp must make a DCI
 * (IBV_QPT_DRIVER, MLX5DV_QP_INIT_ATTR_MASK_DC, MLX5DV_DCTYPE_DCI) on it;
 * the probe QP is destroyed at once.  libmlx5.so.1 is loaded at run time:
 * a host without it has no mlx5 device.  No lua.h.
 */
#ifndef STRATA_VERBS_DC_H
#define STRATA_VERBS_DC_H

#include <stddef.h>

/*
 * Probe device name (NULL: the first).  Returns 1 (DC available), 0 (not,
 * with why: "rxe0 is not an mlx5 device (driver rxe) ...") or -1 (no
 * such device / no RDMA stack, why says which).
 */
int verbs_dc_probe(const char *name, char *why, size_t cap);

#endif
