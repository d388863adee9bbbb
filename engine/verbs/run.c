/*
 * run.c - one measurement from start to finish: two sides on one device
 * (loopback, the far end in a second thread) or this side against a
 * `strata serve` agent; counters read around the run; data checked.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "strata.h"
#include "run.h"

struct far {
  struct verbs_side *s;
  const struct verbs_test *t;
  volatile int stop;
  struct verbs_outcome o;
  enum verbs_code rc;
  char err[512];
};

static void *far_thread(void *arg)
{
  struct far *f = arg;
  if(f->t->kind == VERBS_KIND_LAT)
    f->rc = lat_loop(f->s, f->t, 0, &f->stop, &f->o);
  else
    f->rc = bw_loop(f->s, f->t, f->t->bidir, f->t->op == VERBS_OP_SEND,
                    &f->stop, &f->o);
  if(f->rc)
    snprintf(f->err, sizeof(f->err), "%s", verbs_errmsg());
  return NULL;
}

static enum verbs_code local_loop(struct verbs_side *a,
                                  const struct verbs_test *t,
                                  struct verbs_outcome *o)
{
  static volatile int never;
  if(t->kind == VERBS_KIND_LAT)
    return lat_loop(a, t, 1, &never, o);
  return bw_loop(a, t, 1, t->bidir && t->op == VERBS_OP_SEND, &never, o);
}

/*
 * ACK timeouts the port counted between c0 and c1: rxe's
 * completer_retry_err, mlx5's local_ack_timeout_err (docs/provenance.md).
 * A failed run with retransmissions on a software wire is most often a
 * requester whose ACK timeout is shorter than its packets in flight take
 * to cross the wire: it resends its whole window (go-back-N) over and
 * over, and rxe then also fails some completions (REM_INV_REQ_ERR,
 * REM_OP_ERR) on the resent messages (docs/verbs.md, "ACK timeout").
 */
