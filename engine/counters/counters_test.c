/*
 * counters_test.c - unit tests for the counters core: the Prometheus
 * parser on a real Ceph mgr exposition and on hand-written tricky and
 * malformed texts; the /proc parsers on a recorded H200 node; the RDMA
 * sysfs reader on a tree of rxe counter names; rate and CPU percentage
 * math; the sampler (bounded series) on a static tree.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "counters.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= \
  1e-9 * (fabs((double)(b)) + 1))

static char *slurp(const char *rel, size_t *len)
{
  char path[512], *buf = NULL;
  size_t cap = 0, n = 0;
  snprintf(path, sizeof(path), "%s/%s", FIXTURES, rel);
  if(ctr_read_file(path, &buf, &cap, &n)) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  if(len)
    *len = n;
  return buf;
}

static const struct prom_sample *find(const struct prom_doc *d,
                                      const char *key)
{
  char k[1024];
  for(size_t i = 0; i < d->n; i++) {
    prom_key(&d->s[i], k, sizeof(k));
    if(!strcmp(k, key))
      return &d->s[i];
  }
  fprintf(stderr, "no sample %s\n", key);
  return NULL;
}

static const char *ftype(const struct prom_doc *d,
                         const struct prom_sample *s)
{
  return s && s->family >= 0 && d->fams[s->family].type
         ? d->fams[s->family].type : "";
}

static void test_prom_tricky(void)
{
  size_t len;
  char *t = slurp("prom/tricky.txt", &len), err[256];
  struct prom_doc d;
  const struct prom_sample *s;
  int rc = prom_parse(t, len, &d, err, sizeof(err));
  CHECK(rc == 0);
  if(rc)
    fprintf(stderr, "tricky: %s\n", err);
  CHECK(d.n == 19);
  s = find(&d, "http_requests_total{code=\"200\",method=\"post\"}");
  CHECK(s && s->value == 1027 && s->has_ts && s->ts_ms == 1395066363000);
  CHECK(s && !strcmp(ftype(&d, s), "counter"));
  CHECK(s && !strcmp(d.fams[s->family].help,
                     "The total number of HTTP requests.\nSecond line "
                     "with a \\ backslash."));
  s = find(&d, "http_requests_total{code=\"500\",method=\"get\"}");
  CHECK(s && s->value == 7 && !s->has_ts && s->nlabels == 2);
  s = &d.s[3];
  CHECK(!strcmp(s->name, "msdos_file_access_time_seconds"));
  CHECK(s->nlabels == 2 && !strcmp(s->labels[0].value, "C:\\DIR\\FILE.TXT"));
  CHECK(s->nlabels == 2 &&
        !strcmp(s->labels[1].value, "Cannot find file:\n\"FILE.TXT\""));
  CHECK(NEAR(s->value, 1.458255915e9) && !strcmp(ftype(&d, s), "gauge"));
  CHECK(!prom_is_counter(&d, s));
  s = find(&d, "something_weird{problem=\"division by zero\"}");
  CHECK(s && isinf(s->value) && s->value > 0 && s->ts_ms == -3982045);
  s = find(&d, "negative_infinity");
  CHECK(s && isinf(s->value) && s->value < 0);
  s = find(&d, "not_a_number");
  CHECK(s && isnan(s->value));
  s = find(&d, "colon:in:name");
  CHECK(s && NEAR(s->value, 1e-3));
  s = find(&d, "http_request_duration_seconds_bucket{le=\"+Inf\"}");
  CHECK(s && s->value == 144320 && !strcmp(ftype(&d, s), "histogram"));
  CHECK(s && prom_is_counter(&d, s));
  s = find(&d, "rpc_duration_seconds{quantile=\"0.99\"}");
  CHECK(s && !strcmp(ftype(&d, s), "summary") && !prom_is_counter(&d, s));
  s = find(&d, "rpc_duration_seconds_count");
  CHECK(s && s->value == 2693 && prom_is_counter(&d, s));
  s = find(&d, "indented_sample{a=\"b\"}");
  CHECK(s && s->value == 5);
  {
    /* the key escapes what the parser unescaped */
    char k[256];
    prom_key(&d.s[3], k, sizeof(k));
    CHECK(strstr(k, "path=\"C:\\\\DIR\\\\FILE.TXT\"") != NULL);
    CHECK(strstr(k, "file:\\n\\\"FILE") != NULL);
    CHECK(prom_key(&d.s[3], k, 8) > 8 && strlen(k) == 7);
  }
  prom_doc_free(&d);
  free(t);
}

