/*
 * prom_test.c - unit tests for engine/prom: the exposition parser on a
 * real Ceph mgr exposition (fixtures/host/prom) and on hand-written
 * tricky and malformed texts; the URL redaction of the HTTP layer.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "prom.h"
#include "strata.h"

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
  char *t = check_fixture(FIXTURES, "prom/tricky.txt", &len), err[256];
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
  CHECK(check_near(s->value, 1.458255915e9) && !strcmp(ftype(&d, s), "gauge"));
  CHECK(!prom_is_counter(&d, s));
  s = find(&d, "something_weird{problem=\"division by zero\"}");
  CHECK(s && isinf(s->value) && s->value > 0 && s->ts_ms == -3982045);
  s = find(&d, "negative_infinity");
  CHECK(s && isinf(s->value) && s->value < 0);
  s = find(&d, "not_a_number");
  CHECK(s && isnan(s->value));
  s = find(&d, "colon:in:name");
  CHECK(s && check_near(s->value, 1e-3));
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
  char *t = check_fixture(FIXTURES, "prom/ceph-mgr-16.2.15.txt", &len), err[256];
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
    char *t = check_fixture(FIXTURES, bad[i].file, &len), err[256] = "";
    struct prom_doc d;
    int rc = prom_parse(t, len, &d, err, sizeof(err));
    CHECK(rc == -1);
    if(strncmp(err, bad[i].want, strlen(bad[i].want))) {
      check_failures++;
      fprintf(stderr, "%s: got '%s', want '%s'\n", bad[i].file, err,
              bad[i].want);
    }
    prom_doc_free(&d);
    free(t);
  }
  {
    size_t len;
    char *t = check_fixture(FIXTURES, "prom/crlf.txt", &len), err[256];
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

static void test_url(void)
{
  char out[128];
  http_safe_url("http://user:s3cret@host:9283/metrics?x=1", out,
                sizeof(out));
  CHECK(!strcmp(out, "http://host:9283/metrics?x=1"));
  http_safe_url("https://host/a@b", out, sizeof(out));
  CHECK(!strcmp(out, "https://host/a@b"));
}

static int dbl_cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* prom_test --bench N: the parser's own figure (docs/counters.md): N
 * parses of the Ceph mgr fixture, each timed, after 50 untimed; then the
 * keys of every sample (what the sampler builds).  min / median / max us. */
static int bench(int n)
{
  size_t len;
  char *t = check_fixture(FIXTURES, "prom/ceph-mgr-16.2.15.txt", &len), err[256], k[1024];
  double *pt = calloc((size_t)n, sizeof(double));
  double *kt = calloc((size_t)n, sizeof(double));
  if(!pt || !kt || n < 1)
    return 2;
  for(int i = -50; i < n; i++) {
    struct prom_doc d;
    uint64_t t0 = strata_now_ns();
    if(prom_parse(t, len, &d, err, sizeof(err)))
      return 1;
    uint64_t t1 = strata_now_ns();
    for(size_t j = 0; j < d.n; j++)
      prom_key(&d.s[j], k, sizeof(k));
    uint64_t t2 = strata_now_ns();
    prom_doc_free(&d);
    uint64_t t3 = strata_now_ns();
    if(i >= 0) {
      pt[i] = (double)(t1 - t0 + t3 - t2) / 1e3;  /* parse + free */
      kt[i] = (double)(t2 - t1) / 1e3;
    }
  }
  qsort(pt, (size_t)n, sizeof(double), dbl_cmp);
  qsort(kt, (size_t)n, sizeof(double), dbl_cmp);
  printf("parse+free of %zu bytes: %.1f / %.1f / %.1f us (min / median / "
         "max of %d); keys: %.1f / %.1f / %.1f us\n", len, pt[0],
         pt[n / 2], pt[n - 1], n, kt[0], kt[n / 2], kt[n - 1]);
  free(pt);
  free(kt);
  free(t);
  return 0;
}

int main(int argc, char **argv)
{
  if(argc == 3 && !strcmp(argv[1], "--bench"))
    return bench(atoi(argv[2]));
  test_prom_tricky();
  test_prom_ceph();
  test_prom_errors();
  test_url();
  if(check_failures)
    fprintf(stderr, "%d check(s) failed\n", check_failures);
  return check_failures ? 1 : 0;
}
