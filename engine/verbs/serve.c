/*
 * serve.c - the peer agent (`strata serve`): accept control connections,
 * authenticate them with the shared token, and run the far end of each
 * test in a forked process (one per session: a crash or a hang in one
 * never takes the agent down, and several engines may drive it at once).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "strata.h"
#include "serve.h"

struct session {
  const struct verbs_serve_opts *o;
  struct ctl_conn c;
  char who[80];
  struct verbs_test t;
  struct verbs_side s;
  int opened, connected;
  pthread_t th;
  int running;
  volatile int stop;
  struct verbs_outcome out;
  enum verbs_code loop_rc;
  char loop_err[512];
};

static void logf_(const struct verbs_serve_opts *o, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void logf_(const struct verbs_serve_opts *o, const char *fmt, ...)
{
  va_list ap;
  char ts[32];
  time_t now = time(NULL);
  struct tm tm;
  if(o->quiet)
    return;
  gmtime_r(&now, &tm);
  strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(stderr, "%s strata serve[%d]: ", ts, (int)getpid());
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* ERR reply; the message's spaces travel as 0x1f (ctl.h values). */
static void reply_err(struct session *ss, enum verbs_code c, const char *msg)
{
  char m[600];
  snprintf(m, sizeof(m), "%s", msg);
  for(char *p = m; *p; p++)
    if(*p == ' ' || *p == '\n' || *p == '\t')
      *p = '\x1f';
  (void)ctl_send(ss->c.fd, 2000, "ERR code=%s msg=%s", verbs_strerror(c), m);
  logf_(ss->o, "%s: %s", ss->who, msg);
}

static void *far_end(void *arg)
{
  struct session *ss = arg;
  const struct verbs_test *t = &ss->t;
  if(t->kind == VERBS_KIND_LAT)
    ss->loop_rc = lat_loop(&ss->s, t, 0, &ss->stop, &ss->out);
  else
    ss->loop_rc = bw_loop(&ss->s, t, t->bidir || t->active,
                          t->op == VERBS_OP_SEND && !t->active,
                          &ss->stop, &ss->out);
  if(ss->loop_rc)
    snprintf(ss->loop_err, sizeof(ss->loop_err), "%s", verbs_errmsg());
  return NULL;
}

static void do_setup(struct session *ss, struct ctl_msg *m)
{
  char err[256], eb[CTL_LINE - 16];
  const char *dev = ctl_get(m, "dev");
  int port = ss->o->port_num, gidx = ss->o->gid_index;
  enum verbs_code rc;

  if(ss->opened) {
    reply_err(ss, VERBS_EINVAL, "SETUP twice in one session");
    return;
  }
  if(ctl_parse_test(m, &ss->t, err, sizeof(err))) {
    reply_err(ss, VERBS_EINVAL, err);
    return;
  }
  if(!dev || !strcmp(dev, "-"))
    dev = ss->o->device;
  if(ctl_get_int(m, "port", &port) || port < 1)
    port = ss->o->port_num;
  if(ctl_get_int(m, "gidx", &gidx) || gidx < 0)
    gidx = ss->o->gid_index;
  if(ss->t.mem == VERBS_MEM_CUDA) {
    reply_err(ss, VERBS_EUNSUPPORTED, "this agent has no GPU memory "
              "export (cuda family absent)");
    return;
  }
  /* the posting end's pattern has seed 1, the passive end's 2 */
  rc = side_open(&ss->s, &ss->t, dev, port, gidx, ss->t.active ? 1 : 2);
  if(rc) {
    reply_err(ss, rc, verbs_errmsg());
    return;
  }
  ss->opened = 1;
  if(ctl_fmt_endpoint(eb, sizeof(eb), &ss->s)) {
    reply_err(ss, VERBS_EINVAL, "endpoint too long");
    return;
  }
  (void)ctl_send(ss->c.fd, 2000, "READY %s%s", eb,
                 ss->t.active ? " role=active" : "");
  logf_(ss->o, "%s: SETUP %s %s size=%llu qps=%d on %s port %d GID %d",
        ss->who,
        ss->t.kind == VERBS_KIND_LAT ? "lat" : "bw", ctl_op_name(ss->t.op),
        (unsigned long long)ss->t.size, ss->t.qps, ss->s.dev.name, port,
        ss->s.dev.gid_index);
}

