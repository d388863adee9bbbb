/*
 * workload.c - GET, PUT and mixed workloads on N threads (workload.h).
 * Multipart uploads live in mpload.c; both share the helpers in
 * workload_int.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpumem.h"
#include "payload.h"
#include "strata.h"
#include "workload.h"
#include "workload_int.h"

struct shared {
  const struct s3_config *cfg;
  const struct s3w_params *p;
  struct payload pl;
  struct s3w_clock clk;
  atomic_uint_fast64_t claimed;   /* recorded ops claimed (count mode) */
  atomic_uint_fast64_t seq;       /* op sequence: picks the key */
  pthread_rwlock_t go;            /* start gate: held by main until go */
};

struct worker {
  struct shared *sh;
  pthread_t tid;
  int id;
  struct s3_conn *conn;
  struct s3w_result r;            /* this thread's share */
  struct gpumem gm;               /* S3W_CUDA: pinned host + device */
  uint64_t rng;
  uint64_t last_end;              /* end of its last recorded op */
  int started;
};

static uint64_t xorshift(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

/*
 * The T3 path: GET lands whole in pinned host memory, then is copied to
 * the device; PUT first copies the device buffer to pinned memory.  The
 * copy counts in the operation's time (r->total_ns).  A failed copy ends
 * the run's usefulness: it is counted as an error "gpu copy".
 */
static int gpu_op(struct worker *w, struct s3_req *q, struct s3_resp *r,
                  int is_get, uint64_t idx, uint64_t want)
{
  struct shared *sh = w->sh;
  uint64_t base = 0;
  char err[256];

  w->gm.last_copy_s = 0;
  if(is_get) {
    struct payload_dst *d = q->sink_arg;
    base = d->base;
    q->sink = NULL;
    q->dst = w->gm.host;
    q->dst_cap = want;
    s3_perform(w->conn, q, r);
    if(r->fail || r->status < 200 || r->status >= 300 ||
       r->bytes_in != want)
      return 0;
    if(sh->p->verify &&
       payload_check(&sh->pl, idx, base, w->gm.host, (size_t)want))
      d->mismatch = 1;
    if(gpumem_to_device(&w->gm, want, err, sizeof(err)) == 0) {
      r->total_ns += (uint64_t)(w->gm.last_copy_s * 1e9);
      return 0;
    }
  }
  else if(gpumem_to_host(&w->gm, q->body_len, err, sizeof(err)) == 0) {
    /* the key's stamp: what a GET later checks (payload.h) */
    payload_fill(&sh->pl, idx, 0, w->gm.host,
                 q->body_len < 16 ? (size_t)q->body_len : 16);
    q->source = NULL;
    q->body = w->gm.host;
    s3_perform(w->conn, q, r);
    r->total_ns += (uint64_t)(w->gm.last_copy_s * 1e9);
    return 0;
  }
  memset(r, 0, sizeof(*r));
  w->r.errors++;
  s3w_count_error(&w->r, 0, "gpu copy", 1);
  if(!w->r.first_error[0])
    snprintf(w->r.first_error, sizeof(w->r.first_error), "%s", err);
  return -1;
}

/* One GET or PUT of key `idx`; records it when measured. */
static void one_op(struct worker *w, int is_get, uint64_t idx, int measured)
{
  struct shared *sh = w->sh;
  const struct s3w_params *p = sh->p;
  struct sigv4_header range;
  char key[512], rv[96];
  struct s3_req q = { 0 };
  struct s3_resp r;
  struct payload_src src = { &sh->pl, idx, 0 };
  struct payload_dst dst = { &sh->pl, idx, 0, p->verify, 0 };
  uint64_t want = p->size;

  snprintf(key, sizeof(key), "%s%llu", p->prefix, (unsigned long long)idx);
  q.bucket = p->bucket;
  q.key = key;
  if(is_get) {
    q.method = "GET";
    q.sink = payload_sink;
    q.sink_arg = &dst;
    if(p->range_len && p->range_len < p->size) {
      uint64_t off = xorshift(&w->rng) % (p->size - p->range_len + 1);
      snprintf(rv, sizeof(rv), "bytes=%llu-%llu", (unsigned long long)off,
               (unsigned long long)(off + p->range_len - 1));
      range.name = "Range";
      range.value = rv;
      q.headers = &range;
      q.nheaders = 1;
      dst.base = off;
      want = p->range_len;
    }
  }
  else {
    q.method = "PUT";
    q.source = payload_source;
    q.source_arg = &src;
    q.body_len = p->size;
  }
  if(p->memory == S3W_CUDA) {
    if(gpu_op(w, &q, &r, is_get, idx, want))
      return;
  }
  else
    s3_perform(w->conn, &q, &r);
  if(!measured) {
    w->r.warmup_ops++;
    w->r.warmup_bytes += is_get ? r.bytes_in : r.bytes_out;
    s3_resp_free(&r);
    return;
  }
  w->last_end = strata_now_ns();
  if(r.fail || r.status < 200 || r.status >= 300)
    s3w_record_failure(&w->r, &q, &r);
  else if(is_get && r.bytes_in != want) {
    s3w_count_error(&w->r, r.status, "ShortBody", 1);
    w->r.errors++;
  }
  else {
    double lat = (double)r.total_ns / 1e9;
    uint64_t moved = is_get ? r.bytes_in : r.bytes_out;
    w->r.ops++;
    w->r.bytes += moved;
    stats_add(&w->r.lat, lat);
    stats_add(&w->r.ttfb, (double)r.ttfb_ns / 1e9);
    if(is_get) {
      w->r.get_ops++;
      w->r.get_bytes += moved;
      stats_add(&w->r.lat_get, lat);
      if(dst.mismatch)
        w->r.verify_failures++;
      w->r.gpu_copy_s += w->gm.last_copy_s;
    }
    else {
      w->r.put_ops++;
      w->r.put_bytes += moved;
      stats_add(&w->r.lat_put, lat);
      w->r.gpu_copy_s += w->gm.last_copy_s;
    }
  }
  s3_resp_free(&r);
}

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct shared *sh = w->sh;
  const struct s3w_params *p = sh->p;

  pthread_rwlock_rdlock(&sh->go);
  pthread_rwlock_unlock(&sh->go);
  for(;;) {
    uint64_t now = strata_now_ns(), seq;
    int measured = now >= sh->clk.t_measure, is_get;
    /* past the window's end no op starts, except a thread's first
     * recorded one (objects slower than the window still get measured) */
    if(strata_stop_flag || (sh->clk.t_deadline &&
                            now >= sh->clk.t_deadline &&
                            w->r.ops + w->r.errors > 0))
      break;
    if(p->count && measured &&
       atomic_fetch_add(&sh->claimed, 1) >= p->count)
      break;
    seq = atomic_fetch_add(&sh->seq, 1);
    if(p->op == S3W_MIXED)
      /* op seq is a GET when floor((seq + 1) r) > floor(seq r): of the
       * first n ops floor(n r) are GETs, the share exact however short the
       * window (random draws, 8 ops in the lab's 2 s, missed a 0.25
       * tolerance about one run in ten) */
      is_get = (uint64_t)((double)(seq + 1) * p->get_ratio) >
               (uint64_t)((double)seq * p->get_ratio);
    else
      is_get = p->op == S3W_GET;
    one_op(w, is_get, seq % (uint64_t)p->objects, measured);
  }
  return NULL;
}

