/*
 * bw.c - the bandwidth loop: keep tx_depth RDMA WRITEs, READs or SENDs in
 * flight on every QP, signal one in cq_mod, count completions.  Measured
 * as perftest does: bytes completed / (last completion - first post), on
 * CLOCK_MONOTONIC.  Peak: the highest rate over any tenth of the run's
 * completion events.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata.h"
#include "engine.h"

/* Completion events (time, bytes so far) kept whole: the peak rate is
 * the best over any window of a tenth of the events (at least one). */
struct peak {
  uint64_t *t;
  uint64_t *bytes;
  size_t n, cap;
};

static void peak_add(struct peak *p, uint64_t t, uint64_t bytes)
{
  if(p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 1024;
    uint64_t *nt = realloc(p->t, cap * sizeof(*nt));
    uint64_t *nb = nt ? realloc(p->bytes, cap * sizeof(*nb)) : NULL;
    if(nt)
      p->t = nt;
    if(!nb)
      return;            /* keep what we have: peak over fewer events */
    p->bytes = nb;
    p->cap = cap;
  }
  p->t[p->n] = t;
  p->bytes[p->n] = bytes;
  p->n++;
}

static double peak_gbps(struct peak *p)
{
  size_t w;
  double best = 0;
  w = p->n > 1 ? (p->n - 1) / 10 : 0;
  if(w < 1)
    w = 1;
  for(size_t i = w; w && i < p->n; i++) {
    uint64_t dt = p->t[i] - p->t[i - w];
    if(dt > 0) {
      double g = (double)(p->bytes[i] - p->bytes[i - w]) * 8 / (double)dt;
      if(g > best)
        best = g;
    }
  }
  free(p->t);
  free(p->bytes);
  p->t = p->bytes = NULL;
  return best;
}

int verbs_default_cq_mod(uint64_t size, int qps)
{
  uint64_t per = size * (uint64_t)(qps < 1 ? 1 : qps);
  uint64_t n = per ? 4194304 / per : 100;
  return n < 1 ? 1 : n > 100 ? 100 : (int)n;
}

/* Local address of QP q's slot (recv = 0, send = 1). */
static uint64_t laddr(const struct verbs_side *s, int q, int which)
{
  uint64_t base = s->buf.kind == VERBS_MEM_HOST
                    ? (uint64_t)(uintptr_t)s->buf.addr : 0;
  return base + (uint64_t)(q % s->nslots) * 2 * s->slot +
         (which ? s->slot : 0);
}

enum verbs_code bw_prepost(struct verbs_side *s, const struct verbs_test *t)
{
  for(int q = 0; q < s->nqp; q++) {
    uint64_t a = laddr(s, q, 0);
    for(int i = 0; i < t->rx_depth; i++) {
      enum verbs_code rc = verbs_post_recv(s->qp[q], (uint64_t)q, a,
                                           (uint32_t)t->size,
                                           s->buf.mr->lkey);
      if(rc)
        return rc;
    }
  }
  return VERBS_OK;
}

static enum verbs_code post_one(struct verbs_side *s,
                                const struct verbs_test *t, int q,
                                uint64_t wr_id, int signaled)
{
  uint32_t len = (uint32_t)t->size;
  uint32_t lkey = s->buf.mr->lkey;
  uint64_t rslot = s->raddr + (uint64_t)(q % s->nslots) * 2 * s->slot;
  int inl = len <= s->max_inline;

  switch(t->op) {
  case VERBS_OP_WRITE:
    return verbs_post_write(s->qp[q], wr_id, laddr(s, q, 1), len, lkey,
                            rslot, s->rkey, signaled, inl);
  case VERBS_OP_READ:
    return verbs_post_read(s->qp[q], wr_id, laddr(s, q, 0), len, lkey,
                           rslot + s->slot, s->rkey, signaled);
  case VERBS_OP_SEND:
    return verbs_post_send(s->qp[q], wr_id, laddr(s, q, 1), len, lkey,
                           signaled, inl);
  }
  return verbs_fail(VERBS_EINVAL, "unknown operation");
}

/* What the loop keeps between passes: per QP the work requests posted,
 * the completions seen (a signaled completion counts the unsignaled ones
 * before it) and the ones posted since the last signaled one. */
