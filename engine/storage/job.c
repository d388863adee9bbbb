/*
 * job.c - one storage job: numjobs threads, each with its own io_uring
 * ring, file descriptor and iodepth buffers, keeping iodepth I/Os in
 * flight over [offset, offset + size) until ios are done or runtime is
 * up, submitting and reaping in the batches fio's iodepth_batch_* options
 * set (storage.h).  The clock is read once per I/O prepared, once per
 * submission and once per reaped batch of completions, as fio 3.33 does.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include <liburing.h>

#include "storage.h"
#include "uring_load.h"
#include "strata.h"

struct slot {
  uint64_t off;
  uint64_t start_ns, issue_ns;
};

struct job {
  const struct stg_opts *o;
  unsigned idx;
  int fd;
  uint64_t region;          /* bytes covered */
  struct io_uring ring;
  int ring_ok;
  unsigned char *bufs;      /* iodepth * bs, 4 KiB aligned */
  struct slot *slots;
  unsigned *freel, nfree;
  unsigned *pend, npend;    /* queued, not yet submitted */
  uint64_t enter_submit, enter_wait;
  unsigned char *written;   /* block bitmap for write + verify */
  uint64_t next_seq, rng;
  uint64_t ios, bytes, t0, t1;
  uint64_t verify_errors, verify_bytes, first_bad;
  struct stats_samples slat, clat, lat;
  double usr_s, sys_s;
  long ctx;
  char err[256];
};

static int is_write(int rw)
{
  return rw == STG_WRITE || rw == STG_RANDWRITE;
}

static int is_rand(int rw)
{
  return rw == STG_RANDREAD || rw == STG_RANDWRITE;
}

static uint64_t next_offset(struct job *j)
{
  const struct stg_opts *o = j->o;
  uint64_t nblocks = j->region / o->bs, b;
  if(is_rand(o->rw))
    b = stg_rand_block(&j->rng, nblocks);
  else {
    b = j->next_seq++;
    if(j->next_seq >= nblocks)
      j->next_seq = 0;  /* time_based wraps, like fio's loops */
  }
  return o->offset + b * o->bs;
}

static double tv_s(const struct timeval *tv)
{
  return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Submit what is queued: fio's commit (engines/io_uring.c
 * fio_ioring_commit), io_uring_enter(queued, 0, IORING_ENTER_GETEVENTS)
 * until the kernel took them all, then stamp their issue time. */
static int commit(struct job *j, unsigned *inflight)
{
  unsigned done = 0;
  while(done < j->npend) {
    int rc = io_uring_submit_and_get_events(&j->ring);
    j->enter_submit++;
    if(rc == -EINTR || rc == -EAGAIN)
      continue;
    if(rc < 0) {
      snprintf(j->err, sizeof(j->err), "io: io_uring_submit: %s",
               strerror(-rc));
      return -1;
    }
    done += (unsigned)rc;
  }
  uint64_t t = strata_now_ns();
  for(unsigned i = 0; i < j->npend; i++)
    j->slots[j->pend[i]].issue_ns = t;
  *inflight += j->npend;
  j->npend = 0;
  return 0;
}

/* Queue I/Os into the free slots, committing every batch_submit of them
 * (fio's td_io_queue: io_u_queued >= iodepth_batch).  *done: nothing
 * more to issue (ios issued, runtime up, or stopped). */
