/*
 * incast.c - verbs_incast (incast.h): bring N sender agents and their
 * receiving QPs to CONNECTED, start the senders together, gather their
 * outcomes, and put them on one clock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata.h"
#include "incast.h"

struct rx_end {                /* one sender's receiving end */
  struct verbs_side side;      /* local receiver */
  struct verbs_peer peer;      /* remote receiver: a session on its agent */
  struct verbs_endpoint ep;
  uint32_t qpn[VERBS_MAX_QPS], psn[VERBS_MAX_QPS];
};

struct tx_end {
  struct verbs_peer peer;
  struct verbs_endpoint ep;
  uint32_t qpn[VERBS_MAX_QPS], psn[VERBS_MAX_QPS];
  int64_t offset_ns;           /* agent clock - engine clock */
  uint64_t rtt_ns;
};

/* "sender <name>: <what the lower layer said>" (the lower text already
 * names host:port and the step). */
static enum verbs_code who_fail(enum verbs_code rc, const char *role,
                                const struct incast_peer *p)
{
  char low[700];
  snprintf(low, sizeof(low), "%s", verbs_errmsg());
  for(char *c = low; *c; c++)
    if(*c == '\x1f')
      *c = ' ';
  return verbs_fail(rc, "%s %s: %s", role, p->name ? p->name : p->host, low);
}

static enum verbs_code ctl_err(struct verbs_peer *p, const char *step)
{
  int e = errno;
  return verbs_fail(VERBS_EPEER, "peer %s:%d: %s: %s", p->host, p->port,
                    step, e == ETIMEDOUT ? "no reply (timed out)"
                    : e == ECONNRESET ? "connection closed by the peer"
                    : e == EPROTO ? "malformed reply" : strerror(e));
}

/* Read one reply and expect verb `want`; ERR becomes the agent's text. */
static enum verbs_code expect(struct verbs_peer *p, const char *step,
                              const char *want, struct ctl_msg *m,
                              int timeout_ms)
{
  if(ctl_recv(&p->conn, m, timeout_ms))
    return ctl_err(p, step);
  if(!strcmp(m->verb, "ERR")) {
    const char *text = ctl_get(m, "msg");
    return verbs_fail(VERBS_EPEER, "peer %s:%d: %s: refused (%s): %s",
                      p->host, p->port, step, m->n > 0 ? m->val[0] : "?",
                      text ? text : "(no reason)");
  }
  if(strcmp(m->verb, want))
    return verbs_fail(VERBS_EPEER, "peer %s:%d: %s: unexpected reply "
                      "'%s'", p->host, p->port, step, m->verb);
  return VERBS_OK;
}

/* Best of 5 PING round trips: the agent's clock offset. */
static enum verbs_code clock_sync(struct tx_end *x)
{
  struct verbs_peer *p = &x->peer;
  x->rtt_ns = UINT64_MAX;
  for(int i = 0; i < 5; i++) {
    struct ctl_msg m;
    uint64_t t0 = strata_now_ns(), t1, now;
    enum verbs_code rc;
    if(ctl_send(p->conn.fd, p->timeout_ms, "PING"))
      return ctl_err(p, "PING");
    rc = expect(p, "PING", "PONG", &m, p->timeout_ms);
    if(rc)
      return rc;
    t1 = strata_now_ns();
    if(ctl_get_u64(&m, "now", &now))
      return verbs_fail(VERBS_EPEER, "peer %s:%d: PING: the agent sends "
                        "no clock (an older strata serve)", p->host,
                        p->port);
    if(t1 - t0 < x->rtt_ns) {
      x->rtt_ns = t1 - t0;
      x->offset_ns = (int64_t)now - (int64_t)(t0 + (t1 - t0) / 2);
    }
  }
  return VERBS_OK;
}