/* PUT every key once (GET and mixed runs read existing objects). */
static int prepare(struct shared *sh, struct s3_conn *c,
                   struct s3w_result *res, char *err, size_t cap)
{
  const struct s3w_params *p = sh->p;
  for(int i = 0; i < p->objects; i++) {
    struct payload_src src = { &sh->pl, (uint64_t)i, 0 };
    struct s3_req q = { 0 };
    struct s3_resp r;
    char key[512];
    snprintf(key, sizeof(key), "%s%d", p->prefix, i);
    q.method = "PUT";
    q.bucket = p->bucket;
    q.key = key;
    q.source = payload_source;
    q.source_arg = &src;
    q.body_len = p->size;
    s3_perform(c, &q, &r);
    if(r.fail || r.status < 200 || r.status >= 300) {
      char d[400];
      s3_describe(&q, &r, d, sizeof(d));
      snprintf(err, cap, "preparing the objects: %s", d);
      s3_resp_free(&r);
      return -1;
    }
    res->prepare_bytes += r.bytes_out;
    s3_resp_free(&r);
  }
  return 0;
}

static int run_gpm(const struct s3_config *cfg, const struct s3w_params *p,
                   struct s3w_result *res, char *err, size_t cap)
{
  struct shared sh;
  struct worker *w;
  struct s3w_cpu cpu0, cpu1;
  int n = p->concurrency, rc = -1, started = 0;
  uint64_t gbuf;