static int fill(struct job *j, uint64_t target, uint64_t *issued,
                uint64_t deadline, unsigned *inflight, int *done)
{
  const struct stg_opts *o = j->o;
  for(;;) {
    if((!o->time_based && *issued >= target) || strata_stop_flag) {
      *done = 1;
      break;
    }
    if(!j->nfree)
      break;  /* full: the clock is read when a slot is free */
    uint64_t now = strata_now_ns();
    if(deadline && now >= deadline) {
      *done = 1;
      break;
    }
    struct io_uring_sqe *sqe = io_uring_get_sqe(&j->ring);
    if(!sqe)
      break;
    unsigned s = j->freel[--j->nfree];
    unsigned char *buf = j->bufs + (size_t)s * o->bs;
    j->slots[s].off = next_offset(j);
    j->slots[s].start_ns = now;
    if(is_write(o->rw)) {
      stg_pattern_stamp(buf, o->bs, j->slots[s].off);
      io_uring_prep_write(sqe, j->fd, buf, (unsigned)o->bs,
                          j->slots[s].off);
    } else
      io_uring_prep_read(sqe, j->fd, buf, (unsigned)o->bs,
                         j->slots[s].off);
    io_uring_sqe_set_data64(sqe, s);
    j->pend[j->npend++] = s;
    (*issued)++;
    if(j->npend >= o->batch_submit && commit(j, inflight))
      return -1;
  }
  return 0;
}

/* One completion: check it, verify a read, account its latencies. */
static int complete_one(struct job *j, struct io_uring_cqe *cqe, uint64_t t)
{
  const struct stg_opts *o = j->o;
  unsigned s = (unsigned)io_uring_cqe_get_data64(cqe);
  struct slot *sl = &j->slots[s];
  if(cqe->res < 0 || (size_t)cqe->res != o->bs) {
    if(cqe->res < 0)
      snprintf(j->err, sizeof(j->err), "io: %s at offset %llu: %s",
               is_write(o->rw) ? "write" : "read",
               (unsigned long long)sl->off, strerror(-cqe->res));
    else
      snprintf(j->err, sizeof(j->err),
               "io: short %s at offset %llu: %d of %zu bytes",
               is_write(o->rw) ? "write" : "read",
               (unsigned long long)sl->off, cqe->res, o->bs);
    return -1;
  }
  if(o->verify && !is_write(o->rw)) {
    uint64_t bad = 0;
    uint64_t nb = stg_pattern_check(j->bufs + (size_t)s * o->bs, o->bs,
                                    sl->off, &bad);
    if(nb && !j->verify_errors)
      j->first_bad = bad;
    j->verify_errors += nb;
    j->verify_bytes += o->bs;
  }
  if(j->written) {
    uint64_t b = (sl->off - o->offset) / o->bs;
    j->written[b / 8] |= (unsigned char)(1u << (b % 8));
  }
  if(stats_add(&j->slat, (double)(sl->issue_ns - sl->start_ns)) ||
     stats_add(&j->clat, (double)(t - sl->issue_ns)) ||
     stats_add(&j->lat, (double)(t - sl->start_ns))) {
    snprintf(j->err, sizeof(j->err), "memory: latency samples");
    return -1;
  }
  j->ios++;
  j->bytes += o->bs;
  j->freel[j->nfree++] = s;
  return 0;
}

/* Reap at least min completions and at most max, as fio's
 * io_u_queued_complete -> fio_ioring_getevents: take what the CQ ring
 * holds; while short of min, io_uring_enter(0, min - held (0 when
 * iodepth_batch_complete_min = 0: a poll), IORING_ENTER_GETEVENTS).  One
 * clock read for the batch (fio's icd->time). */
static int reap(struct job *j, unsigned min, unsigned *inflight)
{
  const struct stg_opts *o = j->o;
  unsigned max = o->batch_complete_max, ready;
  if(min > *inflight)
    min = *inflight;
  if(max > *inflight)
    max = *inflight;
  if(min > max)
    max = min;
  while((ready = io_uring_cq_ready(&j->ring)) < min) {
    unsigned want = o->batch_complete_min ? min - ready : 0;
    int rc = io_uring_enter((unsigned)j->ring.ring_fd, 0, want,
                            IORING_ENTER_GETEVENTS, NULL);
    j->enter_wait++;
    if(rc == -EINTR || rc == -EAGAIN) {
      if(strata_stop_flag)
        return 0;
      continue;
    }
    if(rc < 0) {
      snprintf(j->err, sizeof(j->err), "io: io_uring_enter: %s",
               strerror(-rc));
      return -1;
    }
  }
  if(ready > max)
    ready = max;
  uint64_t t = strata_now_ns();
  struct io_uring_cqe *cqe;
  unsigned head, count = 0;
  int rc = 0;
  io_uring_for_each_cqe(&j->ring, head, cqe) {
    if(count == ready)
      break;
    count++;
    if((rc = complete_one(j, cqe, t)))
      break;
  }
  io_uring_cq_advance(&j->ring, count);
  *inflight -= count;
  return rc;
}

