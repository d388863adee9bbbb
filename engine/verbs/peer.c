/*
 * peer.c - the engine's side of the control protocol (ctl.h): encode the
 * test and endpoints, and drive one agent step by step.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer.h"

int ctl_fmt_test(char *buf, size_t len, const struct verbs_test *t)
{
  int n = snprintf(buf, len,
                   "kind=%s op=%s size=%llu qps=%d depth=%d rxdepth=%d "
                   "cqmod=%d iters=%llu duration=%.6f bidir=%d validate=%d "
                   "inline=%d timeout=%.3f mem=%s hugepages=%d numa=%d "
                   "maxbuf=%llu qptimeout=%d retry=%d",
                   t->kind == VERBS_KIND_LAT ? "lat" : "bw",
                   ctl_op_name(t->op), (unsigned long long)t->size, t->qps,
                   t->tx_depth, t->rx_depth, t->cq_mod,
                   (unsigned long long)t->iters, t->duration_s, t->bidir,
                   t->validate, t->inline_size, t->timeout_s,
                   "host", t->hugepages, t->numa,
                   (unsigned long long)t->max_buffer, t->qp_timeout,
                   t->retry_cnt);
  if(n >= 0 && (size_t)n < len && t->active)   /* absent = passive */
    n += snprintf(buf + n, len - (size_t)n, " role=active");
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

int ctl_parse_test(const struct ctl_msg *m, struct verbs_test *t,
                   char *err, size_t errlen)
{
  const char *kind = ctl_get(m, "kind"), *mem = ctl_get(m, "mem");
  const char *bad = NULL;

  memset(t, 0, sizeof(*t));
  t->dmabuf_fd = -1;
  if(!kind || (strcmp(kind, "bw") && strcmp(kind, "lat")))
    bad = "kind";
  else if(ctl_op_parse(ctl_get(m, "op"), &t->op))
    bad = "op";
  else if(ctl_get_u64(m, "size", &t->size) || t->size < 1 ||
          t->size > (1ull << 31))
    bad = "size";
  else if(ctl_get_int(m, "qps", &t->qps) || t->qps < 1 ||
          t->qps > VERBS_MAX_QPS)
    bad = "qps";
  else if(ctl_get_int(m, "depth", &t->tx_depth) || t->tx_depth < 1 ||
          t->tx_depth > 16384)
    bad = "depth";
  else if(ctl_get_int(m, "rxdepth", &t->rx_depth) || t->rx_depth < 0 ||
          t->rx_depth > 16384)
    bad = "rxdepth";
  else if(ctl_get_int(m, "cqmod", &t->cq_mod) || t->cq_mod < 1)
    bad = "cqmod";
  else if(ctl_get_u64(m, "iters", &t->iters))
    bad = "iters";
  else if(ctl_get_dbl(m, "duration", &t->duration_s) || t->duration_s < 0)
    bad = "duration";
  else if(ctl_get_int(m, "bidir", &t->bidir))
    bad = "bidir";
  else if(ctl_get_int(m, "validate", &t->validate))
    bad = "validate";
  else if(ctl_get_int(m, "inline", &t->inline_size) || t->inline_size < 0)
    bad = "inline";
  else if(ctl_get_dbl(m, "timeout", &t->timeout_s) || t->timeout_s <= 0)
    bad = "timeout";
  else if(!mem || (strcmp(mem, "host") && strcmp(mem, "cuda")))
    bad = "mem";
  else if(ctl_get_int(m, "hugepages", &t->hugepages))
    bad = "hugepages";
  else if(ctl_get_int(m, "numa", &t->numa))
    bad = "numa";
  else if(ctl_get_u64(m, "maxbuf", &t->max_buffer))
    bad = "maxbuf";
  /* absent (an older engine): the default */
  else if(ctl_get(m, "qptimeout") &&
          (ctl_get_int(m, "qptimeout", &t->qp_timeout) ||
           t->qp_timeout < 0 || t->qp_timeout > 31))
    bad = "qptimeout";
  else if(ctl_get(m, "retry") &&
          (ctl_get_int(m, "retry", &t->retry_cnt) ||
           t->retry_cnt < 0 || t->retry_cnt > 7))
    bad = "retry";
  else if(ctl_get(m, "role") && strcmp(ctl_get(m, "role"), "active") &&
          strcmp(ctl_get(m, "role"), "passive"))
    bad = "role";
  if(bad) {
    snprintf(err, errlen, "SETUP: bad or missing '%s'", bad);
    return -1;
  }
  t->kind = !strcmp(kind, "lat") ? VERBS_KIND_LAT : VERBS_KIND_BW;
  t->mem = !strcmp(mem, "cuda") ? VERBS_MEM_CUDA : VERBS_MEM_HOST;
  t->active = ctl_get(m, "role") && !strcmp(ctl_get(m, "role"), "active");
  return 0;
}

