/*
 * device.c - open an RDMA device and port, choose the GID, error text.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "verbs.h"
#include "verbs_load.h"

static _Thread_local char verbs_msg[512];

const char *verbs_strerror(enum verbs_code c)
{
  switch(c) {
  case VERBS_OK:
    return "OK";
  case VERBS_ENODEV:
    return "ENODEV";
  case VERBS_EPORT:
    return "EPORT";
  case VERBS_EGID:
    return "EGID";
  case VERBS_ESYS:
    return "ESYS";
  case VERBS_ENOMEM:
    return "ENOMEM";
  case VERBS_ETIMEDOUT:
    return "ETIMEDOUT";
  case VERBS_EWC:
    return "EWC";
  case VERBS_EPEER:
    return "EPEER";
  case VERBS_EUNSUPPORTED:
    return "EUNSUPPORTED";
  case VERBS_EINVAL:
    return "EINVAL";
  case VERBS_ESTOPPED:
    return "ESTOPPED";
  }
  return "E?";
}

const char *verbs_errmsg(void)
{
  return verbs_msg;
}

enum verbs_code verbs_fail(enum verbs_code c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(verbs_msg, sizeof(verbs_msg), fmt, ap);
  va_end(ap);
  return c;
}

int verbs_mtu_bytes(enum ibv_mtu m)
{
  switch(m) {
  case IBV_MTU_256:
    return 256;
  case IBV_MTU_512:
    return 512;
  case IBV_MTU_1024:
    return 1024;
  case IBV_MTU_2048:
    return 2048;
  case IBV_MTU_4096:
    return 4096;
  }
  return 0;
}

double verbs_port_rate_gbps(const struct ibv_port_attr *pa)
{
  double lane, lanes;

  /* Per-lane data rate after line encoding (8b/10b up to QDR, 64b/66b
   * for FDR and EDR, PAM4 rates as the IBTA names them after). */
  switch((unsigned)pa->active_speed) {
  case 1: lane = 2.0; break;          /* SDR */
  case 2: lane = 4.0; break;          /* DDR */
  case 4: lane = 8.0; break;          /* QDR */
  case 8: lane = 10.0; break;         /* FDR10 */
  case 16: lane = 13.64; break;       /* FDR */
  case 32: lane = 25.0; break;        /* EDR */
  case 64: lane = 50.0; break;        /* HDR */
  case 128: lane = 100.0; break;      /* NDR */
  case 256: lane = 200.0; break;      /* XDR */
  default: return 0;
  }
  switch(pa->active_width) {
  case 1: lanes = 1; break;
  case 2: lanes = 4; break;
  case 4: lanes = 8; break;
  case 8: lanes = 12; break;
  case 16: lanes = 2; break;
  default: return 0;
  }
  return lane * lanes;
}

int verbs_gid_is_ipv4(const union ibv_gid *gid)
{
  static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return !memcmp(gid->raw, pfx, sizeof(pfx));
}

void verbs_gid_hex(const union ibv_gid *gid, char *buf)
{
  for(int i = 0; i < 16; i++)
    snprintf(buf + 2 * i, 3, "%02x", gid->raw[i]);
}

void verbs_gid_text(const union ibv_gid *gid, char *buf, size_t len)
{
  if(verbs_gid_is_ipv4(gid))
    inet_ntop(AF_INET, gid->raw + 12, buf, (socklen_t)len);
  else
    inet_ntop(AF_INET6, gid->raw, buf, (socklen_t)len);
}

int verbs_gid_from_hex(const char *hex, union ibv_gid *gid)
{
  if(strlen(hex) != 32)
    return -1;
  for(int i = 0; i < 16; i++) {
    unsigned v;
    if(sscanf(hex + 2 * i, "%2x", &v) != 1)
      return -1;
    gid->raw[i] = (uint8_t)v;
  }
  return 0;
}

static int gid_is_zero(const union ibv_gid *g)
{
  static const union ibv_gid zero;
  return !memcmp(g, &zero, sizeof(zero));
}

static enum verbs_gid_type gid_type_of(uint32_t t)
{
  switch(t) {
  case IBV_GID_TYPE_ROCE_V1:
    return VERBS_GID_ROCE_V1;
  case IBV_GID_TYPE_ROCE_V2:
    return VERBS_GID_ROCE_V2;
  default:
    return VERBS_GID_IB;
  }
}

/* Rank of a GID for auto-selection: lower is better, -1 unusable. */
static int gid_rank(const struct ibv_gid_entry *e)
{
  int v4 = verbs_gid_is_ipv4(&e->gid);
  if(gid_is_zero(&e->gid))
    return -1;
  switch(e->gid_type) {
  case IBV_GID_TYPE_ROCE_V2:
    return v4 ? 0 : 1;
  case IBV_GID_TYPE_ROCE_V1:
    return v4 ? 2 : 3;
  default:
    return 4;
  }
}

enum verbs_code verbs_gid_select(struct ibv_context *ctx, uint8_t port,
                                 int *index, union ibv_gid *gid,
                                 enum verbs_gid_type *type)
{
  struct ibv_gid_entry ents[256];
  ssize_t n = ibv_query_gid_table(ctx, ents, 256, 0);
  int best = -1, best_rank = 99;

