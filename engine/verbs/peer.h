/*
 * peer.h - drive one `strata serve` agent through a test (ctl.h has the
 * protocol).  Each step is a call so that a driver can bring N agents to
 * CONNECTED and then start them together.
 */
#ifndef STRATA_VERBS_PEER_H
#define STRATA_VERBS_PEER_H

#include "ctl.h"

struct verbs_peer {
  struct ctl_conn conn;
  char host[256];
  int port;
  int timeout_ms;        /* per control step */
  char agent[128];       /* the agent's host name (OK agent=) */
  char dev[64];          /* the device it opened */
  char remote_error[512];/* the far end's loop error, from RESULT */
};

/* Connect and authenticate (HELLO).  VERBS_EPEER with the step named. */
enum verbs_code peer_open(struct verbs_peer *p, const char *host, int port,
                          const char *token, double timeout_s);
/* SETUP: the agent opens dev/port/gid_index ("-"/-1 = its defaults) and
 * answers its endpoint and QP numbers/PSNs (t->qps of each). */
enum verbs_code peer_setup(struct verbs_peer *p, const struct verbs_test *t,
                           const char *dev, int port, int gid_index,
                           struct verbs_endpoint *ep, uint32_t *qpn,
                           uint32_t *psn);
/* CONNECT: send our side; the agent connects its QPs. */
enum verbs_code peer_connect(struct verbs_peer *p, const struct verbs_side *s);
/* GO: the agent starts its far-end loop. */
enum verbs_code peer_go(struct verbs_peer *p);
/* DONE: the agent stops, checks the data, answers its outcome. */
enum verbs_code peer_done(struct verbs_peer *p, struct verbs_outcome *o);
/* BYE and close; NULL-safe, idempotent. */
void peer_close(struct verbs_peer *p);

#endif
