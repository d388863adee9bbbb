/*
 * verbs_test.c - hardware-free checks of the verbs core: the control
 * protocol codec, the agent's authentication over a real TCP socket, GID
 * and MTU helpers, line rates, slot sharing and the data pattern.
 * (Everything that needs a device runs in the Soft-RoCE guest: tests/rxe.)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "check.h"
#include "serve.h"

static void test_parse(void)
{
  struct ctl_msg m;
  uint64_t u;
  int i;
  double d;
  uint32_t l[8];

  snprintf(m.line, sizeof(m.line), "SETUP kind=bw size=65536 gidx=900 "
           "neg=-3 f=0.25 qpn=17,18,0x20 port=1");
  CHECK(ctl_parse(&m) == 0);
  CHECK(!strcmp(m.verb, "SETUP") && m.n == 7);
  CHECK(!strcmp(ctl_get(&m, "kind"), "bw"));
  CHECK(ctl_get_u64(&m, "size", &u) == 0 && u == 65536);
  CHECK(ctl_get_int(&m, "gidx", &i) == 0 && i == 900);
  CHECK(ctl_get_int(&m, "neg", &i) == 0 && i == -3);
  CHECK(ctl_get_u64(&m, "neg", &u) == -1);
  CHECK(ctl_get_dbl(&m, "f", &d) == 0 && d == 0.25);
  CHECK(ctl_get_list(&m, "qpn", l, 8) == 3 && l[2] == 0x20);
  CHECK(ctl_get_list(&m, "qpn", l, 2) == -1);
  CHECK(ctl_get(&m, "absent") == NULL);
  CHECK(ctl_get_int(&m, "kind", &i) == -1);
  snprintf(m.line, sizeof(m.line), "SETUP novalue");
  CHECK(ctl_parse(&m) == -1);
  snprintf(m.line, sizeof(m.line), "   ");
  CHECK(ctl_parse(&m) == -1);
}

static void test_test_roundtrip(void)
{
  struct verbs_test t, u;
  struct ctl_msg m;
  char buf[1024], err[128];

  memset(&t, 0, sizeof(t));
  t.kind = VERBS_KIND_BW;
  t.op = VERBS_OP_SEND;
  t.size = 1 << 20;
  t.qps = 32;
  t.tx_depth = 128;
  t.rx_depth = 512;
  t.cq_mod = 100;
  t.iters = 5000;
  t.bidir = 1;
  t.validate = 1;
  t.timeout_s = 10;
  t.numa = -1;
  t.max_buffer = 1 << 26;
  t.qp_timeout = 20;
  t.retry_cnt = 6;
  CHECK(ctl_fmt_test(buf, sizeof(buf), &t) == 0);
  snprintf(m.line, sizeof(m.line), "SETUP %s", buf);
  CHECK(ctl_parse(&m) == 0);
  CHECK(ctl_parse_test(&m, &u, err, sizeof(err)) == 0);
  CHECK(u.op == t.op && u.size == t.size && u.qps == 32 &&
        u.tx_depth == 128 && u.rx_depth == 512 && u.iters == 5000 &&
        u.bidir && u.validate && u.numa == -1 && u.max_buffer == 1 << 26 &&
        u.mem == VERBS_MEM_HOST && u.dmabuf_fd == -1 && u.qp_timeout == 20 &&
        u.retry_cnt == 6);
  /* an engine from before qptimeout: the agent's default (0 -> 14) */
  snprintf(m.line, sizeof(m.line), "SETUP %s", buf);
  *strstr(m.line, " qptimeout=") = '\0';
  CHECK(ctl_parse(&m) == 0);
  CHECK(ctl_parse_test(&m, &u, err, sizeof(err)) == 0 && u.qp_timeout == 0);
  snprintf(m.line, sizeof(m.line), "SETUP %s", buf);
  memcpy(strstr(m.line, "qptimeout=20") + 10, "32", 2);
  CHECK(ctl_parse(&m) == 0);
  CHECK(ctl_parse_test(&m, &u, err, sizeof(err)) == -1);
  CHECK(strstr(err, "'qptimeout'") != NULL);
  /* retry: absent (an older engine) is the default, 8 is refused */
  snprintf(m.line, sizeof(m.line), "SETUP %s", buf);
  *strstr(m.line, " retry=") = '\0';
  CHECK(ctl_parse(&m) == 0);
  CHECK(ctl_parse_test(&m, &u, err, sizeof(err)) == 0 && u.retry_cnt == 0);
  snprintf(m.line, sizeof(m.line), "SETUP %s", buf);
  memcpy(strstr(m.line, "retry=6") + 6, "8", 1);
  CHECK(ctl_parse(&m) == 0);
  CHECK(ctl_parse_test(&m, &u, err, sizeof(err)) == -1);
  CHECK(strstr(err, "'retry'") != NULL);
  /* a bad field is named */
  snprintf(m.line, sizeof(m.line), "SETUP %s", buf);
  memcpy(strstr(m.line, "qps=32") + 4, "00", 2);   /* qps=00 -> 0 */
  CHECK(ctl_parse(&m) == 0);
  CHECK(ctl_parse_test(&m, &u, err, sizeof(err)) == -1);
  CHECK(strstr(err, "'qps'") != NULL);
}