/* CONNECT p to an endpoint that is not ours (brokered). */
static enum verbs_code connect_to(struct verbs_peer *p, const char *dev,
                                  const struct verbs_endpoint *ep,
                                  const uint32_t *qpn, const uint32_t *psn,
                                  int n)
{
  char line[CTL_LINE - 64], gid[33];
  size_t off;
  struct ctl_msg m;
  int w;

  verbs_gid_hex(&ep->gid, gid);
  w = snprintf(line, sizeof(line), "CONNECT dev=%s gid=%s mtu=%d lid=%u "
               "port=%u addr=0x%llx rkey=0x%x len=%llu qpn=", dev, gid,
               (int)ep->mtu, ep->lid, ep->port,
               (unsigned long long)ep->addr, ep->rkey,
               (unsigned long long)ep->len);
  off = (size_t)w;
  for(int k = 0; k < 2; k++) {
    const uint32_t *v = k ? psn : qpn;
    if(k)
      off += (size_t)snprintf(line + off, sizeof(line) - off, " psn=");
    for(int i = 0; i < n && off < sizeof(line); i++)
      off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%u",
                              i ? "," : "", v[i]);
  }
  if(off >= sizeof(line))
    return verbs_fail(VERBS_EINVAL, "CONNECT too long");
  if(ctl_send(p->conn.fd, p->timeout_ms, "%s", line))
    return ctl_err(p, "CONNECT");
  return expect(p, "CONNECT", "CONNECTED", &m, p->timeout_ms);
}

static void local_ep(const struct verbs_side *s, struct rx_end *x)
{
  side_endpoint(s, &x->ep);
  for(int i = 0; i < s->nqp; i++) {
    x->qpn[i] = s->qp[i]->qp_num;
    x->psn[i] = s->psn[i];
  }
}

static int remaining_ms(uint64_t deadline)
{
  uint64_t now = strata_now_ns();
  return now >= deadline ? 1 : (int)((deadline - now) / 1000000) + 1;
}

static void summarize(const struct incast_opts *o, struct tx_end *tx,
                      struct incast_result *r)
{
  int64_t lo = INT64_MAX, hi = INT64_MIN, flo = INT64_MAX, fhi = INT64_MIN;
  int counted = 0;

  r->min_gbps = r->max_gbps = 0;
  for(int i = 0; i < o->nsenders; i++) {
    struct incast_sender *s = &r->s[i];
    double d = (double)(s->t_last_ns - s->t_first_ns) / 1e9;
    s->clock_err_us = (double)tx[i].rtt_ns / 2e3;
    if(s->clock_err_us > r->clock_err_us)
      r->clock_err_us = s->clock_err_us;
    s->gbps = d > 0 ? (double)s->bytes * 8 / d / 1e9 : 0;
    if(s->error[0])
      continue;
    r->bytes += s->bytes;
    if(s->t_first_ns < lo)
      lo = s->t_first_ns;
    if(s->t_last_ns > hi)
      hi = s->t_last_ns;
    if(s->t_first_ns < flo)
      flo = s->t_first_ns;
    if(s->t_first_ns > fhi)
      fhi = s->t_first_ns;
    if(!counted || s->gbps < r->min_gbps)
      r->min_gbps = s->gbps;
    if(!counted || s->gbps > r->max_gbps)
      r->max_gbps = s->gbps;
    counted++;
  }
  if(!counted)
    return;
  r->window_s = (double)(hi - lo) / 1e9;
  r->start_skew_ms = (double)(fhi - flo) / 1e6;
  if(r->window_s > 0)
    r->gbps = (double)r->bytes * 8 / r->window_s / 1e9;
  r->fairness = r->max_gbps > 0 ? r->min_gbps / r->max_gbps : 0;
}

static enum verbs_code setup_all(const struct incast_opts *o,
                                 struct tx_end *tx, struct rx_end *rx,
                                 struct incast_result *r)
{
  struct verbs_test ta = o->t, tr = o->t;
  enum verbs_code rc;