static uint64_t ack_timeouts(const struct verbs_counters *c0,
                             const struct verbs_counters *c1)
{
  static const char *const names[] = { "completer_retry_err",
                                       "local_ack_timeout_err" };
  uint64_t sum = 0;
  for(size_t i = 0; i < c1->n; i++)
    for(size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
      if(!strcmp(c1->name[i], names[k]))
        for(size_t j = 0; j < c0->n; j++)
          if(!strcmp(c0->name[j], names[k]) && c1->value[i] > c0->value[j])
            sum += c1->value[i] - c0->value[j];
  return sum;
}

/* On failure: say how often the port's ACKs timed out meanwhile. */
static enum verbs_code add_retry_hint(enum verbs_code rc,
                                      const struct verbs_run_result *r)
{
  uint64_t n;
  char mine[700];
  if(!rc)
    return rc;
  n = ack_timeouts(&r->c0, &r->c1);
  if(!n)
    return rc;
  snprintf(mine, sizeof(mine), "%s", verbs_errmsg());
  /* nothing completed: not a slow wire but one that never answered */
  if(!r->a.bytes && !r->a.lat_us.n)
    return verbs_fail(rc, "%s; not one packet acknowledged: %s port %d timed "
                      "out waiting for an ACK %llu times (qp_timeout %d = "
                      "%.3f s)", mine, r->device, r->port,
                      (unsigned long long)n, r->qp_timeout,
                      r->qp_timeout >= 0 ? 4.096e-6 * (double)(1ull << r->qp_timeout)
                                         : 0.0);
  return verbs_fail(rc, "%s; meanwhile %s port %d timed out waiting for "
                    "an ACK %llu times (qp_timeout %d = %.3f s): a wire "
                    "slower than the QPs' packets in flight needs a longer "
                    "qp_timeout (site.rdma.qp_timeout)", mine, r->device,
                    r->port, (unsigned long long)n, r->qp_timeout,
                    r->qp_timeout >= 0 ? 4.096e-6 * (double)(1ull << r->qp_timeout)
                                       : 0.0);
}

static void summarize(const struct verbs_test *t, struct verbs_run_result *r)
{
  const struct verbs_outcome *a = &r->a;
  double dur = (double)(a->t_last_ns - a->t_first_ns) / 1e9;
  r->duration_s = dur;
  if(dur > 0) {
    r->gbps = (double)a->bytes * 8 / dur / 1e9;
    r->mpps = (double)a->msgs / dur / 1e6;
    r->cpu_pct = a->cpu_s / dur * 100;
  }
  r->peak_gbps = a->peak_gbps;
  if(t->bidir && t->kind == VERBS_KIND_BW) {
    double db = (double)(r->b.t_last_ns - r->b.t_first_ns) / 1e9;
    if(db > 0) {
      r->gbps_peer = (double)r->b.bytes * 8 / db / 1e9;
      r->gbps += r->gbps_peer;
      r->mpps += (double)r->b.msgs / db / 1e6;
    }
  }
  if(dur > 0)
    r->peer_cpu_pct = r->b.cpu_s / dur * 100;
}

/* Check data where it landed; local_side_seed: the seed the far end used. */
static void check_data(const struct verbs_test *t, struct verbs_side *a,
                       struct verbs_side *b, struct verbs_run_result *r)
{
  struct verbs_outcome tmp;
  r->validated = 0;
  r->mismatch_at = -1;
  if(!t->validate || t->kind != VERBS_KIND_BW)
    return;
  memset(&tmp, 0, sizeof(tmp));
  if(t->op == VERBS_OP_READ || t->bidir) {
    side_check(a, t->size, 2, &tmp);     /* a received b's pattern */
    if(tmp.mismatch_at >= 0) {
      r->mismatch_at = tmp.mismatch_at;
      snprintf(r->mismatch_where, sizeof(r->mismatch_where), "local");
      return;
    }
    r->validated = tmp.validated;
  }
  if(t->op != VERBS_OP_READ) {
    if(b) {
      side_check(b, t->size, 1, &tmp);
      r->b.validated = tmp.validated;
      r->b.mismatch_at = tmp.mismatch_at;
    }
    if(r->b.mismatch_at >= 0) {
      r->mismatch_at = r->b.mismatch_at;
      r->validated = 0;
      snprintf(r->mismatch_where, sizeof(r->mismatch_where), "peer");
      return;
    }
    r->validated = r->b.validated;
  }
}

static enum verbs_code prepare(struct verbs_side *s,
                               const struct verbs_test *t)
{
  if(t->validate)
    side_fill(s, t->size);
  if(t->op == VERBS_OP_SEND)
    return bw_prepost(s, t);
  return VERBS_OK;
}

static void fill_info(const struct verbs_side *a, struct verbs_run_result *r)
{
  snprintf(r->device, sizeof(r->device), "%s", a->dev.name);
  r->gid_index = a->dev.gid_index;
  r->mtu_bytes = verbs_mtu_bytes(a->dev.mtu);
  r->port = a->dev.port;
  r->max_inline = a->max_inline;
}

static enum verbs_code run_loopback(const struct verbs_run_opts *o,
                                    struct verbs_run_result *r)
{
  const struct verbs_test *t = &o->t;
  struct verbs_side a, b;
  struct verbs_endpoint ea, eb;
  uint32_t qa[VERBS_MAX_QPS], qb[VERBS_MAX_QPS];
  struct far f;
  pthread_t th;
  int threaded;
  enum verbs_code rc;

  memset(&b, 0, sizeof(b));
  rc = side_open(&a, t, o->device, o->port, o->gid_index, 1);
  if(rc)
    return rc;
  fill_info(&a, r);
  {
    struct verbs_test tb = *t;   /* the far end always uses host memory */
    tb.mem = VERBS_MEM_HOST;
    tb.dmabuf_fd = -1;
    rc = side_open(&b, &tb, o->device, o->port, o->gid_index, 2);
  }
  if(rc)
    goto out;
  side_endpoint(&a, &ea);
  side_endpoint(&b, &eb);
  for(int i = 0; i < t->qps; i++) {
    qa[i] = a.qp[i]->qp_num;
    qb[i] = b.qp[i]->qp_num;
  }
  rc = side_connect(&a, &eb, qb, b.psn);
  if(!rc)
    rc = side_connect(&b, &ea, qa, a.psn);
  r->qp_timeout = side_qp_timeout(&a);
  if(!rc)
    rc = prepare(&a, t);
  if(!rc)
    rc = prepare(&b, t);
  if(rc)
    goto out;
  (void)verbs_counters_read(a.dev.name, a.dev.port, &r->c0);
  memset(&f, 0, sizeof(f));
  f.s = &b;
  f.t = t;
  threaded = t->kind == VERBS_KIND_LAT || t->bidir ||
             t->op == VERBS_OP_SEND;
  if(threaded && pthread_create(&th, NULL, far_thread, &f)) {
    rc = verbs_fail(VERBS_ESYS, "cannot start the far-end thread");
    goto out;
  }
  rc = local_loop(&a, t, &r->a);
  f.stop = 1;
  if(threaded)
    pthread_join(th, NULL);
  (void)verbs_counters_read(a.dev.name, a.dev.port, &r->c1);
  r->b = f.o;
  memset(&f.o, 0, sizeof(f.o));
  if(!rc && f.rc)
    rc = verbs_fail(f.rc, "far end: %s", f.err);
  rc = add_retry_hint(rc, r);
  if(!rc) {
    check_data(t, &a, &b, r);
    summarize(t, r);
  }
out:
  side_close(&b);
  side_close(&a);
  return rc;
}

static enum verbs_code run_remote(const struct verbs_run_opts *o,
                                  struct verbs_run_result *r)
{
  const struct verbs_test *t = &o->t;
  struct verbs_peer p;
  struct verbs_side a;
  struct verbs_endpoint ep;
  uint32_t qpn[VERBS_MAX_QPS], psn[VERBS_MAX_QPS];
  enum verbs_code rc, rc2;

  memset(&a, 0, sizeof(a));
  rc = peer_open(&p, o->peer_host, o->peer_port, o->peer_token,
                 o->ctl_timeout_s);
  snprintf(r->peer, sizeof(r->peer), "%s:%d", o->peer_host, o->peer_port);
  if(rc)
    goto out;
  snprintf(r->peer_agent, sizeof(r->peer_agent), "%s", p.agent);
  rc = peer_setup(&p, t, o->peer_device, o->peer_port_num,
                  o->peer_gid_index, &ep, qpn, psn);
  if(rc)
    goto out;
  snprintf(r->peer_device, sizeof(r->peer_device), "%s", p.dev);
  rc = side_open(&a, t, o->device, o->port, o->gid_index, 1);
  if(rc)
    goto out;
  fill_info(&a, r);
  rc = side_connect(&a, &ep, qpn, psn);
  r->qp_timeout = side_qp_timeout(&a);
  if(!rc)
    rc = peer_connect(&p, &a);
  if(!rc)
    rc = prepare(&a, t);
  if(!rc)
    rc = peer_go(&p);
  if(rc)
    goto out;
  (void)verbs_counters_read(a.dev.name, a.dev.port, &r->c0);
  rc = local_loop(&a, t, &r->a);
  (void)verbs_counters_read(a.dev.name, a.dev.port, &r->c1);
  rc = add_retry_hint(rc, r);
  if(rc) {
    char mine[900], ga[INET6_ADDRSTRLEN], gb[INET6_ADDRSTRLEN];
    struct verbs_endpoint me;
    /* the two ends by device and address: which path failed */
    side_endpoint(&a, &me);
    verbs_gid_text(&me.gid, ga, sizeof(ga));
    verbs_gid_text(&ep.gid, gb, sizeof(gb));
    snprintf(mine, sizeof(mine), "%s (%s) -> %s (%s): %s", a.dev.name, ga,
             p.dev, gb, verbs_errmsg());
    /* Ask the far end what it saw; it may be gone. */
    p.timeout_ms = 2000;
    rc2 = peer_done(&p, &r->b);
    if(rc2) {
      char theirs[512];
      snprintf(theirs, sizeof(theirs), "%s", verbs_errmsg());
      rc = verbs_fail(rc, "%s; then %s", mine, theirs);
    }
    else {
      for(char *c = p.remote_error; *c; c++)
        if(*c == '\x1f')
          *c = ' ';
      rc = verbs_fail(rc, "%s (peer %s:%d answered%s%s)", mine,
                      o->peer_host, o->peer_port,
                      p.remote_error[0] ? ": " : "", p.remote_error);
    }
    goto out;
  }
  rc = peer_done(&p, &r->b);
  if(!rc && p.remote_error[0]) {
    for(char *c = p.remote_error; *c; c++)
      if(*c == '\x1f')
        *c = ' ';
    rc = verbs_fail(VERBS_EPEER, "peer %s:%d: far end failed: %s",
                    o->peer_host, o->peer_port, p.remote_error);
  }
  if(!rc) {
    check_data(t, &a, NULL, r);
    summarize(t, r);
  }
out:
  peer_close(&p);
  side_close(&a);
  return rc;
}

enum verbs_code verbs_run(const struct verbs_run_opts *o,
                          struct verbs_run_result *r)
{
  memset(r, 0, sizeof(*r));
  r->mismatch_at = -1;
  r->a.mismatch_at = r->b.mismatch_at = -1;
  if(o->t.kind == VERBS_KIND_BW && o->t.bidir && o->t.op == VERBS_OP_SEND &&
     !o->t.iters)
    return verbs_fail(VERBS_EINVAL, "bidirectional SEND needs iters "
                      "(the receivers count messages to end)");
  if(o->peer_host && *o->peer_host)
    return run_remote(o, r);
  return run_loopback(o, r);
}

void verbs_run_free(struct verbs_run_result *r)
{
  outcome_free(&r->a);
  outcome_free(&r->b);
  verbs_counters_free(&r->c0);
  verbs_counters_free(&r->c1);
}