static void test_cq_mod(void)
{
  /* perftest's 100 at small sizes; a completion every 4 MiB of all QPs */
  CHECK(verbs_default_cq_mod(4096, 1) == 100);
  CHECK(verbs_default_cq_mod(65536, 1) == 64);
  CHECK(verbs_default_cq_mod(65536, 4) == 16);
  CHECK(verbs_default_cq_mod(1048576, 1) == 4);
  CHECK(verbs_default_cq_mod(1048576, 4) == 1);
  CHECK(verbs_default_cq_mod(8388608, 8) == 1);
}

static void test_helpers(void)
{
  union ibv_gid g;
  char hex[33];
  struct ibv_port_attr pa;
  struct verbs_test t;

  CHECK(verbs_gid_from_hex("00000000000000000000ffff0a4d0001", &g) == 0);
  CHECK(verbs_gid_is_ipv4(&g));
  verbs_gid_hex(&g, hex);
  CHECK(!strcmp(hex, "00000000000000000000ffff0a4d0001"));
  CHECK(verbs_gid_from_hex("fe80", &g) == -1);
  CHECK(verbs_gid_from_hex("fe800000000000005c80b0fffecde146", &g) == 0);
  CHECK(!verbs_gid_is_ipv4(&g));
  CHECK(verbs_mtu_bytes(IBV_MTU_4096) == 4096);
  CHECK(verbs_mtu_bytes(IBV_MTU_1024) == 1024);
  memset(&pa, 0, sizeof(pa));
  pa.active_speed = 32;   /* EDR */
  pa.active_width = 2;    /* 4x */
  CHECK(verbs_port_rate_gbps(&pa) == 100.0);
  pa.active_speed = 128;  /* NDR */
  pa.active_width = 2;
  CHECK(verbs_port_rate_gbps(&pa) == 400.0);
  pa.active_speed = 1;    /* SDR 1x: what rxe reports */
  pa.active_width = 1;
  CHECK(verbs_port_rate_gbps(&pa) == 2.0);
  pa.active_speed = 3;
  CHECK(verbs_port_rate_gbps(&pa) == 0);
  memset(&t, 0, sizeof(t));
  t.size = 1 << 20;
  t.qps = 8;
  t.max_buffer = 4 << 20;
  CHECK(side_nslots(&t) == 2);
  t.max_buffer = 0;
  CHECK(side_nslots(&t) == 8);
  t.size = 1ull << 30;
  CHECK(side_nslots(&t) == 1);
  CHECK(side_pattern(1, 0, 0) != side_pattern(2, 0, 0));
  CHECK(side_pattern(1, 0, 5) != side_pattern(1, 1, 5));
  CHECK(ctl_token_eq("abc", "abc") && !ctl_token_eq("abc", "abd") &&
        !ctl_token_eq("abc", "abcd") && !ctl_token_eq("", ""));
  CHECK(verbs_fail(VERBS_EGID, "x %d", 3) == VERBS_EGID &&
        !strcmp(verbs_errmsg(), "x 3"));
  CHECK(!strcmp(verbs_strerror(VERBS_EPEER), "EPEER"));
}

/* The agent over real TCP: refused without the right token, named
 * errors for a device that is absent (no RDMA on the build machine). */
