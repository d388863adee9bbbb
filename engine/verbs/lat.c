/*
 * lat.c - latency ping-pong on QP 0, as perftest's ib_*_lat measure it:
 *   WRITE: each side RDMA-WRITEs size bytes into the other's receive slot
 *          and spins on the last byte of its own receive slot for the
 *          peer's answer; a sample is (post of ping i+1 - post of ping i)/2
 *          = half the round trip.
 *   SEND:  the same with SEND/RECV, waiting on the receive CQ.
 *   READ:  the initiator posts an RDMA READ and waits for its completion;
 *          a sample is the whole READ (not halved); the responder idles.
 * Samples in microseconds on CLOCK_MONOTONIC, kept whole (stats.h).
 */
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "strata.h"
#include "engine.h"

/*
 * The clock policy of the ping-pong's waits: the clock is read once every
 * SPIN_CLOCK_EVERY polls.  A poll of a cached byte is 0.3-3 ns (a poll of
 * rxe's CQ in user memory ~30-50 ns), a clock read 20-100 ns on a TSC
 * clocksource but ~1.1 us on the HPET a TCG guest falls back to
 * (measured, docs/verbs.md).  Reading it every 256 polls spent two thirds
 * of the spin in the clock there, and an answer landing meanwhile waited
 * for the read to end (perftest's ib_write_lat spins on the byte alone,
 * ib_send_lat on ibv_poll_cq alone).  4096 polls keep the clock under
 * 10 % of the spin even there and the deadline within ~0.2 ms.
 */
#define SPIN_CLOCK_EVERY 4096u

struct spin {
  uint64_t deadline, start;
  unsigned polls;
  struct ibv_cq *scq;    /* the send CQ, when sends are outstanding */
  int *outstanding;
};

/* With the clock: a send completion taken if one is there.  A WRITE or
 * SEND the requester gave up on (IBV_WC_RETRY_EXC_ERR: no ACK after
 * retry_cnt retransmissions) completes in error here; the answer it would
 * have caused never comes, so waiting on out to the timeout hides it. */
static enum verbs_code send_error(struct spin *w)
{
  struct ibv_wc wc;
  int n;
  if(!w->scq || !w->outstanding || *w->outstanding <= 0)
    return VERBS_OK;
  n = ibv_poll_cq(w->scq, 1, &wc);
  if(n < 0)
    return verbs_fail(VERBS_ESYS, "ibv_poll_cq: error %d", n);
  if(n == 0)
    return VERBS_OK;
  (*w->outstanding)--;
  return verbs_wc_check(&wc, "latency send");
}

/* One more poll seen empty: VERBS_OK to go on polling, or why to stop. */
static enum verbs_code spin_on(struct spin *w, uint64_t timeout_ns,
                               volatile int *stop, uint64_t iter)
{
  uint64_t now;
  enum verbs_code rc;
  if((++w->polls & (SPIN_CLOCK_EVERY - 1)) != 0)
    return VERBS_OK;
  rc = send_error(w);
  if(rc)
    return rc;
  now = strata_now_ns();
  if(!w->deadline) {
    w->deadline = now + timeout_ns;
    w->start = now;
  }
  else if(now > w->deadline)
    return verbs_fail(VERBS_ETIMEDOUT, "no answer to ping %llu within "
                      "%.1f s", (unsigned long long)iter,
                      (double)timeout_ns / 1e9);
  else if(now - w->start > VERBS_YIELD_NS)
    sched_yield();
  if(strata_stop_flag || (stop && *stop))
    return verbs_fail(VERBS_ESTOPPED, "stopped at ping %llu",
                      (unsigned long long)iter);
  return VERBS_OK;
}

/* WRITE: spin until *p == v (the peer's write landed). */
static enum verbs_code wait_byte(volatile uint8_t *p, uint8_t v,
                                 uint64_t timeout_ns, volatile int *stop,
                                 uint64_t iter, struct spin w)
{
  enum verbs_code rc = VERBS_OK;
  while(*p != v && !rc)
    rc = spin_on(&w, timeout_ns, stop, iter);
  return rc;
}

/* SEND: spin on the receive CQ until the peer's SEND completed there. */
static enum verbs_code wait_recv(struct ibv_cq *cq, uint64_t timeout_ns,
                                 volatile int *stop, uint64_t iter,
                                 struct spin w)
{
  struct ibv_wc wc;
  for(;;) {
    int n = ibv_poll_cq(cq, 1, &wc);
    enum verbs_code rc;
    if(n > 0)
      return verbs_wc_check(&wc, "RECV");
    if(n < 0)
      return verbs_fail(VERBS_ESYS, "ibv_poll_cq: error %d", n);
    rc = spin_on(&w, timeout_ns, stop, iter);
    if(rc)
      return rc;
  }
}

/* Reap send completions so the send queue never fills. */
static enum verbs_code reap_sends(struct verbs_side *s, int *outstanding,
                                  int keep, uint64_t timeout_ns)
{
  struct ibv_wc wc[16];
  while(*outstanding > keep) {
    int n = verbs_poll(s->scq, wc, 16, timeout_ns);
    if(n < 0)
      return (enum verbs_code)-n;
    for(int i = 0; i < n; i++) {
      enum verbs_code rc = verbs_wc_check(&wc[i], "latency send");
      if(rc)
        return rc;
    }
    *outstanding -= n;
  }
  return VERBS_OK;
}