static void do_connect(struct session *ss, struct ctl_msg *m)
{
  struct verbs_endpoint ep;
  uint32_t qpn[VERBS_MAX_QPS], psn[VERBS_MAX_QPS];
  enum verbs_code rc;

  if(!ss->opened || ss->connected) {
    reply_err(ss, VERBS_EINVAL, "CONNECT out of order");
    return;
  }
  if(ctl_parse_endpoint(m, &ep, qpn, psn, ss->s.nqp)) {
    reply_err(ss, VERBS_EINVAL, "CONNECT: bad endpoint");
    return;
  }
  rc = side_connect(&ss->s, &ep, qpn, psn);
  if(!rc && ss->t.validate)
    side_fill(&ss->s, ss->t.size);
  if(!rc && ss->t.op == VERBS_OP_SEND)
    rc = bw_prepost(&ss->s, &ss->t);
  if(rc) {
    reply_err(ss, rc, verbs_errmsg());
    return;
  }
  ss->connected = 1;
  (void)ctl_send(ss->c.fd, 2000, "CONNECTED");
}

static void do_go(struct session *ss)
{
  if(!ss->connected || ss->running) {
    reply_err(ss, VERBS_EINVAL, "GO out of order");
    return;
  }
  ss->stop = 0;
  if(pthread_create(&ss->th, NULL, far_end, ss)) {
    reply_err(ss, VERBS_ESYS, "cannot start the far-end thread");
    return;
  }
  ss->running = 1;
  (void)ctl_send(ss->c.fd, 2000, "RUNNING");
}

static void do_done(struct session *ss)
{
  struct verbs_outcome *o = &ss->out;
  char err[600] = "";

  if(!ss->running) {
    reply_err(ss, VERBS_EINVAL, "DONE before GO");
    return;
  }
  ss->stop = 1;
  pthread_join(ss->th, NULL);
  ss->running = 0;
  o->mismatch_at = -1;
  if(ss->t.validate && !ss->loop_rc && ss->t.op != VERBS_OP_READ &&
     !ss->t.active)
    side_check(&ss->s, ss->t.size, 1, o);
  if(ss->loop_rc) {
    snprintf(err, sizeof(err), " error=%s", ss->loop_err);
    for(char *p = err + 7; *p; p++)
      if(*p == ' ')
        *p = '\x1f';
  }
  if(o->mismatch_at >= 0)
    snprintf(err + strlen(err), sizeof(err) - strlen(err), " mismatch=%lld",
             (long long)o->mismatch_at);
  (void)ctl_send(ss->c.fd, 2000, "RESULT msgs=%llu bytes=%llu recvs=%llu "
                 "t_first=%llu t_last=%llu cpu_s=%.6f peak=%.6f valid=%d%s",
                 (unsigned long long)o->msgs, (unsigned long long)o->bytes,
                 (unsigned long long)o->recvs,
                 (unsigned long long)o->t_first_ns,
                 (unsigned long long)o->t_last_ns, o->cpu_s, o->peak_gbps,
                 o->validated, err);
  if(o->mismatch_at >= 0)
    logf_(ss->o, "%s: data mismatch at byte %lld", ss->who,
          (long long)o->mismatch_at);
}