  memset(&sh, 0, sizeof(sh));
  sh.cfg = cfg;
  sh.p = p;
  pthread_rwlock_init(&sh.go, NULL);
  w = calloc((size_t)n, sizeof(*w));
  if(!w || payload_init(&sh.pl, p->size, p->seed)) {
    snprintf(err, cap, "out of memory");
    free(w);
    return -1;
  }
  /* GPU memory: whole-object pinned buffers (PUT reads, GET copies
   * them); host memory needs none (payload.h) */
  gbuf = p->size;
  if(p->memory == S3W_CUDA && gbuf * (uint64_t)n > p->host_buffer_max) {
    snprintf(err, cap, "GPU memory needs %d whole-object buffers of %llu "
             "bytes: more than host_buffer_max", n,
             (unsigned long long)gbuf);
    payload_free(&sh.pl);
    free(w);
    return -1;
  }
  for(int i = 0; i < n; i++) {
    w[i].sh = &sh;
    w[i].id = i;
    w[i].rng = p->seed * 2654435761u + (uint64_t)i * 0x9e3779b9u + 1;
    w[i].conn = s3_conn_new(cfg);
    if(p->memory == S3W_CUDA) {
      int g = gpumem_open(&w[i].gm, p->device, gbuf ? gbuf : 1, &sh.pl,
                          err, cap);
      if(g) {
        rc = g;
        goto out;
      }
    }
    if(!w[i].conn || s3w_result_init(&w[i].r)) {
      snprintf(err, cap, "out of memory for %d connections", n);
      goto out;
    }
  }
  if(p->prepare && p->op != S3W_PUT &&
     prepare(&sh, w[0].conn, res, err, cap))
    goto out;
  pthread_rwlock_wrlock(&sh.go);         /* the start gate: closed */
  for(int i = 0; i < n; i++) {
    if(s3w_spawn(&w[i].tid, worker_main, &w[i])) {
      snprintf(err, cap, "cannot start thread %d of %d", i + 1, n);
      break;
    }
    w[i].started = 1;
    started++;
  }
  if(started < n) {
    sh.clk.t_deadline = 1;               /* those started stop at once */
    pthread_rwlock_unlock(&sh.go);
    for(int i = 0; i < started; i++)
      pthread_join(w[i].tid, NULL);
    goto out;
  }
  s3w_clock_start(&sh.clk, p);
  pthread_rwlock_unlock(&sh.go);         /* open the gate: all start */
  s3w_wait_measure(&sh.clk);
  s3w_cpu_sample(&cpu0);
  for(int i = 0; i < n; i++)
    pthread_join(w[i].tid, NULL);
  s3w_cpu_sample(&cpu1);
  for(int i = 0; i < n; i++) {
    if(s3w_result_merge(res, &w[i].r)) {
      snprintf(err, cap, "out of memory merging samples");
      goto out;
    }
    if(w[i].last_end > sh.clk.t_end)
      sh.clk.t_end = w[i].last_end;
  }
  s3w_finish(res, &sh.clk, &cpu0, &cpu1);
  rc = 0;
out:
  for(int i = 0; i < n; i++) {
    s3_conn_free(&w[i].conn);
    gpumem_close(&w[i].gm);
    s3w_result_free(&w[i].r);
  }
  free(w);
  payload_free(&sh.pl);
  pthread_rwlock_destroy(&sh.go);
  return rc;
}

int s3w_run(const struct s3_config *cfg, const struct s3w_params *p,
            struct s3w_result *res, char *err, size_t cap)
{
  memset(res, 0, sizeof(*res));
  if(s3w_result_init(res)) {
    snprintf(err, cap, "out of memory");
    return -1;
  }
  if(p->op == S3W_MULTIPART && p->memory != S3W_HOST) {
    snprintf(err, cap, "multipart uploads from GPU memory are not "
             "implemented");
    return S3W_ABSENT;
  }
  if(p->op == S3W_MULTIPART)
    return s3w_multipart(cfg, p, res, err, cap);
  return run_gpm(cfg, p, res, err, cap);
}