static int fmt_list(char *buf, size_t len, const uint32_t *v, int n)
{
  size_t off = 0;
  for(int i = 0; i < n; i++) {
    int w = snprintf(buf + off, len - off, "%s%u", i ? "," : "", v[i]);
    if(w < 0 || (size_t)w >= len - off)
      return -1;
    off += (size_t)w;
  }
  return 0;
}

int ctl_fmt_endpoint(char *buf, size_t len, const struct verbs_side *s)
{
  struct verbs_endpoint ep;
  char gid[33], qpn[VERBS_MAX_QPS * 11], psn[VERBS_MAX_QPS * 11];
  uint32_t q[VERBS_MAX_QPS];
  int n;

  side_endpoint(s, &ep);
  verbs_gid_hex(&ep.gid, gid);
  for(int i = 0; i < s->nqp; i++)
    q[i] = s->qp[i]->qp_num;
  if(fmt_list(qpn, sizeof(qpn), q, s->nqp) ||
     fmt_list(psn, sizeof(psn), s->psn, s->nqp))
    return -1;
  n = snprintf(buf, len, "dev=%s gidx=%d gid=%s mtu=%d lid=%u port=%u "
               "addr=0x%llx rkey=0x%x len=%llu qpn=%s psn=%s",
               s->dev.name, s->dev.gid_index, gid, (int)ep.mtu, ep.lid,
               ep.port, (unsigned long long)ep.addr, ep.rkey,
               (unsigned long long)ep.len, qpn, psn);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

int ctl_parse_endpoint(const struct ctl_msg *m, struct verbs_endpoint *ep,
                       uint32_t *qpn, uint32_t *psn, int nqp)
{
  const char *gid = ctl_get(m, "gid");
  uint64_t v;
  int mtu, lid, port;

  memset(ep, 0, sizeof(*ep));
  if(!gid || verbs_gid_from_hex(gid, &ep->gid) ||
     ctl_get_int(m, "mtu", &mtu) || mtu < IBV_MTU_256 || mtu > IBV_MTU_4096 ||
     ctl_get_int(m, "lid", &lid) || ctl_get_int(m, "port", &port) ||
     ctl_get_u64(m, "addr", &ep->addr) || ctl_get_u64(m, "rkey", &v) ||
     ctl_get_u64(m, "len", &ep->len) ||
     ctl_get_list(m, "qpn", qpn, VERBS_MAX_QPS) != nqp ||
     ctl_get_list(m, "psn", psn, VERBS_MAX_QPS) != nqp)
    return -1;
  ep->mtu = (enum ibv_mtu)mtu;
  ep->lid = (uint16_t)lid;
  ep->port = (uint8_t)port;
  ep->rkey = (uint32_t)v;
  ep->qpn = qpn[0];
  ep->psn = psn[0];
  return 0;
}

/* ------------------------------------------------------------------ */

static enum verbs_code peer_err(struct verbs_peer *p, const char *step,
                                const char *what)
{
  return verbs_fail(VERBS_EPEER, "peer %s:%d: %s: %s", p->host, p->port,
                    step, what);
}

/* Send a line, then read the reply; expect verb `want`. */
static enum verbs_code exchange(struct verbs_peer *p, const char *step,
                                const char *want, struct ctl_msg *m,
                                int timeout_ms, const char *fmt, ...)
  __attribute__((format(printf, 6, 7)));

static enum verbs_code exchange(struct verbs_peer *p, const char *step,
                                const char *want, struct ctl_msg *m,
                                int timeout_ms, const char *fmt, ...)
{
  char line[CTL_LINE];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if(n < 0 || n >= (int)sizeof(line))
    return peer_err(p, step, "message too long");
  if(ctl_send(p->conn.fd, timeout_ms, "%s", line))
    return peer_err(p, step, errno == ETIMEDOUT ? "send timed out"
                                                : "connection lost");
  if(ctl_recv(&p->conn, m, timeout_ms)) {
    int e = errno;
    return peer_err(p, step, e == ETIMEDOUT ? "no reply (timed out)"
                    : e == ECONNRESET ? "connection closed by the peer"
                    : e == EPROTO ? "malformed reply" : strerror(e));
  }
  if(!strcmp(m->verb, "ERR")) {
    const char *code = m->n > 0 ? m->val[0] : "?";
    const char *text = ctl_get(m, "msg");
    char buf[600];
    snprintf(buf, sizeof(buf), "refused (%s): %s", code,
             text ? text : "(no reason)");
    for(char *c = buf; *c; c++)
      if(*c == '\x1f')
        *c = ' ';
    return peer_err(p, step, buf);
  }
  if(strcmp(m->verb, want))
    return peer_err(p, step, "unexpected reply");
  return VERBS_OK;
}

enum verbs_code peer_open(struct verbs_peer *p, const char *host, int port,
                          const char *token, double timeout_s)
{
  struct ctl_msg m;
  enum verbs_code rc;

  memset(p, 0, sizeof(*p));
  p->conn.fd = -1;
  snprintf(p->host, sizeof(p->host), "%s", host);
  p->port = port;
  p->timeout_ms = (int)(timeout_s * 1000);
  if(!token || !*token)
    return verbs_fail(VERBS_EINVAL, "peer %s:%d: no token", host, port);
  if(strpbrk(token, " \t\r\n"))
    return verbs_fail(VERBS_EINVAL, "peer %s:%d: token holds whitespace",
                      host, port);
  p->conn.fd = ctl_connect(host, port, p->timeout_ms);
  if(p->conn.fd < 0)
    return VERBS_EPEER;
  rc = exchange(p, "HELLO", "OK", &m, p->timeout_ms, "HELLO proto=%d "
                "token=%s", CTL_PROTO, token);
  if(!rc)
    snprintf(p->agent, sizeof(p->agent), "%s",
             ctl_get(&m, "agent") ? ctl_get(&m, "agent") : "?");
  return rc;
}

enum verbs_code peer_setup(struct verbs_peer *p, const struct verbs_test *t,
                           const char *dev, int port, int gid_index,
                           struct verbs_endpoint *ep, uint32_t *qpn,
                           uint32_t *psn)
{
  char tb[1024];
  struct ctl_msg m;
  enum verbs_code rc;

  if(ctl_fmt_test(tb, sizeof(tb), t))
    return verbs_fail(VERBS_EINVAL, "SETUP too long");
  rc = exchange(p, "SETUP", "READY", &m, p->timeout_ms, "SETUP %s dev=%s "
                "port=%d gidx=%d", tb, dev && *dev ? dev : "-", port,
                gid_index);
  if(rc)
    return rc;
  snprintf(p->dev, sizeof(p->dev), "%s",
           ctl_get(&m, "dev") ? ctl_get(&m, "dev") : "?");
  if(ctl_parse_endpoint(&m, ep, qpn, psn, t->qps))
    return peer_err(p, "SETUP", "READY lacks a valid endpoint");
  if(t->active && (!ctl_get(&m, "role") || strcmp(ctl_get(&m, "role"),
                                                  "active")))
    return peer_err(p, "SETUP", "the agent cannot be the active end "
                    "(an older strata serve: no role=active)");
  return VERBS_OK;
}

enum verbs_code peer_connect(struct verbs_peer *p, const struct verbs_side *s)
{
  char eb[CTL_LINE - 64];
  struct ctl_msg m;
  if(ctl_fmt_endpoint(eb, sizeof(eb), s))
    return verbs_fail(VERBS_EINVAL, "CONNECT too long");
  return exchange(p, "CONNECT", "CONNECTED", &m, p->timeout_ms,
                  "CONNECT %s", eb);
}

enum verbs_code peer_go(struct verbs_peer *p)
{
  struct ctl_msg m;
  return exchange(p, "GO", "RUNNING", &m, p->timeout_ms, "GO");
}

enum verbs_code peer_done(struct verbs_peer *p, struct verbs_outcome *o)
{
  struct ctl_msg m;
  uint64_t v;
  int valid = 0;
  enum verbs_code rc = exchange(p, "DONE", "RESULT", &m, p->timeout_ms,
                                "DONE");
  if(rc)
    return rc;
  memset(o, 0, sizeof(*o));
  o->mismatch_at = -1;
  (void)ctl_get_u64(&m, "msgs", &o->msgs);
  (void)ctl_get_u64(&m, "bytes", &o->bytes);
  (void)ctl_get_u64(&m, "recvs", &o->recvs);
  (void)ctl_get_u64(&m, "t_first", &o->t_first_ns);
  (void)ctl_get_u64(&m, "t_last", &o->t_last_ns);
  (void)ctl_get_dbl(&m, "cpu_s", &o->cpu_s);
  (void)ctl_get_dbl(&m, "peak", &o->peak_gbps);
  (void)ctl_get_int(&m, "valid", &valid);
  o->validated = valid;
  if(!ctl_get_u64(&m, "mismatch", &v))
    o->mismatch_at = (int64_t)v;
  if(ctl_get(&m, "error"))
    snprintf(p->remote_error, sizeof(p->remote_error), "%s",
             ctl_get(&m, "error"));
  return VERBS_OK;
}

void peer_close(struct verbs_peer *p)
{
  if(p->conn.fd >= 0) {
    (void)ctl_send(p->conn.fd, 200, "BYE");
    close(p->conn.fd);
  }
  p->conn.fd = -1;
}