/* After a write with verify: read back every block this job wrote. */
static void read_back(struct job *j)
{
  const struct stg_opts *o = j->o;
  uint64_t nblocks = j->region / o->bs;
  unsigned char *buf = j->bufs;  /* slot 0's buffer: idle now */
  for(uint64_t b = 0; b < nblocks && !strata_stop_flag; b++) {
    if(!(j->written[b / 8] & (1u << (b % 8))))
      continue;
    uint64_t off = o->offset + b * o->bs, bad = 0;
    ssize_t n = pread(j->fd, buf, o->bs, (off_t)off);
    if(n != (ssize_t)o->bs) {
      snprintf(j->err, sizeof(j->err), "verify: read back at offset %llu: "
               "%s", (unsigned long long)off,
               n < 0 ? strerror(errno) : "short read");
      return;
    }
    uint64_t nb = stg_pattern_check(buf, o->bs, off, &bad);
    if(nb && !j->verify_errors)
      j->first_bad = bad;
    j->verify_errors += nb;
    j->verify_bytes += o->bs;
  }
}

/* The ring as fio 3.33 sets it up (engines/io_uring.c fio_ioring_queue_
 * init): CQ sized to the depth, COOP_TASKRUN (no IPI per completion),
 * SINGLE_ISSUER + DEFER_TASKRUN (task work runs when we reap), falling
 * back without the last two on kernels before 6.1.  Made in the job's own
 * thread: a single-issuer ring belongs to the task that created it. */
static int ring_init(struct job *j)
{
  struct io_uring_params p;
  memset(&p, 0, sizeof(p));
  p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN |
            IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  p.cq_entries = j->o->iodepth;
  int rc = io_uring_queue_init_params(j->o->iodepth, &j->ring, &p);
  if(rc == -EINVAL) {
    memset(&p, 0, sizeof(p));
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN;
    p.cq_entries = j->o->iodepth;
    rc = io_uring_queue_init_params(j->o->iodepth, &j->ring, &p);
  }
  if(rc == -EINVAL)  /* before 5.19: no COOP_TASKRUN either */
    rc = io_uring_queue_init(j->o->iodepth, &j->ring, 0);
  if(rc < 0) {
    snprintf(j->err, sizeof(j->err), "ring: io_uring_queue_init(%u): %s",
             j->o->iodepth, uring_load() ? uring_load_error() : strerror(-rc));
    return -1;
  }
  j->ring_ok = 1;
  return 0;
}

static void *job_main(void *arg)
{
  struct job *j = arg;
  const struct stg_opts *o = j->o;
  struct rusage r0, r1;
  unsigned inflight = 0;
  uint64_t issued = 0, target, deadline = 0;

  if(o->ncpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for(size_t i = 0; i < o->ncpus; i++)
      CPU_SET(o->cpus[i], &set);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if(rc) {
      snprintf(j->err, sizeof(j->err), "open: cpus_allowed: %s",
               strerror(rc));
      return NULL;
    }
  }
  if(ring_init(j))
    return NULL;
  target = o->ios ? o->ios : j->region / o->bs;
  getrusage(RUSAGE_THREAD, &r0);
  j->t0 = strata_now_ns();
  if(o->runtime_s > 0)
    deadline = j->t0 + (uint64_t)(o->runtime_s * 1e9);
  /* fio's do_io: queue until the depth is full (committing each batch),
   * commit the rest before waiting, wait for iodepth_batch_complete_min
   * (at least one: wait_for_completions); at the end reap all in flight */
  for(;;) {
    int done = 0;
    if(fill(j, target, &issued, deadline, &inflight, &done))
      break;
    if(j->npend && commit(j, &inflight))
      break;
    if(done || !inflight)
      break;
    if(reap(j, o->batch_complete_min ? o->batch_complete_min : 1, &inflight))
      break;
  }
  while(inflight && !j->err[0] && !reap(j, inflight, &inflight))
    ;
  if(!j->err[0] && is_write(o->rw) && o->fsync_end && fsync(j->fd))
    snprintf(j->err, sizeof(j->err), "io: fsync: %s", strerror(errno));
  j->t1 = strata_now_ns();
  getrusage(RUSAGE_THREAD, &r1);
  j->usr_s = tv_s(&r1.ru_utime) - tv_s(&r0.ru_utime);
  j->sys_s = tv_s(&r1.ru_stime) - tv_s(&r0.ru_stime);
  j->ctx = (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw);
  if(!j->err[0] && j->written)
    read_back(j);
  return NULL;
}

