/*
 * rc_client.c - one hipobj-rc-v2 transfer on the client side
 * (rc_client.h).  Order of events, as the interoperating implementations
 * do it (../../../shared/S3RDMA-WIRE.md):
 *   GET: PREPARE -> QP to RTS -> post RECV -> READY (the server writes
 *        with immediate = cookie, then answers) -> reap the RECV.
 *   PUT: PREPARE (reply names the server's staging MR) -> QP to RTS ->
 *        READY sent -> grace -> post WRITE_WITH_IMM -> READY's reply (the
 *        server answers once the immediate arrived and the object is
 *        stored) -> reap the WRITE.
 * Never post before READY is out: a server connects its QP only while
 * handling READY (breuner/elbencho @48264d1 tools/s3rdma/server/source/
 * HipObjV2Server.cpp, transfer()), so an earlier WRITE meets a QP that is
 * not ready and lives on RC retransmission (duplicate_request,
 * completer_retry_err).  The WRITE goes out from the HTTP layer's on_sent
 * hook, after put_grace_ns, as hipObject's client does it (ROCm/hipObject
 * @7bcffd0 src/rdma/v2-client.cpp: sendReadyRequest, kPutGraceMs = 100,
 * post, finishReady).
 */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <arpa/inet.h>

#include "rc_client.h"
#include "strata.h"
#include "token.h"
#include "wire.h"

enum verbs_code s3rdma_rc_open(struct s3rdma_rc *rc, struct verbs_dev *dev,
                               const struct s3_config *cfg)
{
  struct verbs_qp_opts qo = { .max_send_wr = 4, .max_recv_wr = 4 };
  memset(rc, 0, sizeof(*rc));
  rc->dev = dev;
  rc->landing_grace_ns = 2000000000ull;
  rc->put_grace_ns = S3RDMA_PUT_GRACE_NS;
  rc->cq = verbs_cq_create(dev, 16);
  if(!rc->cq)
    return VERBS_ESYS;
  rc->qp = verbs_qp_create(dev, rc->cq, rc->cq, &qo);
  if(!rc->qp) {
    verbs_cq_destroy(&rc->cq);
    return VERBS_ESYS;
  }
  s3rdma_rc_host_no_port(rc, cfg->endpoint, 1);
  rc->conn = s3_conn_new(cfg);
  if(!rc->conn) {
    s3rdma_rc_close(rc);
    return verbs_fail(VERBS_ENOMEM, "cannot start a control connection");
  }
  return VERBS_OK;
}

void s3rdma_rc_host_no_port(struct s3rdma_rc *rc, const char *endpoint,
                            int no_port)
{
  const char *h = strstr(endpoint, "://"), *end, *colon;
  size_t n;
  rc->host[0] = '\0';
  if(!no_port)
    return;
  h = h ? h + 3 : endpoint;
  end = h + strcspn(h, "/");
  colon = h[0] == '[' ? memchr(h, ']', (size_t)(end - h)) : h;
  colon = colon ? memchr(colon, ':', (size_t)(end - colon)) : NULL;
  n = (size_t)((colon ? colon : end) - h);
  if(n < sizeof(rc->host)) {
    memcpy(rc->host, h, n);
    rc->host[n] = '\0';
  }
}

void s3rdma_rc_close(struct s3rdma_rc *rc)
{
  if(!rc)
    return;
  s3_conn_free(&rc->conn);
  verbs_qp_destroy(&rc->qp);
  verbs_cq_destroy(&rc->cq);
}

static uint32_t random_u32(void)
{
  uint32_t v = 0;
  while(!v)
    if(getrandom(&v, sizeof(v), 0) != sizeof(v))
      v = (uint32_t)strata_now_ns() | 1u;
  return v;
}

