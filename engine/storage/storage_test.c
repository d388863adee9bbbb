/*
 * storage_test.c - the storage core without Lua: the pattern and its
 * check, the random block picker, CPU lists, the raw-device guard on a
 * recorded mountinfo, and real io_uring jobs on a file in the working
 * directory (ctest runs it in the build tree, on a disk filesystem:
 * O_DIRECT needs one).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "counters.h"
#include "storage.h"
#include "strata.h"

static void test_pattern(void)
{
  unsigned char buf[4096];
  uint64_t bad = 0;
  stg_pattern_fill(buf, sizeof(buf), 8192);
  CHECK(stg_pattern_check(buf, sizeof(buf), 8192, &bad) == 0);
  /* the same bytes read at another offset are misplaced data */
  CHECK(stg_pattern_check(buf, sizeof(buf), 0, &bad) == 8);
  CHECK(bad == 0);
  /* restamping moves the data, the body is shared */
  stg_pattern_stamp(buf, sizeof(buf), 0);
  CHECK(stg_pattern_check(buf, sizeof(buf), 0, NULL) == 0);
  buf[3 * 512 + 100] ^= 1;   /* one flipped bit in sector 3's body */
  CHECK(stg_pattern_check(buf, sizeof(buf), 0, &bad) == 1);
  CHECK(bad == 3 * 512);
  memset(buf, 0, sizeof(buf)); /* a zeroed (unwritten) block */
  CHECK(stg_pattern_check(buf, sizeof(buf), 0, NULL) == 8);
}

static void test_rand(void)
{
  uint64_t st = 12345, seen[16] = { 0 };
  int inrange = 1;
  for(int i = 0; i < 16000; i++) {
    uint64_t b = stg_rand_block(&st, 16);
    if(b >= 16)
      inrange = 0;
    else
      seen[b]++;
  }
  CHECK(inrange);
  for(int i = 0; i < 16; i++)
    CHECK(seen[i] > 800 && seen[i] < 1200);  /* roughly uniform */
}

static void test_cpulist(void)
{
  int c[16];
  size_t n;
  CHECK(stg_cpulist_parse("0-3,8,10-11\n", c, 16, &n) == 0);
  CHECK(n == 7 && c[0] == 0 && c[3] == 3 && c[4] == 8 && c[6] == 11);
  CHECK(stg_cpulist_parse("3-1", c, 16, &n) == -1);
  CHECK(stg_cpulist_parse("0-99", c, 16, &n) == -1);
  CHECK(stg_cpulist_parse("x", c, 16, &n) == -1);
  /* recorded from the qemu guest (fixtures/storage/README.md) */
  CHECK(stg_node_cpus(FIXTURES "/numa-4p4", 1, c, 16, &n) == 0);
  CHECK(n == 2 && c[0] == 2 && c[1] == 3);
}

static void test_guard(void)
{
  char why[256];
  /* a regular file is never "in use" by this guard */
  CHECK(stg_device_in_use("", "/etc/hostname", why, sizeof(why)) == 0);
}

static double get(const struct ctr_set *s, const char *name)
{
  long i = ctr_set_find(s, name);
  return i < 0 ? -1 : s->vals[i];
}

/* The disk counter source (engine/counters/diskstats.c) on a capture of
 * this host's /proc/diskstats and on iostats.rst's own examples. */