  ta.active = 1;
  tr.active = 0;
  for(int i = 0; i < o->nsenders; i++) {
    const struct incast_peer *sp = &o->senders[i];
    rc = peer_open(&tx[i].peer, sp->host, sp->port, sp->token,
                   sp->timeout_s > 0 ? sp->timeout_s : o->ctl_timeout_s);
    if(!rc)
      rc = clock_sync(&tx[i]);
    if(!rc)
      rc = peer_setup(&tx[i].peer, &ta, sp->device, sp->ib_port,
                      sp->gid_index, &tx[i].ep, tx[i].qpn, tx[i].psn);
    if(rc)
      return who_fail(rc, "sender", sp);
    snprintf(r->s[i].agent, sizeof(r->s[i].agent), "%s", tx[i].peer.agent);
    snprintf(r->s[i].device, sizeof(r->s[i].device), "%s", tx[i].peer.dev);
    if(o->remote_receiver) {
      const struct incast_peer *rp = &o->receiver;
      rc = peer_open(&rx[i].peer, rp->host, rp->port, rp->token,
                     rp->timeout_s > 0 ? rp->timeout_s : o->ctl_timeout_s);
      if(!rc)
        rc = peer_setup(&rx[i].peer, &tr, rp->device, rp->ib_port,
                        rp->gid_index, &rx[i].ep, rx[i].qpn, rx[i].psn);
      if(rc)
        return who_fail(rc, "receiver", rp);
      snprintf(r->rx_device, sizeof(r->rx_device), "%s", rx[i].peer.dev);
    }
    else {
      rc = side_open(&rx[i].side, &tr, o->device, o->port, o->gid_index,
                     2);
      if(rc)
        return rc;
      local_ep(&rx[i].side, &rx[i]);
      snprintf(r->rx_device, sizeof(r->rx_device), "%s",
               rx[i].side.dev.name);
      r->mtu_bytes = verbs_mtu_bytes(rx[i].side.dev.mtu);
    }
    /* broker: each end gets the other's endpoint */
    if(o->remote_receiver)
      rc = connect_to(&rx[i].peer, tx[i].peer.dev, &tx[i].ep, tx[i].qpn,
                      tx[i].psn, o->t.qps);
    else
      rc = side_connect(&rx[i].side, &tx[i].ep, tx[i].qpn, tx[i].psn);
    if(rc)
      return o->remote_receiver ? who_fail(rc, "receiver", &o->receiver)
                                : who_fail(rc, "receiver for sender", sp);
    rc = connect_to(&tx[i].peer, r->rx_device, &rx[i].ep, rx[i].qpn,
                    rx[i].psn, o->t.qps);
    if(rc)
      return who_fail(rc, "sender", sp);
  }
  return VERBS_OK;
}

static enum verbs_code go_all(const struct incast_opts *o, struct tx_end *tx,
                              struct rx_end *rx)
{
  struct ctl_msg m;
  enum verbs_code rc;

  for(int i = 0; o->remote_receiver && i < o->nsenders; i++) {
    rc = peer_go(&rx[i].peer);
    if(rc)
      return who_fail(rc, "receiver", &o->receiver);
  }
  /* every GO leaves before any RUNNING is read: the senders start within
   * one pass over the sockets */
  for(int i = 0; i < o->nsenders; i++)
    if(ctl_send(tx[i].peer.conn.fd, tx[i].peer.timeout_ms, "GO"))
      return who_fail(ctl_err(&tx[i].peer, "GO"), "sender", &o->senders[i]);
  for(int i = 0; i < o->nsenders; i++) {
    rc = expect(&tx[i].peer, "GO", "RUNNING", &m, tx[i].peer.timeout_ms);
    if(rc)
      return who_fail(rc, "sender", &o->senders[i]);
  }
  return VERBS_OK;
}

static enum verbs_code done_all(const struct incast_opts *o,
                                struct tx_end *tx, struct rx_end *rx,
                                struct incast_result *r, uint64_t deadline)
{
  enum verbs_code rc;

