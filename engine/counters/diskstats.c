/*
 * diskstats.c - the "disk" counter source: /proc/diskstats, one group of
 * counters per block device, disk.<dev>.<field>.
 *
 * Field meanings: the kernel's Documentation/admin-guide/iostats.rst
 * (torvalds/linux @2555693d).  After major, minor and name come 11 fields
 * (all kernels since 2.6.25 for disks and partitions), 15 since 4.18
 * (discards) and 17 since 5.5 (flushes); a short line gives what it has.
 * Names follow fio's disk_util (diskutil.c: read_ios, read_merges,
 * read_ticks, io_ticks, in_queue) where it has one; sectors are always
 * 512 bytes in this file whatever the device's block size, so strata
 * reports bytes.  Field 9 (I/Os in flight) is a level, the rest count.
 * The derived figures (IOPS, await, utilisation, average queue depth)
 * are rates and ratios of these over an interval: docs/counters.md.
 */
#include <errno.h>
#include <string.h>

#include "counters.h"
#include "procfs.h"
#include "source.h"

static const struct {
  const char *name;
  int bytes;   /* sectors -> bytes */
  int kind;
} fields[17] = {
  { "read_ios", 0, CTR_COUNTER },       /* 1: reads completed */
  { "read_merges", 0, CTR_COUNTER },    /* 2: reads merged */
  { "read_bytes", 1, CTR_COUNTER },     /* 3: sectors read */
  { "read_ticks", 0, CTR_COUNTER },     /* 4: ms spent reading */
  { "write_ios", 0, CTR_COUNTER },      /* 5 */
  { "write_merges", 0, CTR_COUNTER },   /* 6 */
  { "write_bytes", 1, CTR_COUNTER },    /* 7: sectors written */
  { "write_ticks", 0, CTR_COUNTER },    /* 8: ms spent writing */
  { "in_flight", 0, CTR_GAUGE },        /* 9: I/Os in progress now */
  { "io_ticks", 0, CTR_COUNTER },       /* 10: ms with I/O in progress */
  { "in_queue", 0, CTR_COUNTER },       /* 11: weighted ms doing I/O */
  { "discard_ios", 0, CTR_COUNTER },    /* 12 */
  { "discard_merges", 0, CTR_COUNTER }, /* 13 */
  { "discard_bytes", 1, CTR_COUNTER },  /* 14: sectors discarded */
  { "discard_ticks", 0, CTR_COUNTER },  /* 15 */
  { "flush_ios", 0, CTR_COUNTER },      /* 16 */
  { "flush_ticks", 0, CTR_COUNTER },    /* 17 */
};

/* A word of decimal digits */
static int decimal(const char *w)
{
  return w[0] && w[strspn(w, "0123456789")] == '\0';
}

/* Each line: major, minor, name, then the fields.  Parsed without
 * scanf or printf (a sampler tick parses every device's line). */
int ctr_parse_diskstats(const char *text, struct ctr_set *s)
{
  const char *p = text;
  char line[512];
  int got;
  while((got = ctr_next_line(&p, line, sizeof(line))) != 0) {
    char num[32], grp[80] = "disk.";
    const char *q = line;
    unsigned long long v[17];
    int n;
    if(got < 0) {
      errno = EINVAL;
      return -1;
    }
    if(!line[0])
      continue;
    q = ctr_word(q, num, sizeof(num));            /* major */
    if(decimal(num))
      q = ctr_word(q, num, sizeof(num));          /* minor */
    if(decimal(num))
      q = ctr_word(q, grp + 5, 64);               /* name */
    if(!decimal(num) || !grp[5]) {
      errno = EINVAL;
      return -1;
    }
    n = ctr_numbers(q, v, 17);
    if(n < 11) {  /* every kernel since 2.6.25 gives 11 */
      errno = EINVAL;
      return -1;
    }
    for(int i = 0; i < n; i++) {
      double x = fields[i].bytes ? (double)v[i] * 512.0 : (double)v[i];
      if(ctr_set_add2(s, grp, fields[i].name, x, fields[i].kind))
        return -1;
    }
  }
  return 0;
}

static int diskstats_parse(struct ctr_reader *r, struct ctr_src_io *io,
                           struct ctr_set *s)
{
  (void)io;
  return ctr_parse_diskstats(r->buf, s);
}

/* A recorded tree without diskstats has no disks, like one without rdma:
 * not an error there. */
const struct ctr_source ctr_src_diskstats = {
  { { "disk", 0 } }, 1, "/proc/diskstats", diskstats_parse,
  ctr_file_open_optional, ctr_file_read, ctr_file_close
};
