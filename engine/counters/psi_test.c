/*
 * psi_test.c - the "psi" counter source (psi.c): a recorded
 * /proc/pressure (fixtures/host/psi-node, see its README) read through a
 * reader, the values as the files say; a tree without /proc/pressure
 * gives no series and no error; a line psi.rst does not describe is an
 * error naming the file; and the live host (or, on a kernel without PSI,
 * its absence).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "counters.h"

static unsigned psi_bit(void)
{
  return ctr_source_bit("psi");
}

static double get(const struct ctr_set *s, const char *name, int kind)
{
  long i = ctr_set_find(s, name);
  if(i < 0 || s->kinds[i] != kind) {
    fprintf(stderr, "no %s %s\n", kind == CTR_GAUGE ? "gauge" : "counter",
            name);
    check_failures++;
    return NAN;
  }
  return s->vals[i];
}

static void test_recorded(void)
{
  struct ctr_set s;
  char err[256], *t;
  unsigned long long total;
  double a10, a60, a300;
  ctr_set_init(&s);
  CHECK(psi_bit() != 0 && !(ctr_source_default() & psi_bit()));
  CHECK(ctr_snapshot(FIXTURES "/psi-node", psi_bit(), 0, NULL, &s, err,
                     sizeof(err)) == 0);
  CHECK(s.n == 3 * 2 * 4);  /* cpu, memory, io x some, full x 4 */
  /* io's "some" line as recorded */
  t = check_fixture(FIXTURES, "psi-node/proc/pressure/io", NULL);
  CHECK(sscanf(t, "some avg10=%lf avg60=%lf avg300=%lf total=%llu", &a10,
               &a60, &a300, &total) == 4);
  CHECK(check_near(get(&s, "psi.io.some.avg10", CTR_GAUGE), a10));
  CHECK(check_near(get(&s, "psi.io.some.avg60", CTR_GAUGE), a60));
  CHECK(check_near(get(&s, "psi.io.some.avg300", CTR_GAUGE), a300));
  CHECK(check_near(get(&s, "psi.io.some.total_us", CTR_COUNTER),
                   (double)total));
  CHECK(get(&s, "psi.io.full.total_us", CTR_COUNTER) > 0);
  CHECK(get(&s, "psi.cpu.some.total_us", CTR_COUNTER) > 0);
  CHECK(get(&s, "psi.memory.full.avg300", CTR_GAUGE) == 0);
  free(t);
  /* a tree without /proc/pressure (no CONFIG_PSI, psi=0): nothing */
  ctr_set_clear(&s);
  CHECK(ctr_snapshot(FIXTURES "/gpu-node", psi_bit(), 0, NULL, &s, err,
                     sizeof(err)) == 0 && s.n == 0);
  ctr_set_free(&s);
}

/* A tree whose cpu file has a line psi.rst does not describe. */
static void test_bad_line(void)
{
  char dir[] = "/tmp/psi_test.XXXXXX", path[128], err[256];
  struct ctr_set s;
  FILE *f;
  ctr_set_init(&s);
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/proc", dir);
  CHECK(mkdir(path, 0700) == 0);
  snprintf(path, sizeof(path), "%s/proc/pressure", dir);
  CHECK(mkdir(path, 0700) == 0);
  snprintf(path, sizeof(path), "%s/proc/pressure/cpu", dir);
  f = fopen(path, "w");
  CHECK(f != NULL);
  if(f) {
    fputs("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
          "half avg10=0.00\n", f);
    fclose(f);
  }
  err[0] = '\0';
  CHECK(ctr_snapshot(dir, psi_bit(), 0, NULL, &s, err, sizeof(err)) == -1);
  CHECK(strstr(err, "/proc/pressure/cpu: unexpected format") != NULL);
  f = fopen(path, "w");
  if(f) {
    fputs("some avg10=0.00 avg60=x avg300=0.00 total=0\n", f);
    fclose(f);
  }
  ctr_set_clear(&s);
  CHECK(ctr_snapshot(dir, psi_bit(), 0, NULL, &s, err, sizeof(err)) == -1);
  /* a line longer than any the kernel writes is refused, not cut */
  f = fopen(path, "w");
  if(f) {
    fputs("some avg10=0.00 avg60=0.00 avg300=0.00 total=0", f);
    for(int i = 0; i < 300; i++)
      fputc('0', f);
    fputc('\n', f);
    fclose(f);
  }
  ctr_set_clear(&s);
  CHECK(ctr_snapshot(dir, psi_bit(), 0, NULL, &s, err, sizeof(err)) == -1);
  unlink(path);
  snprintf(path, sizeof(path), "%s/proc/pressure", dir);
  rmdir(path);
  snprintf(path, sizeof(path), "%s/proc", dir);
  rmdir(path);
  rmdir(dir);
  ctr_set_free(&s);
}

/* This host: a second snapshot's stall totals never went back. */
static void test_live(void)
{
  struct ctr_reader *r = NULL;
  struct ctr_set a, b;
  char err[256];
  int has = access("/proc/pressure/cpu", R_OK) == 0;
  ctr_set_init(&a);
  ctr_set_init(&b);
  CHECK(ctr_reader_open("", psi_bit(), 0, NULL, &r, err, sizeof(err)) == 0);
  CHECK(r && ctr_reader_read(r, &a, err, sizeof(err)) == 0);
  usleep(50000);
  CHECK(r && ctr_reader_read(r, &b, err, sizeof(err)) == 0);
  ctr_reader_close(&r);
  if(!has) {
    printf("psi_test: this kernel has no /proc/pressure: no series\n");
    CHECK(a.n == 0 && b.n == 0);
  } else {
    double t0 = get(&a, "psi.cpu.some.total_us", CTR_COUNTER);
    double t1 = get(&b, "psi.cpu.some.total_us", CTR_COUNTER);
    double avg = get(&b, "psi.cpu.some.avg10", CTR_GAUGE);
    CHECK(a.n >= 8 && b.n == a.n && t1 >= t0 && avg >= 0 && avg <= 100);
    printf("psi_test: live %zu series, psi.cpu.some.total_us %.0f -> %.0f\n",
           b.n, t0, t1);
  }
  ctr_set_free(&a);
  ctr_set_free(&b);
}

int main(void)
{
  test_recorded();
  test_bad_line();
  test_live();
  if(check_failures) {
    fprintf(stderr, "psi_test: %d check_failures\n", check_failures);
    return 1;
  }
  printf("psi_test: ok\n");
  return 0;
}
