/*
 * counters_test.c - unit tests for the counters core: the /proc
 * parsers on a recorded H200 node (and a second snapshot into the same
 * set, which reuses its names); the RDMA
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

static double get(const struct ctr_set *s, const char *name)
{
  long i = ctr_set_find(s, name);
  if(i < 0) {
    fprintf(stderr, "no counter %s\n", name);
    check_failures++;
    return NAN;
  }
  return s->vals[i];
}

static void test_procfs(void)
{
  struct ctr_set s;
  char *t;
  ctr_set_init(&s);
  /* recorded: cpu  1179 0 1441 107706 206 0 45 22 0 0 (see the file) */
  t = check_fixture(FIXTURES, "gpu-node/proc/stat", NULL);
  {
    unsigned long long v[8];
    CHECK(sscanf(t, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                 &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8);
    CHECK(ctr_parse_stat(t, 100, CTR_STAT_CPU | CTR_STAT_CTXT, 1, &s) == 0);
    CHECK(check_near(get(&s, "cpu.total.user"), (double)v[0] / 100));
    CHECK(check_near(get(&s, "cpu.total.idle"), (double)v[3] / 100));
    CHECK(check_near(get(&s, "cpu.total.steal"), (double)v[7] / 100));
  }
  CHECK(ctr_set_find(&s, "cpu.cpu15.softirq") >= 0);
  CHECK(ctr_set_find(&s, "cpu.cpu16.user") < 0);
  CHECK(s.n == 17 * 8 + 3 && get(&s, "ctxt") > 0 && get(&s, "intr.total") > 0);
  ctr_set_clear(&s);
  CHECK(ctr_parse_stat(t, 100, CTR_STAT_CTXT, 0, &s) == 0 && s.n == 3);
  ctr_set_clear(&s);
  CHECK(ctr_parse_stat("garbage\n", 100, CTR_STAT_CPU, 0, &s) == -1);
  CHECK(ctr_parse_stat("cpu 1 2\n", 100, CTR_STAT_CPU, 0, &s) == -1);
  ctr_set_clear(&s);
  free(t);

  t = check_fixture(FIXTURES, "gpu-node/proc/softirqs", NULL);
  CHECK(ctr_parse_softirqs(t, &s) == 0 && s.n == 10);
  CHECK(get(&s, "softirq.NET_RX") >= 0 && get(&s, "softirq.TIMER") > 0);
  ctr_set_clear(&s);
  free(t);
  CHECK(ctr_parse_softirqs("", &s) == -1);

  t = check_fixture(FIXTURES, "gpu-node/proc/interrupts", NULL);
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

  t = check_fixture(FIXTURES, "gpu-node/proc/net/dev", NULL);
  CHECK(ctr_parse_netdev(t, &s) == 0 && s.n == 4 * 8);
  CHECK(get(&s, "net.eth0.rx_bytes") > 0 && get(&s, "net.lo.tx_drop") == 0);
  ctr_set_clear(&s);
  free(t);
  CHECK(ctr_parse_netdev("h1\nh2\n  eth0: 1 2 3\n", &s) == -1);
  ctr_set_clear(&s);

  t = check_fixture(FIXTURES, "gpu-node/proc/net/snmp", NULL);
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
  CHECK(check_near(busy, 60) && check_near(user, 40) && check_near(sys, 20) && check_near(iow, 10));
  memset(d, 0, sizeof(d));
  ctr_cpu_pct(d, &busy, &user, &sys, &iow, &irq, &sirq);
  CHECK(busy == 0 && user == 0);
  CHECK(check_near(ctr_rate(100, 300, 2), 100));
  CHECK(check_near(ctr_rate(500, 20, 2), 10));  /* reset: counts from zero */
  CHECK(isnan(ctr_rate(1, 2, 0)));
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
  /* 1.2 s at 10 ms is ~120 ticks; 20 leaves room for a loaded host (a
   * sanitizer build on two busy cores got fewer than 20 in 0.4 s) */
  usleep(1200000);
  ctr_sampler_stop(s);
  ctr_sampler_result(s, &r);
  CHECKF(r.duration_s >= 1.19 && r.duration_s < 5, "%.3f s", r.duration_s);
  CHECKF(r.ticks >= 20, "%zu ticks", r.ticks);
  CHECK(r.nt >= 7 && r.nt <= 15);  /* halved at least once */
  CHECK(r.nt && r.t[r.nt - 1] > 1.0);
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

/* A reader keeps its files open; a second snapshot into the cleared set
 * gives the same names in the same places without allocating them. */
static void test_reader(void)
{
  struct ctr_reader *r = NULL;
  struct ctr_set s;
  char err[256];
  char *first[1024];
  size_t n1;
  ctr_set_init(&s);
  CHECK(ctr_reader_open(FIXTURES "/gpu-node", CTR_SRC_CPU | CTR_SRC_SOFTIRQ |
                        CTR_SRC_INTR | CTR_SRC_CTXT | CTR_SRC_NET |
                        CTR_SRC_TCP | CTR_SRC_RDMA, 1, NULL, &r, err,
                        sizeof(err)) == 0);
  CHECK(r && ctr_reader_read(r, &s, err, sizeof(err)) == 0);
  n1 = s.n;
  CHECK(n1 > 200 && n1 <= 1024);
  for(size_t i = 0; i < n1 && i < 1024; i++)
    first[i] = s.names[i];
  ctr_set_clear(&s);
  CHECK(r && ctr_reader_read(r, &s, err, sizeof(err)) == 0 && s.n == n1);
  for(size_t i = 0; i < n1 && i < 1024 && i < s.n; i++)
    CHECK(s.names[i] == first[i]);  /* the same allocation: reused */
  CHECK(check_near(get(&s, "cpu.cpu15.softirq"), 0.0) ||
        get(&s, "cpu.cpu15.softirq") > 0);
  ctr_reader_close(&r);
  CHECK(r == NULL);
  CHECK(ctr_reader_open(FIXTURES "/no-such-root", CTR_SRC_CPU, 0, NULL, &r,
                        err, sizeof(err)) == -1 &&
        strstr(err, "no-such-root/proc/stat") != NULL);
  ctr_set_free(&s);
}

/* The C callers' bits (counters.h) are the list's (sources.def): each
 * name's, an alias's the same, the names in the message in list order. */
static void test_source_bits(void)
{
  static const struct { const char *name; unsigned bit; } b[] = {
    { "cpu", CTR_SRC_CPU }, { "ctxt", CTR_SRC_CTXT },
    { "softirq", CTR_SRC_SOFTIRQ }, { "interrupts", CTR_SRC_INTR },
    { "intr", CTR_SRC_INTR }, { "net", CTR_SRC_NET }, { "tcp", CTR_SRC_TCP },
    { "rdma", CTR_SRC_RDMA }, { "ethtool", CTR_SRC_ETHTOOL },
    { "gpu", CTR_SRC_GPU }, { "disk", CTR_SRC_DISK },
  };
  char names[256];
  for(size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
    if(ctr_source_bit(b[i].name) != b[i].bit) {
      fprintf(stderr, "source %s: bit %u, counters.h says %u\n", b[i].name,
              ctr_source_bit(b[i].name), b[i].bit);
      check_failures++;
    }
  CHECK(ctr_source_bit("gpus") == 0 && ctr_source_bit(NULL) == 0);
  CHECK(ctr_source_default() == (CTR_SRC_CPU | CTR_SRC_CTXT |
        CTR_SRC_SOFTIRQ | CTR_SRC_INTR | CTR_SRC_NET | CTR_SRC_TCP |
        CTR_SRC_RDMA | CTR_SRC_DISK));
  ctr_source_names(names, sizeof(names));
  CHECK(!strncmp(names, "cpu, ctxt, softirq, interrupts, net, tcp, rdma, "
                 "ethtool, gpu, disk", 66));
}

int main(void)
{
  test_source_bits();
  test_procfs();
  test_reader();
  test_math();
  test_sampler_static();
  if(check_failures) {
    fprintf(stderr, "counters_test: %d check_failures\n", check_failures);
    return 1;
  }
  printf("counters_test: ok\n");
  return 0;
}
