/*
 * mpload.c - the multipart workload: objects of p->size uploaded one
 * after another, each in parts of p->part_size with p->concurrency parts
 * in flight (one connection per thread), then completed.
 *
 * Recorded: each part as an operation (latency, TTFB), bytes of parts
 * that succeeded, objects completed (mp_uploads) and each object's wall
 * time from create to complete (lat_put).  A failed part fails its
 * object: the upload is aborted and the run goes on with the next one.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multipart.h"
#include "payload.h"
#include "strata.h"
#include "workload_int.h"

struct mp_shared {
  const struct s3w_params *p;
  struct payload pl;
  pthread_rwlock_t gate;         /* held by main until all threads run */
  pthread_barrier_t start, done;
  int quit;
  /* the object in progress */
  char key[512];
  char id[512];
  uint64_t index;
  int nparts;
  int measured;
  atomic_int next;               /* next part number to claim, from 1 */
  atomic_int failed;
  struct s3_part *parts;
};

struct mp_worker {
  struct mp_shared *sh;
  pthread_t tid;
  struct s3_conn *conn;
  struct s3w_result r;
};

static void upload_parts(struct mp_worker *w)
{
  struct mp_shared *sh = w->sh;
  const struct s3w_params *p = sh->p;
  for(;;) {
    int n = atomic_fetch_add(&sh->next, 1);
    uint64_t base, len;
    struct payload_src src;
    struct s3_resp r;
    char etag[80];
    if(n > sh->nparts || atomic_load(&sh->failed) || strata_stop_flag)
      return;
    base = (uint64_t)(n - 1) * p->part_size;
    len = p->size - base < p->part_size ? p->size - base : p->part_size;
    src.pl = &sh->pl;
    src.index = sh->index;
    src.base = base;
    if(s3_mp_part(w->conn, p->bucket, sh->key, sh->id, n, NULL, len,
                  payload_source, &src, etag, &r)) {
      struct s3_req q = { .method = "PUT", .bucket = p->bucket,
                          .key = sh->key };
      atomic_store(&sh->failed, 1);
      if(sh->measured)
        s3w_record_failure(&w->r, &q, &r);
    }
    else {
      snprintf(sh->parts[n - 1].etag, sizeof(sh->parts[0].etag), "%s", etag);
      sh->parts[n - 1].number = n;
      if(sh->measured) {
        w->r.ops++;
        w->r.put_ops++;
        w->r.bytes += r.bytes_out;
        w->r.put_bytes += r.bytes_out;
        stats_add(&w->r.lat, (double)r.total_ns / 1e9);
        stats_add(&w->r.ttfb, (double)r.ttfb_ns / 1e9);
      }
    }
    s3_resp_free(&r);
  }
}

static void *mp_worker_main(void *arg)
{
  struct mp_worker *w = arg;
  pthread_rwlock_rdlock(&w->sh->gate);
  pthread_rwlock_unlock(&w->sh->gate);
  if(w->sh->quit)
    return NULL;
  for(;;) {
    pthread_barrier_wait(&w->sh->start);
    if(w->sh->quit)
      return NULL;
    upload_parts(w);
    pthread_barrier_wait(&w->sh->done);
  }
}

/* Create, upload (workers), complete or abort one object. */
static void one_object(struct mp_shared *sh, struct s3_conn *c,
                       struct s3w_result *res, uint64_t obj)
{
  const struct s3w_params *p = sh->p;
  struct s3_req q = { .method = "POST", .bucket = p->bucket,
                      .key = sh->key };
  struct s3_resp r;
  uint64_t t0 = strata_now_ns();

  snprintf(sh->key, sizeof(sh->key), "%s%llu", p->prefix,
           (unsigned long long)(obj % (uint64_t)p->objects));
  sh->index = obj % (uint64_t)p->objects;
  if(s3_mp_create(c, p->bucket, sh->key, sh->id, sizeof(sh->id), &r)) {
    if(sh->measured)
      s3w_record_failure(res, &q, &r);
    s3_resp_free(&r);
    return;
  }
  s3_resp_free(&r);
  atomic_store(&sh->next, 1);
  atomic_store(&sh->failed, 0);
  pthread_barrier_wait(&sh->start);
  pthread_barrier_wait(&sh->done);
  if(atomic_load(&sh->failed) || strata_stop_flag) {
    (void)s3_mp_abort(c, p->bucket, sh->key, sh->id, &r);
    s3_resp_free(&r);
    return;
  }
  if(s3_mp_complete(c, p->bucket, sh->key, sh->id, sh->parts,
                    (size_t)sh->nparts, &r)) {
    if(sh->measured)
      s3w_record_failure(res, &q, &r);
    s3_resp_free(&r);
    s3_mp_abort(c, p->bucket, sh->key, sh->id, &r);
    s3_resp_free(&r);
    return;
  }
  s3_resp_free(&r);
  if(sh->measured) {
    res->mp_uploads++;
    stats_add(&res->lat_put, (double)(strata_now_ns() - t0) / 1e9);
  }
}

