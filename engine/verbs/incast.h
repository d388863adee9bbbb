/*
 * incast.h - N `strata serve` agents RDMA-WRITE into one receiver at once
 * (RUNBOOK R7).  The engine brokers: each sender agent is SETUP with
 * role=active, the receiver side (QPs in this process, or sessions on a
 * receiver agent) is SETUP passive, their endpoints are exchanged
 * through this process, and GO goes out to every sender before any reply
 * is read.  Each sender measures its own first post / last completion on
 * its clock; the engine converts them to its own clock with an offset
 * taken over the control connection (PING -> PONG now=, the exchange
 * with the smallest round trip), so the aggregate is bytes over one
 * common window.
 */
#ifndef STRATA_VERBS_INCAST_H
#define STRATA_VERBS_INCAST_H

#include "engine.h"
#include "peer.h"

#define INCAST_MAX_SENDERS 64

struct incast_peer {
  const char *name;          /* for messages: the site's peer name */
  const char *host;
  int port;
  const char *token;
  const char *device;        /* NULL = the agent's default */
  int ib_port;
  int gid_index;             /* -1 = auto */
  double timeout_s;          /* per control step (0 = ctl_timeout_s) */
};

struct incast_opts {
  struct verbs_test t;       /* op WRITE; iters or duration per QP */
  int nsenders;
  struct incast_peer senders[INCAST_MAX_SENDERS];
  int remote_receiver;       /* 0: the receiving QPs live here */
  struct incast_peer receiver;
  const char *device;        /* this host's device (local receiver) */
  int port;
  int gid_index;
  double ctl_timeout_s;      /* per control step */
  double deadline_s;         /* the whole run, from GO to the last DONE */
};

struct incast_sender {
  char agent[128];
  char device[64];
  uint64_t bytes, msgs;
  int64_t t_first_ns, t_last_ns;   /* on the engine's clock */
  double gbps;                     /* bytes over its own window */
  double cpu_s;
  double clock_err_us;             /* half the best PING round trip */
  int validated;                   /* receiver checked its slots */
  int64_t mismatch_at;
  char error[512];                 /* its loop failed (run phase) */
};

struct incast_result {
  int nsenders;
  struct incast_sender s[INCAST_MAX_SENDERS];
  char rx_device[64];
  int mtu_bytes;
  uint64_t bytes;
  double window_s;           /* earliest first post .. latest completion */
  double gbps;               /* aggregate: bytes x 8 / window */
  double min_gbps, max_gbps, fairness;   /* per sender; min / max */
  double start_skew_ms;      /* latest first post - earliest */
  double clock_err_us;       /* largest sender clock uncertainty */
  int errors;                /* senders whose loop failed */
  struct verbs_counters c0, c1;   /* receiver port (local receiver) */
};

/*
 * Run it.  A sender or receiver that cannot be reached, refuses a step
 * or dies raises VERBS_EPEER with "sender <name> (<host:port>): <step>:
 * ..." in verbs_errmsg(); a sender whose loop fails after GO is recorded
 * in r->s[i].error and counted in r->errors (the others still count).
 */
enum verbs_code verbs_incast(const struct incast_opts *o,
                             struct incast_result *r);
void verbs_incast_free(struct incast_result *r);

#endif
