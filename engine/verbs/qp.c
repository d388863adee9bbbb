/*
 * qp.c - completion queues, RC queue pairs, connecting them, posting work
 * requests and polling with a deadline.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>

#include "strata.h"
#include "verbs.h"

struct ibv_cq *verbs_cq_create(struct verbs_dev *d, int depth)
{
  struct ibv_cq *cq;
  if(depth > d->attr.max_cqe)
    depth = d->attr.max_cqe;
  cq = ibv_create_cq(d->ctx, depth, NULL, NULL, 0);
  if(!cq)
    verbs_fail(errno == ENOMEM ? VERBS_ENOMEM : VERBS_ESYS,
               "ibv_create_cq(%d) on %s: %s (%d)", depth, d->name,
               strerror(errno), errno);
  return cq;
}

void verbs_cq_destroy(struct ibv_cq **cq)
{
  if(cq && *cq) {
    (void)ibv_destroy_cq(*cq);
    *cq = NULL;
  }
}

struct ibv_qp *verbs_qp_create(struct verbs_dev *d, struct ibv_cq *send_cq,
                               struct ibv_cq *recv_cq,
                               struct verbs_qp_opts *o)
{
  struct ibv_qp_init_attr ia;
  struct ibv_qp *qp;

  memset(&ia, 0, sizeof(ia));
  ia.send_cq = send_cq;
  ia.recv_cq = recv_cq;
  ia.qp_type = IBV_QPT_RC;
  ia.sq_sig_all = 0;
  ia.cap.max_send_wr = o->max_send_wr ? o->max_send_wr : 1;
  ia.cap.max_recv_wr = o->max_recv_wr ? o->max_recv_wr : 1;
  ia.cap.max_send_sge = o->max_sge ? o->max_sge : 1;
  ia.cap.max_recv_sge = o->max_sge ? o->max_sge : 1;
  ia.cap.max_inline_data = o->max_inline;
  qp = ibv_create_qp(d->pd, &ia);
  if(!qp && o->max_inline) {
    ia.cap.max_inline_data = 0;
    qp = ibv_create_qp(d->pd, &ia);
  }
  if(!qp) {
    verbs_fail(errno == ENOMEM ? VERBS_ENOMEM : VERBS_ESYS,
               "ibv_create_qp (RC, send %u, recv %u) on %s: %s (%d)",
               ia.cap.max_send_wr, ia.cap.max_recv_wr, d->name,
               strerror(errno), errno);
    return NULL;
  }
  o->max_inline = ia.cap.max_inline_data;
  return qp;
}

void verbs_qp_destroy(struct ibv_qp **qp)
{
  if(qp && *qp) {
    (void)ibv_destroy_qp(*qp);
    *qp = NULL;
  }
}

uint32_t verbs_random_psn(void)
{
  uint32_t v = 0;
  if(getrandom(&v, sizeof(v), 0) != sizeof(v))
    v = (uint32_t)strata_now_ns();
  v &= 0xffffff;
  return v ? v : 1;
}

void verbs_endpoint_local(const struct verbs_dev *d, const struct ibv_qp *qp,
                          uint32_t psn, struct verbs_endpoint *ep)
{
  memset(ep, 0, sizeof(*ep));
  ep->qpn = qp->qp_num;
  ep->psn = psn & 0xffffff;
  ep->gid = d->gid;
  ep->lid = d->port_attr.lid;
  ep->port = d->port;
  ep->mtu = d->mtu;
}

enum verbs_code verbs_qp_connect(struct ibv_qp *qp, const struct verbs_dev *d,
                                 uint32_t local_psn,
                                 const struct verbs_endpoint *remote)
{
  return verbs_qp_connect_timeout(qp, d, local_psn, remote,
                                  VERBS_QP_TIMEOUT, VERBS_RETRY_CNT);
}

enum verbs_code verbs_qp_connect_timeout(struct ibv_qp *qp,
                                         const struct verbs_dev *d,
                                         uint32_t local_psn,
                                         const struct verbs_endpoint *remote,
                                         int timeout, int retry)
{
  struct ibv_qp_attr a;
  int rd = d->attr.max_qp_rd_atom;
  int rc;

  if(rd > 16)
    rd = 16;
  if(rd < 1)
    rd = 1;
  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = d->port;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                      IBV_ACCESS_REMOTE_READ;
  rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if(rc)
    return verbs_fail(VERBS_ESYS, "QP %u to INIT: %s (%d)", qp->qp_num,
                      strerror(rc), rc);

  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = remote->mtu && remote->mtu < d->mtu ? remote->mtu : d->mtu;
  a.dest_qp_num = remote->qpn;
  a.rq_psn = remote->psn & 0xffffff;
  a.max_dest_rd_atomic = (uint8_t)rd;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = remote->gid;
  a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.dlid = remote->lid;
  a.ah_attr.sl = 0;
  a.ah_attr.port_num = d->port;
  rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if(rc)
    return verbs_fail(VERBS_ESYS, "QP %u to RTR (remote qpn %u, MTU %d, "
                      "GID index %d): %s (%d)", qp->qp_num, remote->qpn,
                      verbs_mtu_bytes(a.path_mtu), d->gid_index,
                      strerror(rc), rc);

  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RTS;
  a.timeout = (uint8_t)(timeout < 1 || timeout > 31 ? VERBS_QP_TIMEOUT
                                                     : timeout);
  a.retry_cnt = (uint8_t)(retry < 1 || retry > 7 ? VERBS_RETRY_CNT : retry);
  a.rnr_retry = 7;
  a.sq_psn = local_psn & 0xffffff;
  a.max_rd_atomic = (uint8_t)rd;
  rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
                     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                     IBV_QP_MAX_QP_RD_ATOMIC);
  if(rc)
    return verbs_fail(VERBS_ESYS, "QP %u to RTS: %s (%d)", qp->qp_num,
                      strerror(rc), rc);
  return VERBS_OK;
}

static enum verbs_code post(struct ibv_qp *qp, struct ibv_send_wr *wr,
                            const char *what)
{
  struct ibv_send_wr *bad = NULL;
  int rc = ibv_post_send(qp, wr, &bad);
  if(rc)
    return verbs_fail(rc == ENOMEM ? VERBS_ENOMEM : VERBS_ESYS,
                      "ibv_post_send %s on QP %u: %s (%d)", what,
                      qp->qp_num, strerror(rc), rc);
  return VERBS_OK;
}

static void fill_wr(struct ibv_send_wr *wr, struct ibv_sge *sge,
                    uint64_t wr_id, uint64_t laddr, uint32_t len,
                    uint32_t lkey, int signaled)
{
  memset(wr, 0, sizeof(*wr));
  sge->addr = laddr;
  sge->length = len;
  sge->lkey = lkey;
  wr->wr_id = wr_id;
  wr->sg_list = sge;
  wr->num_sge = len ? 1 : 0;
  wr->send_flags = signaled ? IBV_SEND_SIGNALED : 0;
}

enum verbs_code verbs_post_write(struct ibv_qp *qp, uint64_t wr_id,
                                 uint64_t laddr, uint32_t len, uint32_t lkey,
                                 uint64_t raddr, uint32_t rkey,
                                 int signaled, int inline_ok)
{
  struct ibv_send_wr wr;
  struct ibv_sge sge;
  fill_wr(&wr, &sge, wr_id, laddr, len, lkey, signaled);
  wr.opcode = IBV_WR_RDMA_WRITE;
  if(inline_ok)
    wr.send_flags |= IBV_SEND_INLINE;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  return post(qp, &wr, "RDMA WRITE");
}

enum verbs_code verbs_post_write_imm(struct ibv_qp *qp, uint64_t wr_id,
                                     uint64_t laddr, uint32_t len,
                                     uint32_t lkey, uint64_t raddr,
                                     uint32_t rkey, uint32_t imm,
                                     int signaled)
{
  struct ibv_send_wr wr;
  struct ibv_sge sge;
  fill_wr(&wr, &sge, wr_id, laddr, len, lkey, signaled);
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.imm_data = htonl(imm);
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  return post(qp, &wr, "RDMA WRITE WITH IMM");
}

enum verbs_code verbs_post_read(struct ibv_qp *qp, uint64_t wr_id,
                                uint64_t laddr, uint32_t len, uint32_t lkey,
                                uint64_t raddr, uint32_t rkey, int signaled)
{
  struct ibv_send_wr wr;
  struct ibv_sge sge;
  fill_wr(&wr, &sge, wr_id, laddr, len, lkey, signaled);
  wr.opcode = IBV_WR_RDMA_READ;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  return post(qp, &wr, "RDMA READ");
}

enum verbs_code verbs_post_send(struct ibv_qp *qp, uint64_t wr_id,
                                uint64_t laddr, uint32_t len, uint32_t lkey,
                                int signaled, int inline_ok)
{
  struct ibv_send_wr wr;
  struct ibv_sge sge;
  fill_wr(&wr, &sge, wr_id, laddr, len, lkey, signaled);
  wr.opcode = IBV_WR_SEND;
  if(inline_ok)
    wr.send_flags |= IBV_SEND_INLINE;
  return post(qp, &wr, "SEND");
}

enum verbs_code verbs_post_recv(struct ibv_qp *qp, uint64_t wr_id,
                                uint64_t laddr, uint32_t len, uint32_t lkey)
{
  struct ibv_recv_wr wr, *bad = NULL;
  struct ibv_sge sge;
  int rc;

  memset(&wr, 0, sizeof(wr));
  sge.addr = laddr;
  sge.length = len;
  sge.lkey = lkey;
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = len ? 1 : 0;
  rc = ibv_post_recv(qp, &wr, &bad);
  if(rc)
    return verbs_fail(rc == ENOMEM ? VERBS_ENOMEM : VERBS_ESYS,
                      "ibv_post_recv on QP %u: %s (%d)", qp->qp_num,
                      strerror(rc), rc);
  return VERBS_OK;
}

int verbs_poll(struct ibv_cq *cq, struct ibv_wc *wc, int max,
               uint64_t timeout_ns)
{
  uint64_t deadline = 0, start = 0;
  unsigned spins = 0;

  for(;;) {
    int n = ibv_poll_cq(cq, max, wc);
    if(n < 0) {
      verbs_fail(VERBS_ESYS, "ibv_poll_cq: error %d", n);
      return -VERBS_ESYS;
    }
    if(n > 0 || timeout_ns == 0)
      return n;
    if((++spins & 255) == 0) {
      uint64_t now = strata_now_ns();
      if(!deadline) {
        deadline = now + timeout_ns;
        start = now;
      }
      else if(now >= deadline) {
        verbs_fail(VERBS_ETIMEDOUT, "no completion within %.3f s",
                   (double)timeout_ns / 1e9);
        return -VERBS_ETIMEDOUT;
      }
      else if(now - start > VERBS_YIELD_NS)
        sched_yield();  /* after the deadline test: a yield must not hide it */
      if(strata_stop_flag) {
        verbs_fail(VERBS_ESTOPPED, "interrupted");
        return -VERBS_ESTOPPED;
      }
    }
  }
}

enum verbs_code verbs_wc_check(const struct ibv_wc *wc, const char *what)
{
  if(wc->status == IBV_WC_SUCCESS)
    return VERBS_OK;
  return verbs_fail(VERBS_EWC, "%s: work completion %s (%d), vendor 0x%x, "
                    "QP %u", what, ibv_wc_status_str(wc->status),
                    (int)wc->status, wc->vendor_err, wc->qp_num);
}
