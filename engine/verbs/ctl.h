/*
 * ctl.h - the control protocol between the engine and `strata serve`.
 *
 * TCP, one line per message, "VERB key=value key=value ...\n" (values
 * hold no spaces; lists are comma separated; at most CTL_LINE bytes).
 * A session (one TCP connection, one forked agent process):
 *
 *   C: HELLO proto=1 token=<secret>      S: OK agent=<host> proto=1
 *                                        (or ERR auth ..., then close)
 *   C: SETUP kind= op= size= qps= ...    S: READY dev= gidx= gid= mtu= lid=
 *                                           port= addr= rkey= len=
 *                                           qpn=a,b,.. psn=a,b,..
 *   C: CONNECT gid= mtu= lid= addr= rkey= len= qpn=.. psn=..
 *                                        S: CONNECTED
 *   C: GO                                S: RUNNING
 *      (both ends run their loops; the agent's thread is the far end)
 *   C: DONE                              S: RESULT msgs= bytes= recvs=
 *                                           t_first= t_last= cpu_s=
 *                                           valid= mismatch=
 *   C: BYE                               S: (closes)
 * Any step may be answered "ERR <code> <text>".  Steps are separate so
 * that a driver can SETUP and CONNECT N agents, then send GO to all of
 * them together (incast, RUNBOOK R7).  Every read has a deadline.
 * Incast (incast.c) adds, backwards compatibly: SETUP ... role=active
 * (the agent posts the WRITEs; READY echoes role=active, an older agent
 * does not and is refused by the engine) and PING -> PONG now=<ns> (the
 * agent's CLOCK_MONOTONIC, for the clock offset).
 */
#ifndef STRATA_VERBS_CTL_H
#define STRATA_VERBS_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

#define CTL_LINE 8192
#define CTL_PROTO 1
#define CTL_MAX_KV 64

struct ctl_msg {
  char line[CTL_LINE];
  char *verb;
  int n;
  char *key[CTL_MAX_KV];
  char *val[CTL_MAX_KV];
};

/* Split m->line in place into verb and key=value pairs.  -1 when
 * malformed (empty, a token without '=', too many pairs). */
int ctl_parse(struct ctl_msg *m);
/* The value of key, or NULL. */
const char *ctl_get(const struct ctl_msg *m, const char *key);
/* Integer / double value of key into *v; -1 when absent or not a number. */
int ctl_get_u64(const struct ctl_msg *m, const char *key, uint64_t *v);
int ctl_get_int(const struct ctl_msg *m, const char *key, int *v);
int ctl_get_dbl(const struct ctl_msg *m, const char *key, double *v);
/* Parse a comma list of up to max unsigned numbers; returns the count or
 * -1 when malformed. */
int ctl_get_list(const struct ctl_msg *m, const char *key, uint32_t *out,
                 int max);

/* Write all of buf to fd within timeout_ms.  0 or -1 (errno set). */
int ctl_write(int fd, const char *buf, size_t len, int timeout_ms);
/* printf a line (the "\n" is added) and send it. */
int ctl_send(int fd, int timeout_ms, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
/*
 * Read one line into m and parse it, within timeout_ms.  Returns 0, or
 * -1 with errno: ETIMEDOUT, ECONNRESET (peer closed), EPROTO (malformed
 * or too long).  rb/rlen keep bytes read past the line between calls.
 */
struct ctl_conn {
  int fd;
  char rb[CTL_LINE];
  size_t rlen;
};
int ctl_recv(struct ctl_conn *c, struct ctl_msg *m, int timeout_ms);

/* Connect to host:port within timeout_ms; fd or -1 + verbs_errmsg. */
int ctl_connect(const char *host, int port, int timeout_ms);
/* Listen on addr:port (addr NULL = all); fd or -1 + verbs_errmsg. */
int ctl_listen(const char *addr, int port);

/* Constant-time string equality (tokens). */
int ctl_token_eq(const char *a, const char *b);

/* Encode the test parameters as SETUP's pairs / decode them. */
int ctl_fmt_test(char *buf, size_t len, const struct verbs_test *t);
int ctl_parse_test(const struct ctl_msg *m, struct verbs_test *t,
                   char *err, size_t errlen);
/* Encode a side's endpoint + QP numbers / decode the peer's. */
int ctl_fmt_endpoint(char *buf, size_t len, const struct verbs_side *s);
int ctl_parse_endpoint(const struct ctl_msg *m, struct verbs_endpoint *ep,
                       uint32_t *qpn, uint32_t *psn, int nqp);

const char *ctl_op_name(enum verbs_op op);
int ctl_op_parse(const char *s, enum verbs_op *op);

#endif
