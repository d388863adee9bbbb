/*
 * run.h - one bandwidth or latency measurement, loopback or against a peer
 * agent (run.c).  What verbs.bw / verbs.lat call.
 */
#ifndef STRATA_VERBS_RUN_H
#define STRATA_VERBS_RUN_H

#include "engine.h"
#include "peer.h"

struct verbs_run_opts {
  struct verbs_test t;
  const char *device;       /* NULL = first device */
  int port;
  int gid_index;            /* -1 = auto */
  /* the far end: none = loopback on this device */
  const char *peer_host;
  int peer_port;
  const char *peer_token;
  const char *peer_device;  /* NULL = the agent's default */
  int peer_port_num;
  int peer_gid_index;
  double ctl_timeout_s;     /* per control step */
};

struct verbs_run_result {
  char device[64];
  int port, gid_index, mtu_bytes;
  uint32_t max_inline;
  int qp_timeout;           /* QP 0's, queried after connecting; -1 unknown */
  char peer[300];           /* host:port, "" for loopback */
  char peer_agent[128];
  char peer_device[64];
  struct verbs_outcome a;   /* this side (the initiator) */
  struct verbs_outcome b;   /* the far end */
  double gbps, gbps_peer, peak_gbps, mpps, cpu_pct, peer_cpu_pct;
  double duration_s;
  struct verbs_counters c0, c1;  /* this port's counters before / after */
  int validated;
  int64_t mismatch_at;
  char mismatch_where[16];
};

/* Run it.  On failure r holds what was gathered (counters, device). */
enum verbs_code verbs_run(const struct verbs_run_opts *o,
                          struct verbs_run_result *r);
void verbs_run_free(struct verbs_run_result *r);

#endif