static void test_diskstats(void)
{
  struct ctr_set s;
  char err[256], *buf = NULL;
  ctr_set_init(&s);
  CHECK(ctr_snapshot(FIXTURES "/host", CTR_SRC_DISK, 0, NULL, &s, err, sizeof(err)) == 0);
  CHECK(get(&s, "disk.vda.read_ios") == 1165051);
  CHECK(get(&s, "disk.vda.read_bytes") == 316316866.0 * 512);
  CHECK(get(&s, "disk.vda.write_ticks") == 523264);
  CHECK(get(&s, "disk.vda.in_flight") == 0);
  CHECK(get(&s, "disk.vda.io_ticks") == 308844);
  CHECK(get(&s, "disk.vda.in_queue") == 5349237);
  CHECK(get(&s, "disk.vda.flush_ticks") == 21670);
  long i = ctr_set_find(&s, "disk.vda.in_flight");
  CHECK(i >= 0 && s.kinds[i] == CTR_GAUGE);
  CHECK(get(&s, "disk.loop7.read_ios") == 0);
  ctr_set_clear(&s);
  /* 11 fields (2.6.25+) and 15 (4.18+): what is there, no more */
  CHECK(strata_read_file(FIXTURES "/iostats-rst.diskstats", 0, &buf, NULL,
                         NULL) == 0);
  CHECK(buf && ctr_parse_diskstats(buf, &s) == 0);
  CHECK(get(&s, "disk.hda.in_queue") == 23705160);
  CHECK(get(&s, "disk.hda.discard_ios") == -1);
  CHECK(get(&s, "disk.hdb.discard_ticks") == 0);
  CHECK(get(&s, "disk.hdb.flush_ios") == -1);
  ctr_set_clear(&s);
  CHECK(ctr_parse_diskstats("   8 0 sda 1 2 3\n", &s) == -1);
  {
    /* a line longer than any the kernel writes is refused, not cut */
    char longline[700];
    memset(longline, '1', sizeof(longline) - 2);
    longline[sizeof(longline) - 2] = '\n';
    longline[sizeof(longline) - 1] = '\0';
    errno = 0;
    CHECK(ctr_parse_diskstats(longline, &s) == -1 && errno == EINVAL);
  }
  /* major and minor are numbers, and a name follows them */
  CHECK(ctr_parse_diskstats("   x 0 sda 1 2 3 4 5 6 7 8 9 10 11\n", &s) == -1);
  CHECK(ctr_parse_diskstats("   8 0x sda 1 2 3 4 5 6 7 8 9 10 11\n", &s) == -1);
  CHECK(ctr_parse_diskstats("   8 0\n", &s) == -1);
  ctr_set_clear(&s);
  /* the 11 fields of 2.6.25 */
  CHECK(ctr_parse_diskstats("   8 0 sdz 1 2 3 4 5 6 7 8 9 10 11\n", &s) == 0);
  CHECK(get(&s, "disk.sdz.read_bytes") == 3 * 512);
  CHECK(get(&s, "disk.sdz.in_queue") == 11);
  ctr_set_clear(&s);
  /* the qemu guest's own file: md arrays and NVMe namespaces */
  CHECK(ctr_snapshot(FIXTURES "/numa-4p4", CTR_SRC_DISK, 0, NULL, &s, err,
                     sizeof(err)) == 0);
  CHECK(get(&s, "disk.md0.write_ios") > 0);
  CHECK(get(&s, "disk.nvme0n1.read_ios") > 0);
  ctr_set_clear(&s);
  /* a recorded tree without the file has no disks; the live host must */
  CHECK(ctr_snapshot(FIXTURES, CTR_SRC_DISK, 0, NULL, &s, err, sizeof(err)) == 0 && s.n == 0);
  free(buf);
  ctr_set_free(&s);
}

/* A sequential write of 4 MiB at QD8 with read-back, then random reads
 * over it by two jobs: o is left set for the next steps. */
static void job_write_read(struct stg_opts *o, const char *path)
{
  struct stg_result r;
  char err[512];
  int rc;

  /* sequential write of 4 MiB at QD8 with read-back */
  stg_opts_defaults(o);
  o->filename = path;
  o->rw = STG_WRITE;
  o->bs = 65536;
  o->iodepth = 8;
  o->numjobs = 1;
  o->size = 4 << 20;
  o->direct = 1;
  o->verify = 1;
  rc = stg_run(o, &r, err, sizeof(err));
  if(rc)
    fprintf(stderr, "write: %s\n", err);
  CHECK(rc == 0);
  CHECK(r.ios == 64 && r.bytes == (4u << 20));
  CHECK(r.laid_out == 1);  /* verify on a fresh file lays it out */
  CHECK(r.verify_bytes == (4u << 20) && r.verify_errors == 0);
  CHECK(r.clat.n == 64 && r.lat.n == 64 && r.slat.n == 64);
  CHECK(r.runtime_ns > 0);
  stg_result_free(&r);

  /* random 4 KiB reads over it, two jobs, verified */
  o->rw = STG_RANDREAD;
  o->bs = 4096;
  o->iodepth = 16;
  o->numjobs = 2;
  o->ios = 500;
  o->verify = 1;
  rc = stg_run(o, &r, err, sizeof(err));
  CHECK(rc == 0);
  CHECK(r.ios == 1000 && r.verify_errors == 0 && r.laid_out == 0);
  CHECK(r.lat.n == 1000);
  for(size_t i = 0; i < r.lat.n; i++)  /* lat covers clat */
    if(r.lat.v[i] < r.clat.v[i]) {
      CHECK(!"lat < clat");
      break;
    }
  stg_result_free(&r);
}