int s3w_multipart(const struct s3_config *cfg, const struct s3w_params *p,
                  struct s3w_result *res, char *err, size_t cap)
{
  struct mp_shared sh;
  struct mp_worker *w;
  struct s3_conn *c;
  struct s3w_clock clk;
  struct s3w_cpu cpu0, cpu1;
  int n = p->concurrency, started = 0, rc = -1;
  uint64_t obj = 0, recorded = 0;

  memset(&sh, 0, sizeof(sh));
  sh.p = p;
  pthread_rwlock_init(&sh.gate, NULL);
  if(!p->part_size) {
    snprintf(err, cap, "multipart needs a part size");
    return -1;
  }
  sh.nparts = (int)((p->size + p->part_size - 1) / p->part_size);
  if(sh.nparts < 1 || sh.nparts > 10000) {
    snprintf(err, cap, "%d parts: S3 allows 1 to 10000", sh.nparts);
    return -1;
  }
  w = calloc((size_t)n, sizeof(*w));
  sh.parts = calloc((size_t)sh.nparts, sizeof(*sh.parts));
  c = s3_conn_new(cfg);
  if(!w || !sh.parts || !c || payload_init(&sh.pl, p->size, p->seed)) {
    snprintf(err, cap, "out of memory");
    goto out_free;
  }
  for(int i = 0; i < n; i++) {
    w[i].sh = &sh;
    w[i].conn = s3_conn_new(cfg);
    if(!w[i].conn || s3w_result_init(&w[i].r)) {
      snprintf(err, cap, "out of memory for %d connections", n);
      goto out_free;
    }
  }
  pthread_barrier_init(&sh.start, NULL, (unsigned)n + 1);
  pthread_barrier_init(&sh.done, NULL, (unsigned)n + 1);
  pthread_rwlock_wrlock(&sh.gate);
  for(; started < n; started++)
    if(s3w_spawn(&w[started].tid, mp_worker_main, &w[started]))
      break;
  if(started < n) {
    snprintf(err, cap, "cannot start thread %d of %d", started + 1, n);
    sh.quit = 1;                  /* those started return at the gate */
  }
  pthread_rwlock_unlock(&sh.gate);
  if(started < n) {
    for(int i = 0; i < started; i++)
      pthread_join(w[i].tid, NULL);
    goto out;
  }
  s3w_clock_start(&clk, p);
  s3w_cpu_sample(&cpu0);
  for(;;) {
    uint64_t now = strata_now_ns();
    if(strata_stop_flag || (clk.t_deadline && now >= clk.t_deadline &&
                            recorded > 0))
      break;
    sh.measured = now >= clk.t_measure;
    if(sh.measured && p->count && recorded >= p->count)
      break;
    one_object(&sh, c, res, obj++);
    if(sh.measured) {
      recorded++;
      clk.t_end = strata_now_ns();
    }
    else
      res->warmup_ops++;
  }
  s3w_cpu_sample(&cpu1);
  sh.quit = 1;
  pthread_barrier_wait(&sh.start);
  for(int i = 0; i < n; i++) {
    pthread_join(w[i].tid, NULL);
    if(s3w_result_merge(res, &w[i].r)) {
      snprintf(err, cap, "out of memory merging samples");
      goto out;
    }
  }
  s3w_finish(res, &clk, &cpu0, &cpu1);
  rc = 0;
out:
  pthread_barrier_destroy(&sh.start);
  pthread_barrier_destroy(&sh.done);
out_free:
  for(int i = 0; w && i < n; i++) {
    s3_conn_free(&w[i].conn);
    s3w_result_free(&w[i].r);
  }
  s3_conn_free(&c);
  free(w);
  free(sh.parts);
  payload_free(&sh.pl);
  pthread_rwlock_destroy(&sh.gate);
  return rc;
}
