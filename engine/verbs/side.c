/*
 * side.c - one end of a measurement: device, buffer, CQs, QPs; the data
 * pattern written at one end and checked at the other.
 */
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "engine.h"

#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
                IBV_ACCESS_REMOTE_READ)

int side_nslots(const struct verbs_test *t)
{
  uint64_t slot = (t->size + 63) / 64 * 64;
  uint64_t cap = t->max_buffer ? t->max_buffer : VERBS_MAX_BUFFER;
  uint64_t n = cap / (2 * (slot ? slot : 64));
  if(n > (uint64_t)t->qps)
    n = (uint64_t)t->qps;
  return n < 1 ? 1 : (int)n;
}

double thread_cpu_s(void)
{
  struct timespec ts;
  if(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
    return 0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum verbs_code side_open(struct verbs_side *s, const struct verbs_test *t,
                          const char *dev, int port, int gid_index,
                          uint8_t seed)
{
  struct verbs_qp_opts qo;
  enum verbs_code rc;
  uint64_t total;
  int cqd;

  memset(s, 0, sizeof(*s));
  s->seed = seed;
  s->qp_timeout = t->qp_timeout;
  s->retry_cnt = t->retry_cnt;
  if(t->qps < 1 || t->qps > VERBS_MAX_QPS)
    return verbs_fail(VERBS_EINVAL, "qps %d out of range 1..%d", t->qps,
                      VERBS_MAX_QPS);
  rc = verbs_dev_open(&s->dev, dev, port, gid_index);
  if(rc)
    return rc;
  if(t->size > s->dev.port_attr.max_msg_sz) {
    rc = verbs_fail(VERBS_EINVAL, "message size %llu exceeds %s's maximum "
                    "%u", (unsigned long long)t->size, s->dev.name,
                    s->dev.port_attr.max_msg_sz);
    goto fail;
  }
  s->slot = (t->size + 63) / 64 * 64;
  if(s->slot == 0)
    s->slot = 64;
  s->nslots = side_nslots(t);
  total = s->slot * 2 * (uint64_t)s->nslots;
  if(t->mem == VERBS_MEM_CUDA) {
    if(t->dmabuf_fd < 0) {
      rc = verbs_fail(VERBS_EUNSUPPORTED, "no dma-buf export of GPU "
                      "memory available");
      goto fail;
    }
    rc = verbs_buf_dmabuf(&s->dev, &s->buf, t->dmabuf_fd, t->dmabuf_off,
                          total, 0, ACCESS);
  }
  else
    rc = verbs_buf_host(&s->dev, &s->buf, total, t->hugepages, t->numa,
                        ACCESS);
  if(rc)
    goto fail;
  cqd = (t->tx_depth + t->rx_depth + 2) * t->qps;
  s->scq = verbs_cq_create(&s->dev, cqd);
  s->rcq = s->scq ? verbs_cq_create(&s->dev, cqd) : NULL;
  if(!s->rcq) {
    rc = VERBS_ESYS;
    goto fail;
  }
  for(int i = 0; i < t->qps; i++) {
    memset(&qo, 0, sizeof(qo));
    /* a latency SEND signals one in cq_mod (lat.c): room for them */
    qo.max_send_wr = (uint32_t)(t->kind == VERBS_KIND_LAT &&
                                t->cq_mod > t->tx_depth ? t->cq_mod
                                                        : t->tx_depth) + 1;
    qo.max_recv_wr = (uint32_t)t->rx_depth + 1;
    qo.max_inline = (uint32_t)t->inline_size;
    s->qp[i] = verbs_qp_create(&s->dev, s->scq, s->rcq, &qo);
    if(!s->qp[i]) {
      rc = VERBS_ESYS;
      goto fail;
    }
    s->psn[i] = verbs_random_psn();
    /* the device may grant more than asked: never inline past the ask */
    s->max_inline = qo.max_inline < (uint32_t)t->inline_size
                      ? qo.max_inline : (uint32_t)t->inline_size;
    s->nqp = i + 1;
  }
  return VERBS_OK;
fail:
  side_close(s);
  return rc;
}

void side_endpoint(const struct verbs_side *s, struct verbs_endpoint *ep)
{
  verbs_endpoint_local(&s->dev, s->qp[0], s->psn[0], ep);
  ep->addr = s->buf.kind == VERBS_MEM_HOST ? (uint64_t)(uintptr_t)s->buf.addr
                                           : 0;
  ep->rkey = s->buf.mr->rkey;
  ep->len = s->buf.len;
}

enum verbs_code side_connect(struct verbs_side *s,
                             const struct verbs_endpoint *peer,
                             const uint32_t *qpn, const uint32_t *psn)
{
  for(int i = 0; i < s->nqp; i++) {
    struct verbs_endpoint ep = *peer;
    enum verbs_code rc;
    ep.qpn = qpn[i];
    ep.psn = psn[i];
    rc = verbs_qp_connect_timeout(s->qp[i], &s->dev, s->psn[i], &ep,
                                  s->qp_timeout, s->retry_cnt);
    if(rc)
      return rc;
  }
  s->raddr = peer->addr;
  s->rkey = peer->rkey;
  return VERBS_OK;
}

int side_qp_timeout(const struct verbs_side *s)
{
  struct ibv_qp_attr a;
  struct ibv_qp_init_attr ia;
  if(!s->nqp || ibv_query_qp(s->qp[0], &a, IBV_QP_TIMEOUT, &ia))
    return -1;
  return a.timeout;
}

void side_close(struct verbs_side *s)
{
  for(int i = 0; i < VERBS_MAX_QPS; i++)
    verbs_qp_destroy(&s->qp[i]);
  s->nqp = 0;
  verbs_cq_destroy(&s->scq);
  verbs_cq_destroy(&s->rcq);
  verbs_buf_free(&s->buf);
  verbs_dev_close(&s->dev);
}

void side_fill(struct verbs_side *s, uint64_t size)
{
  if(s->buf.kind != VERBS_MEM_HOST)
    return;
  for(int q = 0; q < s->nslots; q++) {
    uint8_t *p = (uint8_t *)s->buf.addr + (uint64_t)q * 2 * s->slot + s->slot;
    for(uint64_t i = 0; i < size; i++)
      p[i] = side_pattern(s->seed, q, i);
  }
}

void side_check(struct verbs_side *s, uint64_t size, uint8_t peer_seed,
                struct verbs_outcome *o)
{
  o->validated = 0;
  o->mismatch_at = -1;
  if(s->buf.kind != VERBS_MEM_HOST)
    return;
  for(int q = 0; q < s->nslots; q++) {
    const uint8_t *p = (const uint8_t *)s->buf.addr + (uint64_t)q * 2 * s->slot;
    for(uint64_t i = 0; i < size; i++)
      if(p[i] != side_pattern(peer_seed, q, i)) {
        o->mismatch_at = (int64_t)((uint64_t)q * 2 * s->slot + i);
        return;
      }
  }
  o->validated = 1;
}

void outcome_free(struct verbs_outcome *o)
{
  stats_free(&o->lat_us);
}