static enum s3rdma_status fail(struct s3rdma_outcome *o, const char *step,
                               const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

static enum s3rdma_status fail(struct s3rdma_outcome *o, const char *step,
                               const char *fmt, ...)
{
  va_list ap;
  o->step = step;
  va_start(ap, fmt);
  vsnprintf(o->error, sizeof(o->error), fmt, ap);
  va_end(ap);
  return o->status = S3RDMA_FAILED;
}

/* A POST to route with headers h[n]; fills resp.  on_sent (or NULL)
 * runs once the request is out, before the reply is awaited. */
static enum s3_fail post_hook(struct s3rdma_rc *rc, const char *route,
                              const struct sigv4_header *h, size_t n,
                              struct s3_resp *resp,
                              void (*on_sent)(void *), void *arg)
{
  struct sigv4_header all[16];
  struct s3_req q;
  memset(&q, 0, sizeof(q));
  q.method = "POST";
  q.path = route;
  q.headers = h;
  q.nheaders = n;
  if(rc->host[0] && n < 15) {           /* sent as signed, no port */
    memcpy(all, h, n * sizeof(*h));
    all[n] = (struct sigv4_header){ "host", rc->host };
    q.headers = all;
    q.nheaders = n + 1;
  }
  q.on_sent = on_sent;
  q.on_sent_arg = arg;
  return s3_perform(rc->conn, &q, resp);
}

static enum s3_fail post(struct s3rdma_rc *rc, const char *route,
                         const struct sigv4_header *h, size_t n,
                         struct s3_resp *resp)
{
  return post_hook(rc, route, h, n, resp, NULL, NULL);
}

/* The PUT's WRITE_WITH_IMM, posted from READY's on_sent hook. */
struct put_post {
  struct s3rdma_rc *rc;
  uint64_t laddr, raddr, size, grace_ns;
  uint32_t lkey, rkey, cookie;
  int posted;               /* 1 posted, -1 post failed */
  char why[320];
};

static void post_after_ready(void *arg)
{
  struct put_post *pp = arg;
  if(pp->grace_ns) {
    struct timespec ts = { (time_t)(pp->grace_ns / 1000000000ull),
                           (long)(pp->grace_ns % 1000000000ull) };
    while(nanosleep(&ts, &ts))
      ;
  }
  if(verbs_post_write_imm(pp->rc->qp, 2, pp->laddr, (uint32_t)pp->size,
                          pp->lkey, pp->raddr, pp->rkey, pp->cookie, 1)) {
    snprintf(pp->why, sizeof(pp->why), "%s", verbs_errmsg());
    pp->posted = -1;
  }
  else
    pp->posted = 1;
}

static void cancel(struct s3rdma_rc *rc, const char *session)
{
  struct sigv4_header h[] = {
    { S3RDMA_H_PROTOCOL, S3RDMA_PROTOCOL },
    { S3RDMA_H_SESSION, session },
  };
  struct s3_resp r;
  (void)post(rc, S3RDMA_ROUTE_CANCEL, h, 2, &r);
  s3_resp_free(&r);
}

/* Drain stale completions and bring the QP back to RESET. */
static int qp_reset(struct s3rdma_rc *rc)
{
  struct ibv_qp_attr a;
  struct ibv_wc wc[8];
  if(!rc->used)
    return 0;
  memset(&a, 0, sizeof(a));
  a.qp_state = IBV_QPS_RESET;
  if(ibv_modify_qp(rc->qp, &a, IBV_QP_STATE))
    return -1;
  while(ibv_poll_cq(rc->cq, 8, wc) > 0)
    ;
  return 0;
}

/* Describe a failed control request (status, S3 code, rdma status). */
static void describe(const struct s3_resp *r, char *out, size_t cap)
{
  char st[64] = "";
  if(r->fail != S3_OK) {
    snprintf(out, cap, "%s", r->error[0] ? r->error : s3_strfail(r->fail));
    return;
  }
  (void)s3_resp_header(r, S3RDMA_H_STATUS, st, sizeof(st));
  snprintf(out, cap, "HTTP %ld%s%s%s%s", r->status, r->code[0] ? " " : "",
           r->code, st[0] ? ", protocol status " : "", st);
}

/* One transfer's names and numbers, shared by its steps. */
struct rc_xfer {
  struct s3rdma_rc *rc;
  const struct s3rdma_xfer *x;
  uint64_t laddr;               /* our buffer's address */
  uint32_t psn, cookie;
  char target[2048];
  char cookie_s[12];
  struct s3rdma_token srv;      /* the server's token */
  char session[40];
  uint64_t spsn, saddr, srkey;  /* its psn, (PUT) its staging MR */
};

/* PREPARE: our token out, the server's token, session, psn and (PUT)
 * staging MR back.  S3RDMA_OK, or the failure in o. */
static enum s3rdma_status prepare(struct rc_xfer *t, struct s3rdma_outcome *o)
{
  struct s3rdma_rc *rc = t->rc;
  const struct s3rdma_xfer *x = t->x;
  struct s3rdma_token tok;
  struct s3_resp r;
  char tokhex[89], psn_s[8], size_s[24], off_s[24];
  char v[160], why[320], stoken[89];
  const char *twhy = NULL;
  size_t nh;
  int code, n;

  memset(&tok, 0, sizeof(tok));
  tok.transport = S3RDMA_TRANSPORT_RC;
  tok.qpn = rc->qp->qp_num;
  memcpy(tok.gid, rc->dev->gid.raw, 16);
  tok.rkey = x->buf->mr->rkey;
  tok.addr = t->laddr;
  tok.len = x->size;
  tok.port = rc->dev->port;
  tok.lid = rc->dev->port_attr.lid;
  s3rdma_token_encode(&tok, tokhex);
  snprintf(psn_s, sizeof(psn_s), "%06x", t->psn);
  snprintf(t->cookie_s, sizeof(t->cookie_s), "%08x", t->cookie);
  snprintf(size_s, sizeof(size_s), "%llu", (unsigned long long)x->size);
  snprintf(off_s, sizeof(off_s), "%llu", (unsigned long long)x->offset);
  {
    struct sigv4_header h[] = {
      { S3RDMA_H_PROTOCOL, S3RDMA_PROTOCOL },
      { S3RDMA_H_OP, x->put ? "PUT" : "GET" },
      { S3RDMA_H_TARGET, t->target },
      { S3RDMA_H_SIZE, size_s },
      { S3RDMA_H_PSN, psn_s },
      { S3RDMA_H_COOKIE, t->cookie_s },
      { S3RDMA_H_TOKEN, tokhex },
      { S3RDMA_H_OFFSET, off_s },
    };
    nh = x->has_offset ? 8 : 7;
    post(rc, S3RDMA_ROUTE_PREPARE, h, nh, &r);
  }
  o->prepare_status = r.status;
  if(r.fail != S3_OK || r.status != 200) {
    describe(&r, why, sizeof(why));
    if(r.fail == S3_OK && r.status == 501) {
      o->rdma_reply = 501;
      o->step = "prepare";
      snprintf(o->error, sizeof(o->error), "declined: %s", why);
      s3_resp_free(&r);
      return o->status = S3RDMA_DECLINED;
    }
    s3_resp_free(&r);
    return fail(o, "prepare", "PREPARE %s: %s", t->target, why);
  }
  /* The reply: 200:<server token>, session, psn, (PUT) staging MR. */
  if(s3_resp_header(&r, S3RDMA_H_REPLY, v, sizeof(v)) < 0 ||
     s3rdma_reply_parse(v, &code, stoken) || code != 200 || !stoken[0] ||
     s3rdma_token_decode(stoken, strlen(stoken), &t->srv, &twhy) ||
     t->srv.transport != S3RDMA_TRANSPORT_RC) {
    s3_resp_free(&r);
    return fail(o, "prepare", "PREPARE reply has no valid 200:<RC token> "
                "in %s (%s)", S3RDMA_H_REPLY, twhy ? twhy : "absent");
  }
  n = s3_resp_header(&r, S3RDMA_H_SESSION, t->session, sizeof(t->session));
  if(n != S3RDMA_SESSION_HEX ||
     s3_resp_header(&r, S3RDMA_H_PSN, v, sizeof(v)) < 0 ||
     s3rdma_parse_hex(v, 6, &t->spsn) || !t->spsn) {
    s3_resp_free(&r);
    return fail(o, "prepare", "PREPARE reply lacks a 32-hex session or a "
                "6-hex psn");
  }
  if(x->put &&
     (s3_resp_header(&r, "x-amz-rdma-mr-addr", v, sizeof(v)) < 0 ||
      s3rdma_parse_hex(v, 16, &t->saddr) ||
      s3_resp_header(&r, "x-amz-rdma-mr-rkey", v, sizeof(v)) < 0 ||
      s3rdma_parse_hex(v, 8, &t->srkey))) {
    s3_resp_free(&r);
    cancel(rc, t->session);
    return fail(o, "prepare", "PUT: PREPARE reply lacks the staging MR "
                "(x-amz-rdma-mr-addr / -rkey)");
  }
  s3_resp_free(&r);
  return S3RDMA_OK;
}

/* Our QP connected to the server's; GET: the RECV for its IMM posted. */
static enum s3rdma_status connect_qp(struct rc_xfer *t,
                                     struct s3rdma_outcome *o)
{
  struct s3rdma_rc *rc = t->rc;
  struct verbs_endpoint remote;
  char why[320];

  memset(&remote, 0, sizeof(remote));
  remote.qpn = t->srv.qpn;
  remote.psn = (uint32_t)t->spsn;
  memcpy(remote.gid.raw, t->srv.gid, 16);
  remote.lid = t->srv.lid;
  remote.port = t->srv.port;
  remote.mtu = rc->dev->mtu;           /* the port's active MTU */
  if(verbs_qp_connect(rc->qp, rc->dev, t->psn, &remote)) {
    snprintf(why, sizeof(why), "%s", verbs_errmsg());
    cancel(rc, t->session);
    return fail(o, "connect", "%s", why);
  }
  if(!t->x->put &&
     verbs_post_recv(rc->qp, 1, t->laddr, 0, t->x->buf->mr->lkey)) {
    snprintf(why, sizeof(why), "%s", verbs_errmsg());
    cancel(rc, t->session);
    return fail(o, "data", "post RECV: %s", why);
  }
  return S3RDMA_OK;
}

/* READY: the server connects, moves the data (PUT: our WRITE_WITH_IMM,
 * posted once READY has left), then answers; the answer stays in *r
 * (the caller frees it) when S3RDMA_OK. */
static enum s3rdma_status ready(struct rc_xfer *t, struct s3rdma_outcome *o,
                                struct s3_resp *r)
{
  struct s3rdma_rc *rc = t->rc;
  const struct s3rdma_xfer *x = t->x;
  struct put_post pp;
  char qpn_s[12], addr_s[20], rkey_s[12], why[320];

  memset(&pp, 0, sizeof(pp));
  snprintf(qpn_s, sizeof(qpn_s), "%x", rc->qp->qp_num);
  snprintf(addr_s, sizeof(addr_s), "%llx", (unsigned long long)t->laddr);
  snprintf(rkey_s, sizeof(rkey_s), "%x", x->buf->mr->rkey);
  {
    struct sigv4_header h[] = {
      { S3RDMA_H_PROTOCOL, S3RDMA_PROTOCOL },
      { S3RDMA_H_SESSION, t->session },
      { S3RDMA_H_COOKIE, t->cookie_s },
      { S3RDMA_H_QPN, qpn_s },
      { S3RDMA_H_MR_ADDR, addr_s },
      { S3RDMA_H_MR_RKEY, rkey_s },
    };
    pp.rc = rc;
    pp.laddr = t->laddr;
    pp.raddr = t->saddr;
    pp.size = x->size;
    pp.grace_ns = rc->put_grace_ns;
    pp.lkey = x->buf->mr->lkey;
    pp.rkey = (uint32_t)t->srkey;
    pp.cookie = t->cookie;
    post_hook(rc, S3RDMA_ROUTE_READY, h, x->put ? 4 : 6, r,
              x->put ? post_after_ready : NULL, &pp);
  }
  o->ready_status = r->status;
  o->step = "ready";
  o->posted_after_ready = pp.posted == 1;
  if(x->put && pp.posted != 1) {
    s3_resp_free(r);
    cancel(rc, t->session);
    return fail(o, "data", "post WRITE_WITH_IMM after READY: %s",
                pp.posted ? pp.why : "READY never left (no on_sent)");
  }
  if(r->fail != S3_OK || (r->status != 200 && r->status != 206 &&
                          !(x->put && r->status == 204))) {
    describe(r, why, sizeof(why));
    s3_resp_free(r);
    cancel(rc, t->session);
    if(o->ready_status == 501) {
      o->rdma_reply = 501;
      snprintf(o->error, sizeof(o->error), "declined at READY: %s", why);
      return o->status = S3RDMA_DECLINED;
    }
    return fail(o, "ready", "READY %s: %s", t->target, why);
  }
  return S3RDMA_OK;
}

/* Witness 1: the READY reply echoes the cookie and the byte count. */
static void witness_reply(const struct rc_xfer *t, const struct s3_resp *r,
                          struct s3rdma_outcome *o)
{
  const struct s3rdma_xfer *x = t->x;
  char v[160], stoken[89];
  uint64_t n64;
  int code;

  o->reply_ok = 1;
  if(s3_resp_header(r, S3RDMA_H_REPLY, v, sizeof(v)) >= 0) {
    if(s3rdma_reply_parse(v, &code, stoken) ||
       !s3rdma_reply_ok(x->put, x->has_offset || x->part > 0, code))
      o->reply_ok = 0;
    o->rdma_reply = code;
  }
  else
    o->rdma_reply = (int)r->status;
  if(s3_resp_header(r, S3RDMA_H_COOKIE, v, sizeof(v)) < 0 ||
     s3rdma_parse_hex(v, 8, &n64) || n64 != t->cookie)
    o->reply_ok = 0;
  /* x-amz-rdma-bytes-transferred absent: the whole size moved */
  o->bytes_reported = x->size;
  if(s3_resp_header(r, S3RDMA_H_BYTES, v, sizeof(v)) >= 0)
    o->bytes_reported = s3rdma_parse_dec(v, &n64) ? 0 : n64;
  if(o->bytes_reported != x->size)
    o->reply_ok = 0;
  if(x->put && s3_resp_header(r, S3RDMA_H_ETAG, o->etag,
                              sizeof(o->etag)) < 0)
    (void)s3_resp_header(r, "etag", o->etag, sizeof(o->etag));
}

/* Witness 2: our completion (GET: the IMM with the cookie); then the
 * verdict on both witnesses. */
static enum s3rdma_status witness_landing(const struct rc_xfer *t,
                                          uint64_t t0,
                                          struct s3rdma_outcome *o)
{
  struct s3rdma_rc *rc = t->rc;
  const struct s3rdma_xfer *x = t->x;
  struct ibv_wc wc;
  char why[320];
  int n = verbs_poll(rc->cq, &wc, 1, rc->landing_grace_ns);

  o->step = "data";
  if(n < 0 && n != -VERBS_ETIMEDOUT && n != -VERBS_ESTOPPED)
    return fail(o, "data", "%s", verbs_errmsg());
  if(n <= 0) {
    o->total_ns = strata_now_ns() - t0;
    return fail(o, "data", "READY answered %ld (bytes-transferred %llu) "
                "but no %s completion arrived within %.1f s",
                o->ready_status, (unsigned long long)o->bytes_reported,
                x->put ? "WRITE_WITH_IMM" : "RECV (immediate)",
                (double)rc->landing_grace_ns / 1e9);
  }
  if(verbs_wc_check(&wc, x->put ? "WRITE_WITH_IMM" : "RECV")) {
    snprintf(why, sizeof(why), "%s", verbs_errmsg());
    return fail(o, "data", "%s", why);
  }
  if(x->put) {
    o->bytes_landed = x->size;
    o->landed_ok = wc.opcode == IBV_WC_RDMA_WRITE;
  }
  else {
    o->bytes_landed = wc.byte_len;
    o->landed_ok = wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
                   (wc.wc_flags & IBV_WC_WITH_IMM) &&
                   ntohl(wc.imm_data) == t->cookie &&
                   wc.byte_len == x->size;
  }
  o->total_ns = strata_now_ns() - t0;
  if(!o->reply_ok || !o->landed_ok)
    return fail(o, "data", "RDMA not proven: reply %s (HTTP %ld, "
                "bytes-transferred %llu of %llu), completion %s (%llu "
                "bytes, immediate %s)", o->reply_ok ? "ok" : "wrong",
                o->ready_status, (unsigned long long)o->bytes_reported,
                (unsigned long long)x->size, o->landed_ok ? "ok" : "wrong",
                (unsigned long long)o->bytes_landed,
                x->put ? "n/a" :
                (ntohl(wc.imm_data) == t->cookie ? "= cookie" : "!= cookie"));
  o->step = "done";
  return o->status = S3RDMA_OK;
}

enum s3rdma_status s3rdma_rc_transfer(struct s3rdma_rc *rc,
                                      const struct s3rdma_xfer *x,
                                      struct s3rdma_outcome *o)
{
  struct rc_xfer t;
  struct s3_resp r;
  uint64_t t0 = strata_now_ns();
  enum s3rdma_status st;

  memset(o, 0, sizeof(*o));
  memset(&t, 0, sizeof(t));
  t.rc = rc;
  t.x = x;
  t.psn = verbs_random_psn();
  t.cookie = random_u32();
  t.laddr = (uint64_t)(uintptr_t)x->buf->mr->addr + x->buf_off;
  o->step = "prepare";
  if(x->size < 1 || x->size > S3RDMA_SIZE_MAX ||
     x->buf_off + x->size > x->buf->len)
    return fail(o, "prepare", "size %llu does not fit 1..2^31-1 or the "
                "buffer", (unsigned long long)x->size);
  if(s3rdma_target_build(x->bucket, x->key, x->part, x->upload_id,
                         t.target, sizeof(t.target)))
    return fail(o, "prepare", "object name too long");
  if(qp_reset(rc))
    return fail(o, "connect", "cannot reset the QP");
  rc->used = 1;
  if((st = prepare(&t, o)) != S3RDMA_OK ||
     (st = connect_qp(&t, o)) != S3RDMA_OK ||
     (st = ready(&t, o, &r)) != S3RDMA_OK)
    return st;
  witness_reply(&t, &r, o);
  s3_resp_free(&r);
  return witness_landing(&t, t0, o);
}