static enum verbs_code lat_pingpong(struct verbs_side *s,
                                    const struct verbs_test *t,
                                    int initiator, volatile int *stop,
                                    struct verbs_outcome *o)
{
  uint8_t *base = (uint8_t *)s->buf.addr;
  volatile uint8_t *in = base + t->size - 1;
  uint8_t *out = base + s->slot + t->size - 1;
  uint64_t la = (uint64_t)(uintptr_t)(base + s->slot);
  uint64_t timeout_ns = (uint64_t)(t->timeout_s * 1e9);
  uint32_t len = (uint32_t)t->size;
  int inl = len <= s->max_inline, outstanding = 0, repost = 0;
  /* as perftest: every WRITE signaled (run_iter_lat_write), a SEND one
   * in cq_mod (run_iter_lat_send); the send queue holds cq_mod + 1 */
  int sig_every = t->op == VERBS_OP_SEND ? t->cq_mod : 1;
  uint64_t prev = 0;
  enum verbs_code rc;

  for(uint64_t i = 0; i <= t->iters; i++) {
    uint8_t seq = (uint8_t)(i % 255 + 1);
    int sig = (i + 1) % (uint64_t)sig_every == 0 || i + 1 == t->iters;
    if(!initiator && i == t->iters)
      break;
    if(!initiator || i > 0) {
      /* responder: wait for ping i; initiator: for the answer to i-1 */
      uint8_t want = initiator ? (uint8_t)((i - 1) % 255 + 1) : seq;
      struct spin w = { 0, 0, 0, s->scq, &outstanding };
      if(t->op == VERBS_OP_WRITE)
        rc = wait_byte(in, want, timeout_ns, stop, i, w);
      else {
        rc = wait_recv(s->rcq, timeout_ns, stop, i, w);
        repost = !rc;
      }
      if(rc)
        return rc;
    }
    if(initiator) {
      uint64_t now = strata_now_ns();
      if(i > 0 && stats_add(&o->lat_us, (double)(now - prev) / 2e3))
        return verbs_fail(VERBS_ENOMEM, "latency samples");
      prev = now;
      if(i == 0)
        o->t_first_ns = now;
      o->t_last_ns = now;
      if(i == t->iters)
        break;
    }
    *out = seq;
    if(t->op == VERBS_OP_WRITE)
      rc = verbs_post_write(s->qp[0], i, la, len, s->buf.mr->lkey, s->raddr,
                            s->rkey, sig, inl);
    else
      rc = verbs_post_send(s->qp[0], i, la, len, s->buf.mr->lkey, sig, inl);
    if(rc)
      return rc;
    /* the receive just used goes back after the answer is on its way:
     * off the round trip (the queue holds rx_depth; the peer's next SEND
     * comes a round trip later) */
    if(repost) {
      rc = verbs_post_recv(s->qp[0], 0, (uint64_t)(uintptr_t)base, len,
                           s->buf.mr->lkey);
      if(rc)
        return rc;
      repost = 0;
    }
    if(sig)
      outstanding++;
    rc = reap_sends(s, &outstanding, 1, timeout_ns);
    if(rc)
      return rc;
  }
  o->msgs = o->lat_us.n;
  return reap_sends(s, &outstanding, 0, timeout_ns);
}

static enum verbs_code lat_read(struct verbs_side *s,
                                const struct verbs_test *t,
                                struct verbs_outcome *o)
{
  uint64_t la = s->buf.kind == VERBS_MEM_HOST
                  ? (uint64_t)(uintptr_t)s->buf.addr : 0;
  uint64_t timeout_ns = (uint64_t)(t->timeout_s * 1e9);
  struct ibv_wc wc;

  o->t_first_ns = strata_now_ns();
  for(uint64_t i = 0; i < t->iters; i++) {
    uint64_t t0 = strata_now_ns(), t1;
    int n;
    enum verbs_code rc = verbs_post_read(s->qp[0], i, la, (uint32_t)t->size,
                                         s->buf.mr->lkey,
                                         s->raddr + s->slot, s->rkey, 1);
    if(rc)
      return rc;
    n = verbs_poll(s->scq, &wc, 1, timeout_ns);
    if(n < 0)
      return (enum verbs_code)-n;
    rc = verbs_wc_check(&wc, "RDMA READ");
    if(rc)
      return rc;
    t1 = strata_now_ns();
    if(stats_add(&o->lat_us, (double)(t1 - t0) / 1e3))
      return verbs_fail(VERBS_ENOMEM, "latency samples");
    o->t_last_ns = t1;
  }
  o->msgs = o->lat_us.n;
  return VERBS_OK;
}

enum verbs_code lat_loop(struct verbs_side *s, const struct verbs_test *t,
                         int initiator, volatile int *stop,
                         struct verbs_outcome *o)
{
  double cpu0 = thread_cpu_s();
  enum verbs_code rc;

  if(initiator && stats_init(&o->lat_us, (size_t)t->iters + 1))
    return verbs_fail(VERBS_ENOMEM, "latency samples (%llu)",
                      (unsigned long long)t->iters);
  if(t->op != VERBS_OP_READ && s->buf.kind != VERBS_MEM_HOST)
    return verbs_fail(VERBS_EUNSUPPORTED, "%s latency spins on host memory;"
                      " GPU memory cannot be polled by the CPU",
                      t->op == VERBS_OP_WRITE ? "WRITE" : "SEND");
  if(t->op == VERBS_OP_READ) {
    if(!initiator) {
      while(!*stop && !strata_stop_flag)
        usleep(1000);
      return VERBS_OK;
    }
    rc = lat_read(s, t, o);
  }
  else
    rc = lat_pingpong(s, t, initiator, stop, o);
  o->cpu_s = thread_cpu_s() - cpu0;
  return rc;
}