static void test_prom_ceph(void)
{
  size_t len;
  char *t = slurp("prom/ceph-mgr-16.2.15.txt", &len), err[256];
  struct prom_doc d;
  const struct prom_sample *s;
  CHECK(prom_parse(t, len, &d, err, sizeof(err)) == 0);
  CHECK(d.n == 581 && d.nfam == 299);  /* 304 TYPE lines, 5 repeated */
  s = find(&d, "ceph_rgw_req{instance_id=\"4114\"}");
  CHECK(s && s->value == 1 && !strcmp(ftype(&d, s), "counter"));
  s = find(&d, "ceph_osd_op_r_latency_count{ceph_daemon=\"osd.0\"}");
  CHECK(s && s->value == 292 && prom_is_counter(&d, s));
  for(size_t i = 0; i < d.n; i++)
    if(!strcmp(d.s[i].name, "ceph_rgw_metadata")) {
      CHECK(d.s[i].nlabels == 4 && strstr(d.s[i].labels[2].value,
                                          "pacific (stable)"));
      CHECK(!strcmp(ftype(&d, &d.s[i]), "untyped"));
    }
  prom_doc_free(&d);
  free(t);
}

static void test_prom_errors(void)
{
  static const struct {
    const char *file, *want;
  } bad[] = {
    { "prom/bad-escape.txt", "line 2: bad_escape: label 'path': invalid "
                             "escape '\\q'" },
    { "prom/html.txt", "line 1: expected a metric name" },
    { "prom/missing-value.txt", "line 3: missing_value: missing or invalid"
                                " value" },
    { "prom/unterminated.txt", "line 2: unterminated: label 'a': "
                               "unterminated value" },
    { "prom/bad-type.txt", "line 3: # TYPE b: unknown type 'counterish'" },
    { "prom/trailing.txt", "line 1: a: trailing text after the timestamp" },
    { "prom/bad-label-name.txt", "line 1: a: expected a label name" },
    { "prom/hex-value.txt", "line 1: hex_value: missing or invalid value" },
  };
  for(size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    size_t len;
    char *t = slurp(bad[i].file, &len), err[256] = "";
    struct prom_doc d;
    int rc = prom_parse(t, len, &d, err, sizeof(err));
    CHECK(rc == -1);
    CHECKF(!strncmp(err, bad[i].want, strlen(bad[i].want)),
           "%s: got '%s', want '%s'", bad[i].file, err, bad[i].want);
    prom_doc_free(&d);
    free(t);
  }
  {
    size_t len;
    char *t = slurp("prom/crlf.txt", &len), err[256];
    struct prom_doc d;
    CHECK(prom_parse(t, len, &d, err, sizeof(err)) == 0 && d.n == 2);
    CHECK(d.n == 2 && d.s[1].value == 3 && !strcmp(ftype(&d, &d.s[1]),
                                                   "gauge"));
    prom_doc_free(&d);
    free(t);
  }
  {
    struct prom_doc d;
    char err[256];
    CHECK(prom_parse("a 1\nb\0 2\n", 9, &d, err, sizeof(err)) == -1);
    CHECK(!strncmp(err, "line 2: NUL", 11));
    prom_doc_free(&d);
    CHECK(prom_parse("", 0, &d, err, sizeof(err)) == 0 && d.n == 0);
    prom_doc_free(&d);
  }
}

static double get(const struct ctr_set *s, const char *name)
{
  long i = ctr_set_find(s, name);
  CHECKF(i >= 0, "no counter %s", name);
  if(i < 0)
    return NAN;
  return s->vals[i];
}

