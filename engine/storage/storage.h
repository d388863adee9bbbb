/*
 * storage.h - block I/O measured the way fio measures it, without Lua:
 * O_DIRECT reads and writes through io_uring (liburing) at a queue depth,
 * block size, sequential or random pattern and number of jobs (threads),
 * on a file or a block device.
 *
 * Definitions follow fio 3.33 (axboe/fio @72bcaffd, docs/storage.md):
 *  - slat: an I/O's preparation to its submission returning (fio
 *    io_u.start_time -> issue_time, set by the io_uring engine's commit);
 *  - clat: submission to completion reaped (issue_time -> icd->time, one
 *    clock read per reaped batch, io_u.c account_io_completion);
 *  - lat: preparation to completion (start_time -> icd->time);
 *  - bw = bytes / runtime, iops = ios / runtime, summed over jobs with the
 *    runtime the longest job's (stat.c, group_reporting);
 *  - CPU: each job thread's getrusage, usr/sys as a percentage of its
 *    runtime, averaged over jobs like fio's group (stat.c show_thread).
 * Latencies are kept whole (engine/core/stats.h), in nanoseconds.
 *
 * Data written is a pattern a read can verify: every 512-byte sector
 * starts with its own byte offset and a magic (verify.c), so any sector
 * strata wrote checks out whatever the order of the writes.
 */
#ifndef STRATA_STORAGE_H
#define STRATA_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "stats.h"

enum stg_rw {
  STG_READ, STG_WRITE, STG_RANDREAD, STG_RANDWRITE
};

struct stg_opts {
  const char *filename;
  int rw;                 /* enum stg_rw */
  size_t bs;              /* bytes per I/O (multiple of 512) */
  unsigned iodepth;       /* I/Os in flight per job */
  unsigned numjobs;       /* threads, each with its own ring */
  uint64_t size;          /* region [offset, offset + size) each job covers */
  uint64_t offset;
  uint64_t ios;           /* per job; 0 = size / bs */
  double runtime_s;       /* bound on time; 0 = none */
  int time_based;         /* run for runtime_s, wrapping over the region */
  int direct;             /* O_DIRECT (the default in the binding) */
  int verify;             /* reads compare the pattern; writes re-read */
  /* fio's submission and completion batching (HOWTO "I/O depth"): queue
   * up to batch_submit I/Os before one io_uring_enter submits them (0 or
   * more than iodepth: iodepth); each wait reaps at least
   * batch_complete_min (0: poll, never sleep) and at most
   * batch_complete_max completions (below min: min).  fio's defaults are
   * 1, 1 and 1 (stg_opts_defaults): one system call per I/O submitted. */
  unsigned batch_submit, batch_complete_min, batch_complete_max;
  int fsync_end;          /* fsync after writing (fio end_fsync) */
  uint64_t seed;          /* random offsets */
  const int *cpus;        /* cpus_allowed: job threads pinned to these */
  size_t ncpus;
};

struct stg_result {
  uint64_t ios, bytes;        /* completed, over every job */
  uint64_t runtime_ns;        /* the longest job */
  uint64_t verify_bytes;      /* bytes read back and compared */
  uint64_t verify_errors;     /* sectors that did not match */
  uint64_t first_bad_offset;  /* of the first bad sector */
  double usr_s, sys_s;        /* CPU time of the job threads */
  double usr_pct, sys_pct;    /* fio's usr_cpu / sys_cpu */
  long ctx;                   /* context switches of the job threads */
  int laid_out;               /* the file was written first to size */
  /* io_uring_enter(2) calls the job threads made: those that submitted
   * (with IORING_ENTER_GETEVENTS, as fio's commit) and those that only
   * waited for completions */
  uint64_t enter_submit, enter_wait;
  struct stats_samples slat, clat, lat;  /* ns, every I/O */
};

/* Fill o with fio 3.33's defaults (direct = 1, the binding's default, and
 * the batching above); the caller sets filename, rw, bs and the rest. */
void stg_opts_defaults(struct stg_opts *o);
/* Clamp the batching as fio does (0 or > iodepth submits iodepth; a max
 * below the min is the min); stg_run does it too. */
void stg_opts_fixup(struct stg_opts *o);

/* Run the job.  0, or -1 with "<step>: <detail>" in err (step: open,
 * layout, ring, io, verify, memory).  r is filled either way; free it
 * with stg_result_free.  A regular file shorter than offset + size is laid
 * out first (written with the pattern, as fio lays out its files). */
int stg_run(const struct stg_opts *o, struct stg_result *r, char *err,
            size_t errlen);
void stg_result_free(struct stg_result *r);
/* Can this process set up an io_uring ring?  0, or -1 with the reason
 * (kernel.io_uring_disabled, seccomp, an old kernel). */
int stg_probe_ring(char *err, size_t len);

/* Name of an rw value ("read", "write", "randread", "randwrite") and back
 * (-1 for an unknown name). */
const char *stg_rw_name(int rw);
int stg_rw_parse(const char *name);

/* --- The verifiable pattern (verify.c) ------------------------------ */
#define STG_SECTOR 512
/* Fill buf (len a multiple of 512) for the bytes at file offset off. */
void stg_pattern_fill(unsigned char *buf, size_t len, uint64_t off);
/* Re-stamp only the sector headers (the body is the same everywhere). */
void stg_pattern_stamp(unsigned char *buf, size_t len, uint64_t off);
/* Sectors of buf that do not hold the pattern for off; *bad gets the
 * file offset of the first (untouched when none). */
uint64_t stg_pattern_check(const unsigned char *buf, size_t len,
                           uint64_t off, uint64_t *bad);

/* --- Targets (target.c) -------------------------------------------- */
/* "0-3,8,10-11" (the kernel's cpulist, fio's cpus_allowed) into cpus.
 * -1 on bad text or more than max CPUs. */
int stg_cpulist_parse(const char *s, int *cpus, size_t max, size_t *n);
/* The CPUs of NUMA node under root ("" = this host).  -1 with errno. */
int stg_node_cpus(const char *root, int node, int *cpus, size_t max,
                  size_t *n);
/* 1 when path is a block device that is mounted or has holders (an md
 * member, a dm target), with the reason in why; else 0. */
int stg_device_in_use(const char *root, const char *path, char *why,
                      size_t len);

/* The next random block index in [0, nblocks): xorshift64*, per job. */
uint64_t stg_rand_block(uint64_t *state, uint64_t nblocks);

#endif