/* One control connection, in the forked child. */
static int session(const struct verbs_serve_opts *o, int fd, const char *who)
{
  struct session ss;
  struct ctl_msg m;
  int idle_ms = (int)(o->idle_timeout_s * 1000);

  memset(&ss, 0, sizeof(ss));
  ss.o = o;
  ss.c.fd = fd;
  snprintf(ss.who, sizeof(ss.who), "%s", who);
  if(ctl_recv(&ss.c, &m, 5000) || strcmp(m.verb, "HELLO")) {
    logf_(o, "%s: no HELLO, closed", who);
    return 1;
  }
  if(!ctl_get(&m, "token") || !ctl_token_eq(ctl_get(&m, "token"),
                                            o->token)) {
    (void)ctl_send(fd, 2000, "ERR code=EPEER msg=authentication\x1f"
                   "failed:\x1fwrong\x1for\x1fmissing\x1ftoken");
    logf_(o, "%s: refused: wrong or missing token", who);
    return 1;
  }
  {
    char host[64] = "?";
    (void)gethostname(host, sizeof(host) - 1);
    (void)ctl_send(fd, 2000, "OK agent=%s proto=%d", host, CTL_PROTO);
  }
  logf_(o, "%s: authenticated", who);
  for(;;) {
    if(ctl_recv(&ss.c, &m, idle_ms)) {
      logf_(o, "%s: %s", who, errno == ETIMEDOUT ? "idle timeout"
            : "connection closed");
      break;
    }
    if(!strcmp(m.verb, "SETUP"))
      do_setup(&ss, &m);
    else if(!strcmp(m.verb, "CONNECT"))
      do_connect(&ss, &m);
    else if(!strcmp(m.verb, "GO"))
      do_go(&ss);
    else if(!strcmp(m.verb, "DONE"))
      do_done(&ss);
    else if(!strcmp(m.verb, "PING"))   /* now=: clock offset (incast) */
      (void)ctl_send(fd, 2000, "PONG now=%llu",
                     (unsigned long long)strata_now_ns());
    else if(!strcmp(m.verb, "BYE"))
      break;
    else
      reply_err(&ss, VERBS_EINVAL, "unknown request");
  }
  if(ss.running) {
    ss.stop = 1;
    pthread_join(ss.th, NULL);
  }
  outcome_free(&ss.out);
  side_close(&ss.s);
  return 0;
}

enum verbs_code verbs_serve(const struct verbs_serve_opts *o)
{
  int lfd, served = 0;

  if(!o->token || !*o->token)
    return verbs_fail(VERBS_EINVAL, "serve: no token: refusing to serve");
  lfd = ctl_listen(o->listen, o->listen_port);
  if(lfd < 0)
    return VERBS_ESYS;
  logf_(o, "listening on %s:%d", o->listen ? o->listen : "*",
        o->listen_port);
  if(o->ready_fd >= 0) {
    (void)!write(o->ready_fd, "listening\n", 10);
    close(o->ready_fd);
  }
  while(!strata_stop_flag) {
    struct pollfd p = {lfd, POLLIN, 0};
    struct sockaddr_storage sa;
    socklen_t sl = sizeof(sa);
    char who[80] = "?";
    int fd;
    pid_t pid;

    while(waitpid(-1, NULL, WNOHANG) > 0)
      ;
    if(poll(&p, 1, 200) <= 0)
      continue;
    fd = accept(lfd, (struct sockaddr *)&sa, &sl);
    if(fd < 0)
      continue;
    if(sa.ss_family == AF_INET) {
      struct sockaddr_in *in = (struct sockaddr_in *)&sa;
      char a[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
      snprintf(who, sizeof(who), "%s:%d", a, ntohs(in->sin_port));
    }
    pid = fork();
    if(pid == 0) {
      int rc;
      close(lfd);
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      alarm((unsigned)o->session_timeout_s);
      rc = session(o, fd, who);
      close(fd);
      _exit(rc);
    }
    close(fd);
    if(pid < 0)
      logf_(o, "%s: fork: %s", who, strerror(errno));
    served++;
    if(o->max_sessions > 0 && served >= o->max_sessions)
      break;
  }
  close(lfd);
  while(wait(NULL) > 0)
    ;
  logf_(o, "stopped after %d session%s", served, served == 1 ? "" : "s");
  return VERBS_OK;
}