  for(int i = 0; i < o->nsenders; i++) {
    struct incast_sender *s = &r->s[i];
    struct verbs_outcome out;
    tx[i].peer.timeout_ms = remaining_ms(deadline);
    rc = peer_done(&tx[i].peer, &out);
    tx[i].peer.timeout_ms = 2000;     /* BYE only from here */
    if(rc)
      return who_fail(rc, "sender", &o->senders[i]);
    s->bytes = out.bytes;
    s->msgs = out.msgs;
    s->cpu_s = out.cpu_s;
    s->t_first_ns = (int64_t)out.t_first_ns - tx[i].offset_ns;
    s->t_last_ns = (int64_t)out.t_last_ns - tx[i].offset_ns;
    s->mismatch_at = -1;
    if(tx[i].peer.remote_error[0]) {
      snprintf(s->error, sizeof(s->error), "%s", tx[i].peer.remote_error);
      for(char *c = s->error; *c; c++)
        if(*c == '\x1f')
          *c = ' ';
      r->errors++;
    }
  }
  for(int i = 0; i < o->nsenders; i++) {
    struct incast_sender *s = &r->s[i];
    struct verbs_outcome out;
    memset(&out, 0, sizeof(out));
    out.mismatch_at = -1;
    if(o->remote_receiver) {
      rc = peer_done(&rx[i].peer, &out);
      if(rc)
        return who_fail(rc, "receiver", &o->receiver);
    }
    else if(o->t.validate && !s->error[0])
      side_check(&rx[i].side, o->t.size, 1, &out);
    s->validated = out.validated;
    s->mismatch_at = out.mismatch_at;
  }
  return VERBS_OK;
}

enum verbs_code verbs_incast(const struct incast_opts *o,
                             struct incast_result *r)
{
  struct tx_end *tx;
  struct rx_end *rx;
  enum verbs_code rc;
  uint64_t deadline;

  memset(r, 0, sizeof(*r));
  if(o->nsenders < 1 || o->nsenders > INCAST_MAX_SENDERS)
    return verbs_fail(VERBS_EINVAL, "senders: 1 .. %d, got %d",
                      INCAST_MAX_SENDERS, o->nsenders);
  if(o->t.op != VERBS_OP_WRITE || o->t.kind != VERBS_KIND_BW)
    return verbs_fail(VERBS_EINVAL, "incast measures RDMA WRITE bandwidth");
  tx = calloc((size_t)o->nsenders, sizeof(*tx));
  rx = calloc((size_t)o->nsenders, sizeof(*rx));
  if(!tx || !rx) {
    free(tx);
    free(rx);
    return verbs_fail(VERBS_ENOMEM, "incast: out of memory");
  }
  r->nsenders = o->nsenders;
  for(int i = 0; i < o->nsenders; i++) {
    tx[i].peer.conn.fd = -1;
    rx[i].peer.conn.fd = -1;
    r->s[i].mismatch_at = -1;
  }
  rc = setup_all(o, tx, rx, r);
  if(rc)
    goto out;
  if(!o->remote_receiver)
    (void)verbs_counters_read(rx[0].side.dev.name, rx[0].side.dev.port,
                              &r->c0);
  deadline = strata_now_ns() + (uint64_t)(o->deadline_s * 1e9);
  rc = go_all(o, tx, rx);
  if(!rc)
    rc = done_all(o, tx, rx, r, deadline);
  if(!o->remote_receiver)
    (void)verbs_counters_read(rx[0].side.dev.name, rx[0].side.dev.port,
                              &r->c1);
  if(!rc)
    summarize(o, tx, r);
out:
  for(int i = 0; i < o->nsenders; i++) {
    peer_close(&tx[i].peer);
    peer_close(&rx[i].peer);
    side_close(&rx[i].side);
  }
  free(tx);
  free(rx);
  return rc;
}

void verbs_incast_free(struct incast_result *r)
{
  verbs_counters_free(&r->c0);
  verbs_counters_free(&r->c1);
}