/* Size of the target: a block device's, else the file's. */
static int target_size(int fd, uint64_t *size, int *blk)
{
  struct stat st;
  if(fstat(fd, &st))
    return -1;
  *blk = S_ISBLK(st.st_mode);
  if(*blk)
    return ioctl(fd, BLKGETSIZE64, size);
  *size = (uint64_t)st.st_size;
  return 0;
}

/* Write the pattern over [have, need) so reads find real data (fio's
 * "Laying out IO file"). */
static int lay_out(const char *path, uint64_t have, uint64_t need,
                   char *err, size_t errlen)
{
  const size_t chunk = 1 << 20;
  unsigned char *buf = malloc(chunk);
  int fd = open(path, O_WRONLY), rc = 0;
  if(!buf || fd < 0) {
    snprintf(err, errlen, "layout: %s: %s", path, strerror(errno));
    free(buf);
    if(fd >= 0)
      close(fd);
    return -1;
  }
  have -= have % STG_SECTOR;
  for(uint64_t off = have; off < need && !rc; off += chunk) {
    size_t n = need - off < chunk ? (size_t)(need - off) : chunk;
    stg_pattern_fill(buf, n, off);
    if(pwrite(fd, buf, n, (off_t)off) != (ssize_t)n) {
      snprintf(err, errlen, "layout: %s: %s", path, strerror(errno));
      rc = -1;
    }
  }
  if(!rc && fsync(fd)) {
    snprintf(err, errlen, "layout: %s: fsync: %s", path, strerror(errno));
    rc = -1;
  }
  close(fd);
  free(buf);
  return rc;
}

static int job_open(struct job *j, char *err, size_t errlen)
{
  const struct stg_opts *o = j->o;
  int flags = (is_write(o->rw) || o->verify ? O_RDWR : O_RDONLY) |
              (o->direct ? O_DIRECT : 0);
  j->fd = open(o->filename, flags);
  if(j->fd < 0) {
    snprintf(err, errlen, "open: %s: %s", o->filename, strerror(errno));
    return -1;
  }
  if(posix_memalign((void **)&j->bufs, 4096, (size_t)o->iodepth * o->bs)) {
    snprintf(err, errlen, "memory: %u buffers of %zu bytes", o->iodepth,
             o->bs);
    return -1;
  }
  for(unsigned s = 0; s < o->iodepth; s++)
    stg_pattern_fill(j->bufs + (size_t)s * o->bs, o->bs, 0);
  j->slots = calloc(o->iodepth, sizeof(*j->slots));
  j->freel = calloc(o->iodepth, sizeof(*j->freel));
  j->pend = calloc(o->iodepth, sizeof(*j->pend));
  uint64_t nblocks = j->region / o->bs;
  if(o->verify && is_write(o->rw))
    j->written = calloc(nblocks / 8 + 1, 1);
  uint64_t cap = o->ios ? o->ios : nblocks;
  if(o->time_based || cap > (1u << 20))
    cap = 1u << 20;  /* grows as it goes */
  if(!j->slots || !j->freel || !j->pend || (o->verify && is_write(o->rw) &&
                                !j->written) ||
     stats_init(&j->slat, cap) || stats_init(&j->clat, cap) ||
     stats_init(&j->lat, cap)) {
    snprintf(err, errlen, "memory: job state");
    return -1;
  }
  for(unsigned s = 0; s < o->iodepth; s++)
    j->freel[j->nfree++] = o->iodepth - 1 - s;
  j->rng = (o->seed ? o->seed : 0x9E3779B97F4A7C15ull) + j->idx * 7919u;
  if(!j->rng)
    j->rng = 1;
  return 0;
}