static void test_procfs(void)
{
  struct ctr_set s;
  char *t;
  ctr_set_init(&s);
  /* recorded: cpu  1179 0 1441 107706 206 0 45 22 0 0 (see the file) */
  t = slurp("gpu-node/proc/stat", NULL);
  {
    unsigned long long v[8];
    CHECK(sscanf(t, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                 &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8);
    CHECK(ctr_parse_stat(t, 100, CTR_SRC_CPU | CTR_SRC_CTXT, 1, &s) == 0);
    CHECK(NEAR(get(&s, "cpu.total.user"), (double)v[0] / 100));
    CHECK(NEAR(get(&s, "cpu.total.idle"), (double)v[3] / 100));
    CHECK(NEAR(get(&s, "cpu.total.steal"), (double)v[7] / 100));
  }
  CHECK(ctr_set_find(&s, "cpu.cpu15.softirq") >= 0);
  CHECK(ctr_set_find(&s, "cpu.cpu16.user") < 0);
  CHECK(s.n == 17 * 8 + 3 && get(&s, "ctxt") > 0 && get(&s, "intr.total") > 0);
  ctr_set_clear(&s);
  CHECK(ctr_parse_stat(t, 100, CTR_SRC_CTXT, 0, &s) == 0 && s.n == 3);
  ctr_set_clear(&s);
  CHECK(ctr_parse_stat("garbage\n", 100, CTR_SRC_CPU, 0, &s) == -1);
  CHECK(ctr_parse_stat("cpu 1 2\n", 100, CTR_SRC_CPU, 0, &s) == -1);
  ctr_set_clear(&s);
  free(t);

  t = slurp("gpu-node/proc/softirqs", NULL);
  CHECK(ctr_parse_softirqs(t, &s) == 0 && s.n == 10);
  CHECK(get(&s, "softirq.NET_RX") >= 0 && get(&s, "softirq.TIMER") > 0);
  ctr_set_clear(&s);
  free(t);
  CHECK(ctr_parse_softirqs("", &s) == -1);

  t = slurp("gpu-node/proc/interrupts", NULL);
  CHECK(ctr_parse_interrupts(t, &s) == 0);
  CHECK(get(&s, "intr.LOC") > 0 && get(&s, "intr.NMI") >= 0);
  {
    int named = 0;
    for(size_t i = 0; i < s.n; i++) {
      const char *n = s.names[i];
      named += !strncmp(n, "intr.", 5) && strchr(n + 5, '.') != NULL;
      CHECK(strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789_-.") == strlen(n));
    }
    CHECK(named > 10);
  }
  ctr_set_clear(&s);
  free(t);
  CHECK(ctr_parse_interrupts(
          "           CPU0       CPU1\n"
          "  24:         10          5  IO-APIC   5-edge      ACPI:Ged\n"
          " 130:          1          2  PCI-MSI 1-edge "
          "mlx5_comp0@pci:0000:17:00.0\n"
          " NMI:          3          4   Non-maskable interrupts\n",
          &s) == 0);
  CHECK(get(&s, "intr.24.ACPI_Ged") == 15);
  CHECK(get(&s, "intr.130.mlx5_comp0_pci_0000_17_00_0") == 3);
  CHECK(get(&s, "intr.NMI") == 7);
  ctr_set_clear(&s);

  t = slurp("gpu-node/proc/net/dev", NULL);
  CHECK(ctr_parse_netdev(t, &s) == 0 && s.n == 4 * 8);
  CHECK(get(&s, "net.eth0.rx_bytes") > 0 && get(&s, "net.lo.tx_drop") == 0);
  ctr_set_clear(&s);
  free(t);
  CHECK(ctr_parse_netdev("h1\nh2\n  eth0: 1 2 3\n", &s) == -1);
  ctr_set_clear(&s);

  t = slurp("gpu-node/proc/net/snmp", NULL);
  CHECK(ctr_parse_snmp(t, &s) == 0);
  CHECK(get(&s, "tcp.RetransSegs") >= 0 && get(&s, "tcp.InSegs") > 0);
  CHECK(s.kinds[ctr_set_find(&s, "tcp.CurrEstab")] == CTR_GAUGE);
  ctr_set_clear(&s);
  free(t);

  CHECK(ctr_read_rdma(FIXTURES "/rdma-node", &s) == 0 && s.n == 20);
  CHECK(get(&s, "rdma.rxe0.1.retry_rnr_exceeded_err") == 5);
  CHECK(get(&s, "rdma.rxe0.1.port_rcv_data") == 2000);
  CHECK(ctr_set_find(&s, "rdma.rxe0.1.lifespan") < 0);
  ctr_set_clear(&s);
  CHECK(ctr_read_rdma(FIXTURES "/gpu-node", &s) == 0 && s.n == 0);
  ctr_set_free(&s);
}

static void test_math(void)
{
  double d[8] = { 30, 10, 20, 30, 10, 0, 0, 0 };
  double busy, user, sys, iow, irq, sirq;
  ctr_cpu_pct(d, &busy, &user, &sys, &iow, &irq, &sirq);
  CHECK(NEAR(busy, 60) && NEAR(user, 40) && NEAR(sys, 20) && NEAR(iow, 10));
  memset(d, 0, sizeof(d));
  ctr_cpu_pct(d, &busy, &user, &sys, &iow, &irq, &sirq);
  CHECK(busy == 0 && user == 0);
  CHECK(NEAR(ctr_rate(100, 300, 2), 100));
  CHECK(NEAR(ctr_rate(500, 20, 2), 10));  /* reset: counts from zero */
  CHECK(isnan(ctr_rate(1, 2, 0)));
  {
    char out[128];
    http_safe_url("http://user:s3cret@host:9283/metrics?x=1", out,
                  sizeof(out));
    CHECK(!strcmp(out, "http://host:9283/metrics?x=1"));
    http_safe_url("https://host/a@b", out, sizeof(out));
    CHECK(!strcmp(out, "https://host/a@b"));
  }
}

/* The sampler on a static tree: counters do not move, the series stays
 * bounded and spans the run. */
static void test_sampler_static(void)
{
  struct ctr_opts o;
  struct ctr_sampler *s;
  struct ctr_result r;
  char err[256];
  memset(&o, 0, sizeof(o));
  o.interval_s = 0.01;
  o.sources = CTR_SRC_CPU | CTR_SRC_NET | CTR_SRC_RDMA | CTR_SRC_INTR;
  o.root = FIXTURES "/gpu-node";
  o.max_samples = 16;
  o.intr_top = 3;
  CHECK(ctr_sampler_start(&o, &s, err, sizeof(err)) == 0);
  usleep(400000);
  ctr_sampler_stop(s);
  ctr_sampler_result(s, &r);
  CHECK(r.duration_s >= 0.39 && r.duration_s < 2);
  CHECK(r.ticks >= 20);
  CHECK(r.nt >= 7 && r.nt <= 15);  /* halved at least once */
  CHECK(r.nt && r.t[r.nt - 1] > 0.38);
  {
    size_t kept_intr = 0;
    int saw_busy = 0;
    for(size_t i = 0; i < r.n; i++) {
      if(!strcmp(r.names[i], "cpu.total.busy_pct")) {
        saw_busy = 1;
        CHECK(r.kinds[i] == CTR_PCT && r.delta[i] == 0);
      }
      if(!strncmp(r.names[i], "intr.", 5) && r.keep[i])
        kept_intr++;
      if(r.kinds[i] == CTR_COUNTER)
        CHECK(r.delta[i] == 0 && r.rate[i] == 0 && r.max[i] == 0);
    }
    CHECK(saw_busy);
    CHECK(kept_intr == 0);  /* nothing moved: no top movers */
  }
  ctr_sampler_free(&s);
  CHECK(s == NULL);
  o.root = "/nonexistent";
  CHECK(ctr_sampler_start(&o, &s, err, sizeof(err)) == -1);
  CHECK(strstr(err, "/nonexistent/proc/stat: No such file") != NULL);
}

int main(void)
{
  test_prom_tricky();
  test_prom_ceph();
  test_prom_errors();
  test_procfs();
  test_math();
  test_sampler_static();
  return check_result("counters_test");
}