static void test_serve(void)
{
  struct verbs_serve_opts o;
  struct ctl_conn c;
  struct ctl_msg m;
  int port = 20000 + (int)(getpid() % 20000), pfd[2], fd;
  pid_t pid;
  char b[16];

  memset(&o, 0, sizeof(o));
  CHECK(verbs_serve(&o) == VERBS_EINVAL);    /* no token, no service */
  CHECK(pipe(pfd) == 0);
  o.listen = "127.0.0.1";
  o.listen_port = port;
  o.token = "tok-123";
  o.device = "nosuchdev0";
  o.port_num = 1;
  o.gid_index = -1;
  o.idle_timeout_s = 5;
  o.session_timeout_s = 10;
  o.max_sessions = 3;
  o.ready_fd = pfd[1];
  o.quiet = 1;
  pid = fork();
  if(pid == 0) {
    close(pfd[0]);
    _exit(verbs_serve(&o) == VERBS_OK ? 0 : 1);
  }
  close(pfd[1]);
  CHECK(read(pfd[0], b, sizeof(b)) > 0);   /* "listening" */
  close(pfd[0]);

  /* 1: wrong token */
  fd = ctl_connect("127.0.0.1", port, 2000);
  CHECK(fd >= 0);
  memset(&c, 0, sizeof(c));
  c.fd = fd;
  CHECK(ctl_send(fd, 1000, "HELLO proto=1 token=tok-124") == 0);
  CHECK(ctl_recv(&c, &m, 2000) == 0 && !strcmp(m.verb, "ERR"));
  CHECK(ctl_get(&m, "msg") && strstr(ctl_get(&m, "msg"), "token"));
  CHECK(ctl_recv(&c, &m, 2000) == -1 && errno == ECONNRESET);
  close(fd);

  /* 2: right token, then a device that does not exist */
  fd = ctl_connect("127.0.0.1", port, 2000);
  memset(&c, 0, sizeof(c));
  c.fd = fd;
  CHECK(ctl_send(fd, 1000, "HELLO proto=1 token=tok-123") == 0);
  CHECK(ctl_recv(&c, &m, 2000) == 0 && !strcmp(m.verb, "OK"));
  CHECK(ctl_send(fd, 1000, "GO") == 0);
  CHECK(ctl_recv(&c, &m, 2000) == 0 && !strcmp(m.verb, "ERR"));
  CHECK(ctl_send(fd, 1000, "SETUP kind=bw op=write size=4096 qps=1 depth=8 "
                 "rxdepth=0 cqmod=1 iters=1 duration=0 bidir=0 validate=0 "
                 "inline=0 timeout=1 mem=host hugepages=0 numa=-1 "
                 "maxbuf=0 dev=- port=1 gidx=-1") == 0);
  CHECK(ctl_recv(&c, &m, 5000) == 0 && !strcmp(m.verb, "ERR"));
  CHECK(m.n >= 1 && (!strcmp(m.val[0], "ENODEV")));
  CHECK(ctl_send(fd, 1000, "SETUP kind=bw op=fly") == 0);
  CHECK(ctl_recv(&c, &m, 2000) == 0 && !strcmp(m.verb, "ERR"));
  CHECK(ctl_get(&m, "msg") && strstr(ctl_get(&m, "msg"), "'op'"));
  CHECK(ctl_send(fd, 1000, "BYE") == 0);
  close(fd);

  /* 3: no HELLO at all: closed */
  fd = ctl_connect("127.0.0.1", port, 2000);
  memset(&c, 0, sizeof(c));
  c.fd = fd;
  CHECK(ctl_send(fd, 1000, "SETUP kind=bw") == 0);
  CHECK(ctl_recv(&c, &m, 7000) == -1);
  close(fd);

  {
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
  }
  /* nothing listens there any more */
  CHECK(ctl_connect("127.0.0.1", port, 1000) == -1);
  CHECK(strstr(verbs_errmsg(), "cannot connect") != NULL);
}

int main(void)
{
  signal(SIGPIPE, SIG_IGN);
  test_parse();
  test_test_roundtrip();
  test_helpers();
  test_cq_mod();
  test_serve();
  return check_result("verbs_test");
}