  if(n < 0)
    return verbs_fail(VERBS_ESYS, "ibv_query_gid_table: %s (%d)",
                      strerror((int)-n), (int)-n);
  for(ssize_t i = 0; i < n; i++) {
    int r;
    if(ents[i].port_num != port)
      continue;
    r = gid_rank(&ents[i]);
    if(r >= 0 && (r < best_rank ||
                  (r == best_rank && ents[i].gid_index <
                                     ents[best].gid_index))) {
      best = (int)i;
      best_rank = r;
    }
  }
  if(best < 0)
    return verbs_fail(VERBS_EGID, "port %u has no valid GID", port);
  *index = (int)ents[best].gid_index;
  *gid = ents[best].gid;
  *type = gid_type_of(ents[best].gid_type);
  return VERBS_OK;
}

enum verbs_code verbs_gid_get(struct ibv_context *ctx, uint8_t port,
                              int index, union ibv_gid *gid,
                              enum verbs_gid_type *type)
{
  struct ibv_port_attr pa;
  struct ibv_gid_entry e;
  int rc;

  if(ibv_query_port(ctx, port, &pa))
    return verbs_fail(VERBS_EPORT, "ibv_query_port %u: %s (%d)", port,
                      strerror(errno), errno);
  if(index < 0 || index >= pa.gid_tbl_len)
    return verbs_fail(VERBS_EGID, "GID index %d out of range (table has "
                      "%d entries)", index, pa.gid_tbl_len);
  rc = ibv_query_gid_ex(ctx, port, (uint32_t)index, &e, 0);
  if(rc || gid_is_zero(&e.gid))
    return verbs_fail(VERBS_EGID, "GID index %d on port %u is empty%s%s",
                      index, port, rc ? ": " : "",
                      rc ? strerror(rc) : "");
  *gid = e.gid;
  *type = gid_type_of(e.gid_type);
  return VERBS_OK;
}

enum verbs_code verbs_dev_open(struct verbs_dev *d, const char *name,
                               int port, int gid_index)
{
  struct ibv_device **list;
  struct ibv_device *dev = NULL;
  int n = 0;
  enum verbs_code rc;

  memset(d, 0, sizeof(*d));
  /* libibverbs is opened here on first use (verbs_load.c): a host
   * without it has no RDMA device, said with the loader's reason */
  if(verbs_load())
    return verbs_fail(VERBS_ENODEV, "no RDMA device: %s",
                      verbs_load_error());
  list = ibv_get_device_list(&n);
  if(!list)
    return verbs_fail(VERBS_ENODEV, "no RDMA device: ibv_get_device_list: "
                      "%s (%d)", strerror(errno), errno);
  for(int i = 0; i < n; i++)
    if(!name || !*name || !strcmp(ibv_get_device_name(list[i]), name)) {
      dev = list[i];
      break;
    }
  if(!dev) {
    ibv_free_device_list(list);
    if(n == 0)
      return verbs_fail(VERBS_ENODEV, "no RDMA device on this host");
    return verbs_fail(VERBS_ENODEV, "RDMA device '%s' not found (%d "
                      "device%s present)", name, n, n == 1 ? "" : "s");
  }
  snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(dev));
  d->ctx = ibv_open_device(dev);
  ibv_free_device_list(list);
  if(!d->ctx)
    return verbs_fail(VERBS_ESYS, "ibv_open_device %s: %s (%d)", d->name,
                      strerror(errno), errno);
  if(ibv_query_device(d->ctx, &d->attr)) {
    rc = verbs_fail(VERBS_ESYS, "ibv_query_device %s: %s (%d)", d->name,
                    strerror(errno), errno);
    goto fail;
  }
  if(port < 1 || port > d->attr.phys_port_cnt) {
    rc = verbs_fail(VERBS_EPORT, "%s has no port %d (ports 1..%u)",
                    d->name, port, d->attr.phys_port_cnt);
    goto fail;
  }
  d->port = (uint8_t)port;
  if(ibv_query_port(d->ctx, d->port, &d->port_attr)) {
    rc = verbs_fail(VERBS_ESYS, "ibv_query_port %s/%d: %s (%d)", d->name,
                    port, strerror(errno), errno);
    goto fail;
  }
  if(d->port_attr.state != IBV_PORT_ACTIVE) {
    rc = verbs_fail(VERBS_EPORT, "%s port %d is not PORT_ACTIVE (state "
                    "%d: %s)", d->name, port, (int)d->port_attr.state,
                    ibv_port_state_str(d->port_attr.state));
    goto fail;
  }
  d->mtu = d->port_attr.active_mtu;
  if(gid_index < 0)
    rc = verbs_gid_select(d->ctx, d->port, &d->gid_index, &d->gid,
                          &d->gid_type);
  else {
    d->gid_index = gid_index;
    rc = verbs_gid_get(d->ctx, d->port, gid_index, &d->gid, &d->gid_type);
  }
  if(rc)
    goto fail;
  d->pd = ibv_alloc_pd(d->ctx);
  if(!d->pd) {
    rc = verbs_fail(VERBS_ESYS, "ibv_alloc_pd %s: %s (%d)", d->name,
                    strerror(errno), errno);
    goto fail;
  }
  return VERBS_OK;
fail:
  verbs_dev_close(d);
  return rc;
}

void verbs_dev_close(struct verbs_dev *d)
{
  if(!d)
    return;
  if(d->pd)
    (void)ibv_dealloc_pd(d->pd);
  d->pd = NULL;
  if(d->ctx)
    (void)ibv_close_device(d->ctx);
  d->ctx = NULL;
}