static void job_close(struct job *j)
{
  if(j->ring_ok)
    io_uring_queue_exit(&j->ring);
  if(j->fd >= 0)
    close(j->fd);
  free(j->bufs);
  free(j->slots);
  free(j->freel);
  free(j->pend);
  free(j->written);
  stats_free(&j->slat);
  stats_free(&j->clat);
  stats_free(&j->lat);
}

/* Check the options and the target; lay the file out when short. */
static int prepare(struct stg_opts *o, struct stg_result *r, char *err,
                   size_t errlen)
{
  uint64_t have;
  int blk, fd = open(o->filename, O_RDONLY);
  if(fd < 0 && errno == ENOENT && o->size)  /* fio creates it too */
    fd = open(o->filename, O_RDWR | O_CREAT, 0644);
  if(fd < 0) {
    snprintf(err, errlen, "open: %s: %s", o->filename, strerror(errno));
    return -1;
  }
  if(target_size(fd, &have, &blk)) {
    snprintf(err, errlen, "open: %s: size: %s", o->filename,
             strerror(errno));
    close(fd);
    return -1;
  }
  close(fd);
  if(!o->size) {
    if(have <= o->offset) {
      snprintf(err, errlen, "open: %s: empty (give a size)", o->filename);
      return -1;
    }
    o->size = have - o->offset;
  }
  o->size -= o->size % o->bs;
  if(!o->size) {
    snprintf(err, errlen, "open: size is smaller than bs %zu", o->bs);
    return -1;
  }
  if(have >= o->offset + o->size)
    return 0;
  if(blk) {
    snprintf(err, errlen, "open: %s: device has %llu bytes, the job needs "
             "%llu", o->filename, (unsigned long long)have,
             (unsigned long long)(o->offset + o->size));
    return -1;
  }
  if(is_write(o->rw) && !o->verify) {
    /* writers only need the space; fio fallocates it (fallocate=native) */
    fd = open(o->filename, O_RDWR);
    int rc = fd < 0 ? errno : posix_fallocate(fd, 0,
                                              (off_t)(o->offset + o->size));
    if(fd >= 0)
      close(fd);
    if(rc) {
      snprintf(err, errlen, "layout: %s: fallocate: %s", o->filename,
               strerror(rc));
      return -1;
    }
    return 0;
  }
  r->laid_out = 1;
  return lay_out(o->filename, have, o->offset + o->size, err, errlen);
}