struct bw_state {
  uint64_t posted[VERBS_MAX_QPS], done[VERBS_MAX_QPS];
  uint64_t since_sig[VERBS_MAX_QPS];
  uint64_t target;             /* per QP; 0 = by duration */
  uint64_t last_progress;
  int cq_mod;
  int posting;
};

/* Fill every QP's send queue up to tx_depth (and the target). */
static enum verbs_code post_more(struct verbs_side *s,
                                 const struct verbs_test *t,
                                 struct bw_state *b, int *busy)
{
  int more = 0;
  for(int q = 0; q < s->nqp; q++) {
    while(b->posted[q] - b->done[q] < (uint64_t)t->tx_depth &&
          (!b->target || b->posted[q] < b->target)) {
      int sig;
      enum verbs_code rc;
      b->since_sig[q]++;
      sig = b->since_sig[q] >= (uint64_t)b->cq_mod ||
            (b->target && b->posted[q] + 1 == b->target);
      rc = post_one(s, t, q, (b->since_sig[q] << 16) | (uint64_t)q, sig);
      if(rc)
        return rc;
      if(sig)
        b->since_sig[q] = 0;
      b->posted[q]++;
      *busy = 1;
    }
    if(!b->target || b->posted[q] < b->target)
      more = 1;
  }
  if(!more)
    b->posting = 0;
  return VERBS_OK;
}

/* The send completions there are now, counted and timed. */
static enum verbs_code poll_send(struct verbs_side *s,
                                 const struct verbs_test *t,
                                 struct bw_state *b, struct verbs_outcome *o,
                                 struct peak *pk, int *busy)
{
  struct ibv_wc wc[32];
  uint64_t now;
  int n = ibv_poll_cq(s->scq, 32, wc);
  if(n < 0)
    return verbs_fail(VERBS_ESYS, "ibv_poll_cq (send): %d", n);
  if(n == 0)
    return VERBS_OK;
  now = strata_now_ns();
  for(int i = 0; i < n; i++) {
    int q = (int)(wc[i].wr_id & 0xffff);
    uint64_t cnt = wc[i].wr_id >> 16;
    enum verbs_code rc =
      verbs_wc_check(&wc[i], t->op == VERBS_OP_READ ? "RDMA READ"
                     : t->op == VERBS_OP_WRITE ? "RDMA WRITE"
                     : "SEND");
    if(rc)
      return rc;
    b->done[q] += cnt;
    o->msgs += cnt;
  }
  o->t_last_ns = now;
  b->last_progress = now;
  peak_add(pk, now, o->msgs * t->size);
  *busy = 1;
  return VERBS_OK;
}

/* The receive completions there are now, each buffer posted again. */
static enum verbs_code poll_recv(struct verbs_side *s,
                                 const struct verbs_test *t,
                                 struct bw_state *b, struct verbs_outcome *o,
                                 int *busy)
{
  struct ibv_wc wc[32];
  int n = ibv_poll_cq(s->rcq, 32, wc);
  if(n < 0)
    return verbs_fail(VERBS_ESYS, "ibv_poll_cq (recv): %d", n);
  for(int i = 0; i < n; i++) {
    int q = (int)wc[i].wr_id;
    enum verbs_code rc = verbs_wc_check(&wc[i], "RECV");
    if(rc)
      return rc;
    o->recvs++;
    rc = verbs_post_recv(s->qp[q], (uint64_t)q, laddr(s, q, 0),
                         (uint32_t)t->size, s->buf.mr->lkey);
    if(rc)
      return rc;
  }
  if(n > 0) {
    b->last_progress = strata_now_ns();
    *busy = 1;
  }
  return VERBS_OK;
}

/* Every send completed and every receive in (or, by duration, the stop). */
static int finished(const struct verbs_side *s, const struct bw_state *b,
                    const struct verbs_outcome *o, uint64_t expect_recv,
                    int send, int recv, volatile int *stop)
{
  int send_done = 1, recv_done = 1;
  if(send) {
    if(b->posting)
      send_done = 0;
    else
      for(int q = 0; q < s->nqp; q++)
        if(b->done[q] + b->since_sig[q] < b->posted[q]) {
          send_done = 0;
          break;
        }
  }
  /* by count when there is one (a stop may come before the last
   * receive completions are polled), else by the stop */
  if(recv)
    recv_done = b->target ? o->recvs >= expect_recv : *stop;
  if(send_done && recv_done)
    return 1;
  return !send && !recv && *stop;
}

