/*
 * serve.h - the peer agent behind `strata serve` (serve.c).
 */
#ifndef STRATA_VERBS_SERVE_H
#define STRATA_VERBS_SERVE_H

#include "ctl.h"

struct verbs_serve_opts {
  const char *listen;        /* address to bind (NULL = all IPv4) */
  int listen_port;
  const char *token;         /* required: no token, no service */
  const char *device;        /* default device (NULL = first) */
  int port_num;              /* default RDMA port (1) */
  int gid_index;             /* default GID index (-1 = auto) */
  double idle_timeout_s;     /* a session silent this long is closed */
  double session_timeout_s;  /* hard limit of one session (alarm) */
  int max_sessions;          /* stop after this many (0 = never) */
  int ready_fd;              /* write "listening\n" here when up (-1) */
  int quiet;                 /* no log lines on stderr */
};

/*
 * Serve until strata_stop_flag (SIGINT/SIGTERM) or max_sessions.  Each
 * accepted connection is served by a forked child; a wrong or missing
 * token is answered "ERR" and logged (never the token itself).  Returns
 * VERBS_EINVAL without a token, VERBS_ESYS when it cannot listen.
 */
enum verbs_code verbs_serve(const struct verbs_serve_opts *o);

#endif