int stg_run(const struct stg_opts *in, struct stg_result *r, char *err,
            size_t errlen)
{
  struct stg_opts o = *in;
  struct job *jobs = NULL;
  pthread_t *th = NULL;
  unsigned started = 0;
  int rc = -1;

  memset(r, 0, sizeof(*r));
  err[0] = 0;
  if(!o.bs || o.bs % STG_SECTOR || !o.iodepth || !o.numjobs ||
     o.offset % STG_SECTOR || stg_rw_name(o.rw)[0] == '?') {
    snprintf(err, errlen, "open: bad options (bs a multiple of 512, "
             "iodepth and numjobs >= 1)");
    return -1;
  }
  stg_opts_fixup(&o);
  if(prepare(&o, r, err, errlen))
    return -1;
  if(stats_init(&r->slat, 0) || stats_init(&r->clat, 0) ||
     stats_init(&r->lat, 0))
    goto out;
  jobs = calloc(o.numjobs, sizeof(*jobs));
  th = calloc(o.numjobs, sizeof(*th));
  if(!jobs || !th) {
    snprintf(err, errlen, "memory: %u jobs", o.numjobs);
    goto out;
  }
  for(unsigned i = 0; i < o.numjobs; i++) {
    jobs[i].o = &o;
    jobs[i].idx = i;
    jobs[i].fd = -1;
    jobs[i].region = o.size;
  }
  for(unsigned i = 0; i < o.numjobs; i++)
    if(job_open(&jobs[i], err, errlen))
      goto out;
  for(; started < o.numjobs; started++) {
    int e = pthread_create(&th[started], NULL, job_main, &jobs[started]);
    if(e) {
      snprintf(err, errlen, "memory: pthread_create: %s", strerror(e));
      break;
    }
  }
  for(unsigned i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  if(started < o.numjobs)
    goto out;
  rc = 0;
  double pct_usr = 0, pct_sys = 0;
  for(unsigned i = 0; i < o.numjobs; i++) {
    struct job *j = &jobs[i];
    double rt = (double)(j->t1 - j->t0) / 1e9;
    if(j->err[0] && !err[0]) {
      snprintf(err, errlen, "%s", j->err);
      rc = -1;
    }
    r->ios += j->ios;
    r->bytes += j->bytes;
    if(j->t1 - j->t0 > r->runtime_ns)
      r->runtime_ns = j->t1 - j->t0;
    if(j->verify_errors && !r->verify_errors)
      r->first_bad_offset = j->first_bad;
    r->verify_errors += j->verify_errors;
    r->verify_bytes += j->verify_bytes;
    r->usr_s += j->usr_s;
    r->sys_s += j->sys_s;
    r->ctx += j->ctx;
    r->enter_submit += j->enter_submit;
    r->enter_wait += j->enter_wait;
    if(rt > 0) {
      pct_usr += 100.0 * j->usr_s / rt;
      pct_sys += 100.0 * j->sys_s / rt;
    }
    if(stats_merge(&r->slat, &j->slat) || stats_merge(&r->clat, &j->clat) ||
       stats_merge(&r->lat, &j->lat)) {
      snprintf(err, errlen, "memory: latency samples");
      rc = -1;
    }
  }
  r->usr_pct = pct_usr / o.numjobs;
  r->sys_pct = pct_sys / o.numjobs;
out:
  for(unsigned i = 0; jobs && i < o.numjobs; i++)
    job_close(&jobs[i]);
  free(jobs);
  free(th);
  return rc;
}

void stg_opts_defaults(struct stg_opts *o)
{
  memset(o, 0, sizeof(*o));
  o->rw = STG_READ;
  o->bs = 4096;
  o->iodepth = 1;
  o->numjobs = 1;
  o->direct = 1;
  /* fio options.c: iodepth_batch "1", iodepth_batch_complete_min "1",
   * iodepth_batch_complete_max none (0: becomes the min, init.c) */
  o->batch_submit = 1;
  o->batch_complete_min = 1;
  o->batch_complete_max = 0;
}

/* fio's fixup_options (init.c at fio-3.33) */
void stg_opts_fixup(struct stg_opts *o)
{
  if(!o->batch_submit || o->batch_submit > o->iodepth)
    o->batch_submit = o->iodepth;
  if(o->batch_complete_min > o->batch_complete_max)
    o->batch_complete_max = o->batch_complete_min;
}

void stg_result_free(struct stg_result *r)
{
  stats_free(&r->slat);
  stats_free(&r->clat);
  stats_free(&r->lat);
}

int stg_probe_ring(char *err, size_t len)
{
  struct io_uring ring;
  int rc;
  if(uring_load()) {          /* liburing is opened on first use */
    snprintf(err, len, "%s", uring_load_error());
    return -1;
  }
  rc = io_uring_queue_init(1, &ring, 0);
  if(rc < 0) {
    snprintf(err, len, "io_uring_queue_init: %s", strerror(-rc));
    return -1;
  }
  io_uring_queue_exit(&ring);
  return 0;
}