static enum verbs_code no_completion(const struct verbs_side *s,
                                     const struct verbs_test *t,
                                     const struct bw_state *b,
                                     const struct verbs_outcome *o)
{
  uint64_t p = 0, d = 0;
  for(int q = 0; q < s->nqp; q++) {
    p += b->posted[q];
    d += b->done[q];
  }
  return verbs_fail(VERBS_ETIMEDOUT, "no completion for %.1f s "
                    "(posted %llu, completed %llu, received %llu)",
                    t->timeout_s, (unsigned long long)p,
                    (unsigned long long)d, (unsigned long long)o->recvs);
}

static enum verbs_code loop(struct verbs_side *s, const struct verbs_test *t,
                            int send, int recv, volatile int *stop,
                            struct verbs_outcome *o, struct peak *pk)
{
  struct bw_state b;
  uint64_t expect_recv = t->iters * (uint64_t)s->nqp;
  uint64_t timeout_ns = (uint64_t)(t->timeout_s * 1e9);
  uint64_t now, deadline = 0;
  unsigned spins = 0;
  double cpu0 = thread_cpu_s();
  enum verbs_code rc = VERBS_OK;

  memset(&b, 0, sizeof(b));
  b.target = t->iters;
  b.cq_mod = t->cq_mod < 1 ? 1 : t->cq_mod;
  b.posting = send;
  if(b.cq_mod > t->tx_depth)
    b.cq_mod = t->tx_depth;
  now = strata_now_ns();
  o->t_first_ns = now;
  o->t_last_ns = now;
  b.last_progress = now;
  if(!b.target)
    deadline = now + (uint64_t)(t->duration_s * 1e9);
  if(!send && !recv) {
    /* passive far end of WRITE/READ: nothing to poll; do not take a CPU
     * from the NIC (software RoCE runs on the same cores) */
    while(!*stop && !strata_stop_flag)
      usleep(1000);
    o->cpu_s = thread_cpu_s() - cpu0;
    return VERBS_OK;
  }
  if(send)
    peak_add(pk, now, 0);

  for(;;) {
    int busy = 0;
    if(b.posting && (rc = post_more(s, t, &b, &busy)))
      return rc;
    if(send && (rc = poll_send(s, t, &b, o, pk, &busy)))
      return rc;
    if(recv && (rc = poll_recv(s, t, &b, o, &busy)))
      return rc;
    if(finished(s, &b, o, expect_recv, send, recv, stop))
      break;
    /* the clock every 64 passes, busy or idle: an idle pass is one
     * ibv_poll_cq, and a clock read can cost ten of them (~1.1 us on a
     * TCG guest's HPET); completions above are timed when they come */
    if(++spins & 63)
      continue;
    now = strata_now_ns();
    if(!busy && now - b.last_progress > VERBS_YIELD_NS)
      sched_yield();
    if(b.posting && deadline && now >= deadline)
      b.posting = 0;
    if(strata_stop_flag)
      return verbs_fail(VERBS_ESTOPPED, "interrupted");
    /* told to stop while receives are missing: the sender is done or
     * gone; give stragglers a second, then end with what arrived */
    if(recv && !send && *stop && now - b.last_progress > 1000000000ull)
      break;
    if(timeout_ns && now - b.last_progress > timeout_ns &&
       (send || (recv && b.target)))
      return no_completion(s, t, &b, o);
  }
  o->bytes = o->msgs * t->size;
  o->cpu_s = thread_cpu_s() - cpu0;
  return VERBS_OK;
}

enum verbs_code bw_loop(struct verbs_side *s, const struct verbs_test *t,
                        int send, int recv, volatile int *stop,
                        struct verbs_outcome *o)
{
  struct peak pk;
  enum verbs_code rc;
  memset(&pk, 0, sizeof(pk));
  rc = loop(s, t, send, recv, stop, o, &pk);
  o->peak_gbps = peak_gbps(&pk);
  return rc;
}