static void job_corrupt(struct stg_opts *o, const char *path)
{
  struct stg_result r;
  char err[512];
  int rc, fd;

  /* a corrupted sector is found and named */
  fd = open(path, O_WRONLY);
  CHECK(fd >= 0);
  CHECK(pwrite(fd, "XXXX", 4, 1 << 20) == 4);
  CHECK(fsync(fd) == 0);
  close(fd);
  o->rw = STG_READ;
  o->bs = 1 << 20;
  o->iodepth = 4;
  o->numjobs = 1;
  o->ios = 0;
  rc = stg_run(o, &r, err, sizeof(err));
  CHECK(rc == 0);
  CHECK(r.verify_errors == 1 && r.first_bad_offset == (1u << 20));
  stg_result_free(&r);
}

static void job_time_based(struct stg_opts *o)
{
  struct stg_result r;
  char err[512];
  int rc;

  /* time_based runs for the runtime, wrapping over the region */
  o->rw = STG_RANDWRITE;
  o->bs = 4096;
  o->iodepth = 4;
  o->verify = 1;
  o->runtime_s = 0.3;
  o->time_based = 1;
  rc = stg_run(o, &r, err, sizeof(err));
  CHECK(rc == 0);
  CHECK(r.runtime_ns >= 300000000ull && r.runtime_ns < 3000000000ull);
  CHECK(r.verify_errors == 0 && r.verify_bytes > 0);
  stg_result_free(&r);
}

static void job_batching(const char *path)
{
  struct stg_result r;
  char err[512];
  int rc;

  /* fio's batching, counted: at fio's defaults one io_uring_enter per I/O
   * submitted; iodepth_batch_submit = 0 (the whole depth) and
   * iodepth_batch_complete_max = 16 submit several per call */
  struct stg_opts b;
  uint64_t unbatched_waits;

  stg_opts_defaults(&b);
  CHECK(b.batch_submit == 1 && b.batch_complete_min == 1 &&
        b.batch_complete_max == 0);
  stg_opts_fixup(&b);
  CHECK(b.batch_submit == 1 && b.batch_complete_max == 1);
  b.filename = path;
  b.rw = STG_RANDREAD;
  b.iodepth = 16;
  b.ios = 512;
  b.size = 4 << 20;
  rc = stg_run(&b, &r, err, sizeof(err));
  CHECK(rc == 0 && r.ios == 512);
  CHECK(r.enter_submit == 512);
  unbatched_waits = r.enter_wait;
  stg_result_free(&r);
  b.batch_submit = 0;
  b.batch_complete_max = 16;
  stg_opts_fixup(&b);
  CHECK(b.batch_submit == 16 && b.batch_complete_max == 16);
  rc = stg_run(&b, &r, err, sizeof(err));
  CHECK(rc == 0 && r.ios == 512);
  /* the first fill alone is one call for 16 */
  CHECK(r.enter_submit > 0 && r.enter_submit <= 512 - 15);
  printf("submits: unbatched 512 (waits %llu), batched %llu (waits %llu)\n",
         (unsigned long long)unbatched_waits,
         (unsigned long long)r.enter_submit,
         (unsigned long long)r.enter_wait);
  stg_result_free(&r);
  /* a poll (complete_min = 0) still completes every I/O */
  b.batch_complete_min = 0;
  rc = stg_run(&b, &r, err, sizeof(err));
  CHECK(rc == 0 && r.ios == 512 && r.clat.n == 512);
  stg_result_free(&r);
}

static void job_errors(struct stg_opts *o)
{
  struct stg_result r;
  char err[512];

  /* bad options and a missing file are errors that say which step */
  o->bs = 1000;
  CHECK(stg_run(o, &r, err, sizeof(err)) == -1 && strstr(err, "open:"));
  stg_result_free(&r);
  o->bs = 4096;
  o->filename = "no/such/dir/file";
  o->rw = STG_READ;
  CHECK(stg_run(o, &r, err, sizeof(err)) == -1 &&
        strstr(err, "No such file"));
  stg_result_free(&r);
}

static void test_jobs(void)
{
  const char *path = "storage_test.dat";
  struct stg_opts o;
  unlink(path);
  job_write_read(&o, path);
  job_corrupt(&o, path);
  job_time_based(&o);
  job_batching(path);
  job_errors(&o);
  unlink(path);
}

int main(void)
{
  char err[256];
  test_pattern();
  test_rand();
  test_cpulist();
  test_guard();
  test_diskstats();
  if(stg_probe_ring(err, sizeof(err)))
    printf("SKIP jobs: %s\n", err);
  else
    test_jobs();
  if(check_failures)
    fprintf(stderr, "%d check_failures\n", check_failures);
  return check_failures ? 1 : 0;
}
