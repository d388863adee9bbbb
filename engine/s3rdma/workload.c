/*
 * workload.c - the measuring engine of the s3rdma family (workload.h).
 *
 * Method (docs/s3-rdma.md, "Measurement"): `concurrency` threads each own
 * one HTTP connection (plus, for RDMA, one CQ + RC QP and one registered
 * buffer) and take request numbers from a shared counter until
 * `requests` are done; one request in flight per thread.  A request's
 * latency runs from its first byte sent to its data verified present
 * (RDMA: the completion; HTTP: the last body byte).  Throughput = bytes
 * moved / wall time of the whole run.  CPU = this process's user+system
 * time over the run (getrusage), as a share of one core.  Filling PUT
 * buffers and checking GET bytes is outside the timed part of a request.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cuda.h"
#include "cuobj.h"
#include "multipart.h"
#include "pattern.h"
#include "rc_client.h"
#include "single.h"
#include "strata.h"
#include "verbs.h"
#include "workload.h"

struct shared {
  const struct s3rdma_run_opts *o;
  struct verbs_dev *dev;               /* RC mode */
  atomic_int next;
  atomic_int bound;                    /* workers with a CUDA context */
  int tasks;                           /* requests, or uploads x parts */
  int nparts;
  uint64_t deadline_ns;
  char (*upload_id)[128];              /* multipart, per object */
  struct s3_part *parts;               /* [object * nparts + part - 1] */
  pthread_mutex_t lock;                /* first_error */
  struct s3rdma_run_result *res;
};

struct worker {
  struct shared *sh;
  pthread_t tid;
  struct s3_conn *conn;
  struct s3rdma_rc rc;
  int rc_open;
  struct s3rdma_cuobj *cuobj;          /* cuObject provider */
  void *gpu;                           /* CUDA device buffer, or NULL */
  int dmabuf_fd;                       /* its dma-buf (RDMA), or -1 */
  struct verbs_buf vbuf;               /* RC: registered */
  void *mem;                           /* TCP, cuObject: plain */
  size_t cap;
  struct stats_samples lat;
  uint64_t ok, declined, failed, bytes, fb_req, fb_bytes, reply_ok;
  uint64_t landed_ok, verified, verify_errors, get_b, put_b;
};

static void note_error(struct shared *sh, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void note_error(struct shared *sh, const char *fmt, ...)
{
  va_list ap;
  pthread_mutex_lock(&sh->lock);
  if(!sh->res->first_error[0]) {
    va_start(ap, fmt);
    vsnprintf(sh->res->first_error, sizeof(sh->res->first_error), fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&sh->lock);
}

/* Keep the first cuObject descriptor's decoded fields for the result. */
static void note_token(struct shared *sh, const char *desc)
{
  struct s3rdma_cuobj_desc d;
  char why[120];
  pthread_mutex_lock(&sh->lock);
  if(!sh->res->token_decoded[0] &&
     !s3rdma_cuobj_desc_parse(desc, strlen(desc), &d, why, sizeof(why)))
    s3rdma_cuobj_desc_describe(&d, sh->res->token_decoded,
                               sizeof(sh->res->token_decoded));
  pthread_mutex_unlock(&sh->lock);
}

static void *buf_ptr(struct worker *w)
{
  return w->mem ? w->mem : w->vbuf.addr;
}

static void object_key(const struct s3rdma_run_opts *o, int obj, char *out,
                       size_t cap)
{
  snprintf(out, cap, "%s%d", o->prefix, obj);
}

/* One plain-HTTP transfer; 0 when it moved len bytes. */
static int http_xfer(struct worker *w, int put, const char *key, int part,
                     const char *upload_id, uint64_t off, uint64_t len,
                     int ranged, char etag[80], char *err, size_t cap)
{
  const struct s3rdma_run_opts *o = w->sh->o;
  struct s3_req q;
  struct s3_resp r;
  struct sigv4_header h[1];
  char range[64];
  int rc = -1;

  if(part > 0) {
    rc = s3_mp_part(w->conn, o->bucket, key, upload_id, part, buf_ptr(w),
                    len, NULL, NULL, etag, &r);
    if(rc)
      snprintf(err, cap, "UploadPart %s part %d: HTTP %ld %s %s", key, part,
               r.status, r.code, r.error);
    s3_resp_free(&r);
    return rc;
  }
  memset(&q, 0, sizeof(q));
  q.method = put ? "PUT" : "GET";
  q.bucket = o->bucket;
  q.key = key;
  if(put) {
    q.body = buf_ptr(w);
    q.body_len = len;
  }
  else {
    q.dst = buf_ptr(w);
    q.dst_cap = w->cap;
    if(ranged) {
      snprintf(range, sizeof(range), "bytes=%llu-%llu",
               (unsigned long long)off, (unsigned long long)(off + len - 1));
      h[0] = (struct sigv4_header){ "range", range };
      q.headers = h;
      q.nheaders = 1;
    }
  }
  s3_perform(w->conn, &q, &r);
  if(r.fail != S3_OK)
    snprintf(err, cap, "%s %s: %s: %s", q.method, key, s3_strfail(r.fail),
             r.error);
  else if(r.status / 100 != 2)
    snprintf(err, cap, "%s %s: HTTP %ld %s", q.method, key, r.status,
             r.code);
  else if(!put && r.bytes_in != len)
    snprintf(err, cap, "GET %s: %llu bytes, expected %llu", key,
             (unsigned long long)r.bytes_in, (unsigned long long)len);
  else
    rc = 0;
  if(!rc && etag)
    (void)s3_resp_header(&r, "etag", etag, 80);
  s3_resp_free(&r);
  return rc;
}

/* One task: which object (and part, range), its key and pattern seed. */
struct task {
  int obj, part, put, ranged;
  uint64_t off, len, seed;
  const char *upload_id;
  char key[512];
};

static void plan(const struct worker *w, int t, struct task *k)
{
  const struct shared *sh = w->sh;
  const struct s3rdma_run_opts *o = sh->o;

  memset(k, 0, sizeof(*k));
  k->put = o->op != S3RDMA_OP_GET;
  k->len = o->size;
  if(o->op == S3RDMA_OP_MULTIPART) {
    k->obj = t / sh->nparts;
    k->part = t % sh->nparts + 1;
    k->off = (uint64_t)(k->part - 1) * o->part_size;
    k->len = o->size - k->off < o->part_size ? o->size - k->off
                                             : o->part_size;
    k->upload_id = sh->upload_id[k->obj];
  }
  else {
    k->obj = t % o->objects;
    if(o->op == S3RDMA_OP_GET && o->range_len) {
      k->off = o->range_off;
      k->len = o->range_len;
      k->ranged = 1;
    }
  }
  object_key(o, k->obj, k->key, sizeof(k->key));
  k->seed = s3rdma_pattern_seed(o->seed, (uint64_t)k->obj);
}

/* Through cuObject: a token for the buffer, its form checked, the
 * transfer; the outcome in *oc as the RC client would give it. */
static void cuobj_xfer(struct worker *w, const struct task *k,
                       struct s3rdma_outcome *oc)
{
  struct shared *sh = w->sh;
  const struct s3rdma_run_opts *o = sh->o;
  struct s3rdma_single q = {
    .put = k->put, .bucket = o->bucket, .key = k->key, .part = k->part,
    .upload_id = k->upload_id, .size = k->len, .offset = k->off,
    .ranged = k->ranged
  };
  char why[300], *tok, form[S3RDMA_CUOBJ_DESC_LEN + 40];
  void *bp = w->gpu ? w->gpu : w->mem;
  memset(oc, 0, sizeof(*oc));
  tok = s3rdma_cuobj_token(w->cuobj, bp, w->cap, 0, (size_t)k->len, k->put,
                           why, sizeof(why));
  /* the descriptor's form is checked before it is sent */
  if(tok && s3rdma_cuobj_token_form(tok, o->contract,
                                    (uint64_t)(uintptr_t)bp, k->len, form,
                                    sizeof(form), why, sizeof(why))) {
    free(tok);
    tok = NULL;
    snprintf(why + strlen(why), sizeof(why) - strlen(why),
             " (cuMemObjGetRDMAToken gave no 81-char descriptor)");
  }
  if(tok)
    note_token(sh, tok);
  if(!tok) {
    oc->status = S3RDMA_FAILED;
    oc->step = "token";
    snprintf(oc->error, sizeof(oc->error), "%s", why);
  }
  else {
    q.token = form;
    s3rdma_single_transfer(w->conn, &q, oc);
    free(tok);
    /* witness 2 for a GET is the byte check below; for a PUT the
     * read-back: no completion is visible to a cuObject client */
    oc->landed_ok = oc->status == S3RDMA_OK;
    oc->bytes_landed = oc->status == S3RDMA_OK ? k->len : 0;
  }
}

/* An RDMA outcome counted (a decline falls back to HTTP when allowed);
 * 0, or -1 when the task failed (noted). */
static int rdma_account(struct worker *w, const struct task *k,
                        const struct s3rdma_outcome *oc, char *etag,
                        size_t etaglen)
{
  struct shared *sh = w->sh;
  char err[400];
  /* one account for both RDMA providers: a cuObject outcome lands
   * bytes_landed = len when OK, as the RC client reports them */
  w->reply_ok += oc->reply_ok;
  w->landed_ok += oc->landed_ok;
  if(oc->status == S3RDMA_DECLINED) {
    w->declined++;
    if(!sh->o->http_fallback) {
      note_error(sh, "%s %s: %s", k->put ? "PUT" : "GET", k->key,
                 oc->error);
      return -1;
    }
    if(http_xfer(w, k->put, k->key, k->part, k->upload_id, k->off, k->len,
                 k->ranged, etag, err, sizeof(err))) {
      w->failed++;
      note_error(sh, "HTTP fallback: %s", err);
      return -1;
    }
    w->fb_req++;
    w->fb_bytes += k->len;
  }
  else if(oc->status != S3RDMA_OK) {
    w->failed++;
    note_error(sh, "%s %s: %s: %s", k->put ? "PUT" : "GET", k->key,
               oc->step, oc->error);
    return -1;
  }
  else {
    w->bytes += oc->bytes_landed;
    if(k->put)
      w->put_b += oc->bytes_landed;
    else
      w->get_b += oc->bytes_landed;
    snprintf(etag, etaglen, "%s", oc->etag);
  }
  return 0;
}

/* Over HTTP (GPU memory: through host memory, the copy counted in the
 * operation); 0, or -1 when the task failed (noted). */
static int http_task(struct worker *w, const struct task *k, char *etag)
{
  struct shared *sh = w->sh;
  char err[400];
  if(http_xfer(w, k->put, k->key, k->part, k->upload_id, k->off, k->len,
               k->ranged, etag, err, sizeof(err))) {
    w->failed++;
    note_error(sh, "%s", err);
    return -1;
  }
  if(w->gpu && !k->put &&
     cuda_copy(w->gpu, buf_ptr(w), (size_t)k->len, err, sizeof(err))) {
    w->failed++;
    note_error(sh, "host -> GPU copy: %s", err);
    return -1;
  }
  w->bytes += k->len;
  return 0;
}

/* After the transfer: the part's ETag kept, a GET's bytes checked. */
static void finish(struct worker *w, const struct task *k, const char *etag)
{
  struct shared *sh = w->sh;
  if(k->part > 0) {
    struct s3_part *p = &sh->parts[k->obj * sh->nparts + k->part - 1];
    p->number = k->part;
    snprintf(p->etag, sizeof(p->etag), "%s", etag);
  }
  if(!k->put && sh->o->verify) {
    int64_t bad = s3rdma_pattern_check(buf_ptr(w), k->seed, k->off,
                                       (size_t)k->len);
    w->verified++;
    if(bad >= 0) {
      w->verify_errors++;
      w->ok--;                  /* undone below: counted as failed */
      w->failed++;
      note_error(sh, "GET %s: RDMA not proven: the bytes that landed "
                 "differ from the object at offset %llu", k->key,
                 (unsigned long long)(k->off + (uint64_t)bad));
    }
  }
  w->ok++;
}

static void one_task(struct worker *w, int t)
{
  struct shared *sh = w->sh;
  const struct s3rdma_run_opts *o = sh->o;
  struct task k;
  uint64_t t0;
  char err[400], etag[80] = "";
  struct s3rdma_outcome oc;

  plan(w, t, &k);
  if(k.put)
    s3rdma_pattern_fill(buf_ptr(w), k.seed, k.off, (size_t)k.len);
  else
    memset(buf_ptr(w), 0, (size_t)k.len);
  if(w->gpu && o->mode != S3RDMA_MODE_TCP &&
     (k.put ? cuda_copy(w->gpu, buf_ptr(w), (size_t)k.len, err,
                        sizeof(err)) :
      cuda_memset(o->gpu_device, w->gpu, 0, (size_t)k.len, err,
                  sizeof(err)))) {
    w->failed++;
    sh->res->gpu_copy_errors++;
    note_error(sh, "GPU staging: %s", err);
    return;
  }

  t0 = strata_now_ns();
  /* HTTP with GPU memory: the object comes from / goes to the GPU
   * through host memory, and the copy is part of the operation */
  if(w->gpu && o->mode == S3RDMA_MODE_TCP && k.put &&
     cuda_copy(buf_ptr(w), w->gpu, (size_t)k.len, err, sizeof(err))) {
    w->failed++;
    note_error(sh, "GPU -> host copy: %s", err);
    return;
  }
  if(o->mode == S3RDMA_MODE_CUOBJ)
    cuobj_xfer(w, &k, &oc);
  if(o->mode == S3RDMA_MODE_RC) {
    struct s3rdma_xfer x = {
      .put = k.put, .bucket = o->bucket, .key = k.key, .part = k.part,
      .upload_id = k.upload_id, .size = k.len, .offset = k.off,
      .has_offset = k.ranged, .buf = &w->vbuf, .buf_off = 0
    };
    s3rdma_rc_transfer(&w->rc, &x, &oc);
  }
  if(o->mode != S3RDMA_MODE_TCP
       ? rdma_account(w, &k, &oc, etag, sizeof(etag))
       : http_task(w, &k, etag))
    return;
  (void)stats_add(&w->lat, (double)(strata_now_ns() - t0) / 1e6);
  /* RDMA into GPU memory: bring the bytes back to check them */
  if(w->gpu && !k.put && o->verify && o->mode != S3RDMA_MODE_TCP &&
     cuda_copy(buf_ptr(w), w->gpu, (size_t)k.len, err, sizeof(err))) {
    w->failed++;
    sh->res->gpu_copy_errors++;
    note_error(sh, "GPU -> host copy for the check: %s", err);
    return;
  }
  finish(w, &k, etag);
}

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct shared *sh = w->sh;
  char err[300];
  /* a current CUDA context in every worker thread, before the first
   * copy or cuObject registration (cuda_bind) */
  if(w->gpu && cuda_bind(sh->o->gpu_device, err, sizeof(err))) {
    note_error(sh, "CUDA context for worker thread: %s", err);
    return NULL;
  }
  if(w->gpu)
    atomic_fetch_add(&sh->bound, 1);
  for(;;) {
    int t = atomic_fetch_add(&sh->next, 1);
    if(t >= sh->tasks || strata_stop_flag ||
       (sh->deadline_ns && strata_now_ns() > sh->deadline_ns))
      break;
    one_task(w, t);
  }
  return NULL;
}

/* Map a cuda_status to worker_open's: -2 absent (SKIP), -1 failed. */
static int cuda_rc(int st)
{
  return st == CUDA_ABSENT ? -2 : -1;
}

static int worker_open(struct worker *w, char *err, size_t cap)
{
  const struct s3rdma_run_opts *o = w->sh->o;
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                     IBV_ACCESS_REMOTE_READ;
  int st;

  w->dmabuf_fd = -1;
  if(stats_init(&w->lat, 1024) ||
     !(w->conn = s3_conn_new(o->data_cfg))) {
    snprintf(err, cap, "out of memory");
    return -1;
  }
  if(o->gpu_memory) {
    uint64_t off = 0, length = 0;
    /* host memory for filling and checking, the GPU for the transfer */
    if(!(w->mem = aligned_alloc(4096, (w->cap + 4095) & ~(size_t)4095))) {
      snprintf(err, cap, "cannot allocate %zu bytes", w->cap);
      return -1;
    }
    st = cuda_alloc(o->gpu_device, w->cap, CUDA_MEM_DEVICE, &w->gpu, err,
                    cap);
    if(st)
      return cuda_rc(st);
    if(o->mode == S3RDMA_MODE_RC) {
      enum verbs_code vc;
      st = cuda_dmabuf_export(w->gpu, w->cap, &w->dmabuf_fd, &off, &length,
                              err, cap);
      if(st)
        return cuda_rc(st);
      vc = verbs_buf_dmabuf(w->sh->dev, &w->vbuf, w->dmabuf_fd, off, w->cap,
                            (uint64_t)(uintptr_t)w->gpu, access);
      if(vc) {
        snprintf(err, cap, "GPU memory RDMA (GPUDirect): %s",
                 verbs_errmsg());
        return vc == VERBS_EUNSUPPORTED ? -2 : -1;
      }
    }
  }
  if(o->mode == S3RDMA_MODE_RC) {
    if((!o->gpu_memory &&
        verbs_buf_host(w->sh->dev, &w->vbuf, w->cap, 0, -1, access)) ||
       s3rdma_rc_open(&w->rc, w->sh->dev, o->ctrl_cfg)) {
      snprintf(err, cap, "%s", verbs_errmsg());
      return -1;
    }
    w->rc_open = 1;
    s3rdma_rc_host_no_port(&w->rc, o->ctrl_cfg->endpoint,
                           !o->ctrl_host_port);
    if(o->landing_grace_s > 0)
      w->rc.landing_grace_ns = (uint64_t)(o->landing_grace_s * 1e9);
    if(o->put_grace_s >= 0)
      w->rc.put_grace_ns = (uint64_t)(o->put_grace_s * 1e9);
  }
  else if(!w->mem &&
          !(w->mem = aligned_alloc(4096, (w->cap + 4095) & ~(size_t)4095))) {
    snprintf(err, cap, "cannot allocate %zu bytes", w->cap);
    return -1;
  }
  if(o->mode == S3RDMA_MODE_CUOBJ &&
     !(w->cuobj = s3rdma_cuobj_open(err, cap)))
    return -2;                         /* a prerequisite is absent */
  return 0;
}

static void worker_close(struct worker *w)
{
  s3rdma_cuobj_close(&w->cuobj);
  if(w->gpu) {
    verbs_buf_free(&w->vbuf);
    cuda_free(&w->gpu, CUDA_MEM_DEVICE);
  }
  if(w->dmabuf_fd >= 0)
    close(w->dmabuf_fd);
  w->dmabuf_fd = -1;
  if(w->rc_open)
    s3rdma_rc_close(&w->rc);
  verbs_buf_free(&w->vbuf);
  free(w->mem);
  w->mem = NULL;
  s3_conn_free(&w->conn);
  stats_free(&w->lat);
}

/* Create (before) or complete (after) the multipart uploads. */
static int mp_step(struct shared *sh, struct s3_conn *c, int complete)
{
  const struct s3rdma_run_opts *o = sh->o;
  char key[512];
  for(int u = 0; u < o->objects; u++) {
    struct s3_resp r;
    int rc;
    object_key(o, u, key, sizeof(key));
    rc = complete ?
      s3_mp_complete(c, o->bucket, key, sh->upload_id[u],
                     &sh->parts[u * sh->nparts], (size_t)sh->nparts, &r) :
      s3_mp_create(c, o->bucket, key, sh->upload_id[u], 128, &r);
    if(rc) {
      note_error(sh, "%s %s: HTTP %ld %s %s", complete ?
                 "CompleteMultipartUpload" : "CreateMultipartUpload", key,
                 r.status, r.code, r.error);
      s3_resp_free(&r);
      return -1;
    }
    s3_resp_free(&r);
  }
  return 0;
}

/* GET every written object back over HTTP and check every byte. */
static void readback(struct shared *sh, struct s3_conn *c)
{
  const struct s3rdma_run_opts *o = sh->o;
  int n = o->op == S3RDMA_OP_MULTIPART ? o->objects :
          (o->requests < o->objects ? o->requests : o->objects);
  void *b = malloc((size_t)o->size);
  char key[512];
  if(!b) {
    note_error(sh, "read-back: cannot allocate %llu bytes",
               (unsigned long long)o->size);
    sh->res->readback_errors += (uint64_t)n;
    return;
  }
  for(int i = 0; i < n; i++) {
    struct s3_req q = { 0 };
    struct s3_resp r;
    int64_t bad = -1;
    object_key(o, i, key, sizeof(key));
    q.method = "GET";
    q.bucket = o->bucket;
    q.key = key;
    q.dst = b;
    q.dst_cap = o->size;
    s3_perform(c, &q, &r);
    if(r.fail == S3_OK && r.status == 200 && r.bytes_in == o->size)
      bad = s3rdma_pattern_check(b, s3rdma_pattern_seed(o->seed,
                                 (uint64_t)i), 0, (size_t)o->size);
    if(r.fail != S3_OK || r.status != 200 || r.bytes_in != o->size ||
       bad >= 0) {
      sh->res->readback_errors++;
      note_error(sh, "read-back GET %s over HTTP: %s", key,
                 r.fail != S3_OK ? r.error :
                 r.status != 200 ? "not stored (HTTP error)" :
                 r.bytes_in != o->size ? "wrong length" :
                 "the stored bytes differ from what was sent");
    }
    else
      sh->res->readback_ok++;
    s3_resp_free(&r);
  }
  free(b);
}

/* The tasks to share out and each worker's buffer size (*cap): one per
 * request, or one per part of each object for a multipart upload.  0, or
 * -1 with setup_error. */
static int plan_tasks(struct shared *sh, size_t *cap)
{
  const struct s3rdma_run_opts *o = sh->o;
  if(o->op != S3RDMA_OP_MULTIPART) {
    sh->tasks = o->requests;
    *cap = (size_t)(o->op == S3RDMA_OP_GET && o->range_len ? o->range_len :
                    o->size);
    return 0;
  }
  sh->nparts = (int)((o->size + o->part_size - 1) / o->part_size);
  sh->tasks = sh->nparts * o->objects;
  *cap = (size_t)o->part_size;
  sh->upload_id = calloc((size_t)o->objects, sizeof(*sh->upload_id));
  sh->parts = calloc((size_t)sh->tasks, sizeof(*sh->parts));
  if(!sh->upload_id || !sh->parts) {
    snprintf(sh->res->setup_error, sizeof(sh->res->setup_error),
             "out of memory");
    return -1;
  }
  return 0;
}

/* The workers' threads, started together and joined; the wall time and
 * the process's CPU time over them.  Returns how many started. */
static int run_workers(struct shared *sh, struct worker *w, int nw)
{
  struct s3rdma_run_result *res = sh->res;
  struct rusage ru0, ru1;
  uint64_t t0;
  int started;
  getrusage(RUSAGE_SELF, &ru0);
  t0 = strata_now_ns();
  if(sh->o->timeout_s > 0)
    sh->deadline_ns = t0 + (uint64_t)(sh->o->timeout_s * 1e9);
  for(started = 0; started < nw; started++)
    if(pthread_create(&w[started].tid, NULL, worker_main, &w[started])) {
      snprintf(res->setup_error, sizeof(res->setup_error),
               "cannot start worker thread %d", started);
      break;
    }
  for(int i = 0; i < started; i++)
    pthread_join(w[i].tid, NULL);
  res->duration_ns = strata_now_ns() - t0;
  getrusage(RUSAGE_SELF, &ru1);
  res->cpu_s = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
               (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
               (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
               (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
  return started;
}

/* The workers' counts and latencies summed into the result. */
static void sum_workers(struct s3rdma_run_result *res, struct worker *w,
                        int nw)
{
  for(int i = 0; i < nw; i++) {
    res->ok += w[i].ok;
    res->declined += w[i].declined;
    res->failed += w[i].failed;
    res->bytes += w[i].bytes;
    res->fallback_requests += w[i].fb_req;
    res->fallback_bytes += w[i].fb_bytes;
    res->reply_ok += w[i].reply_ok;
    res->landed_ok += w[i].landed_ok;
    res->verified += w[i].verified;
    res->verify_errors += w[i].verify_errors;
    res->rdma_get_bytes += w[i].get_b;
    res->rdma_put_bytes += w[i].put_b;
    (void)stats_merge(&res->lat_ms, &w[i].lat);
  }
}

/* The RDMA device, in rc mode.  0, or -1 with setup_error (setup_skip:
 * no device to run on). */
static int open_dev(struct shared *sh, struct verbs_dev *dev)
{
  const struct s3rdma_run_opts *o = sh->o;
  enum verbs_code vc;
  if(o->mode != S3RDMA_MODE_RC)
    return 0;
  vc = verbs_dev_open(dev, o->dev, o->port, o->gid_index);
  if(vc) {
    sh->res->setup_skip = vc == VERBS_ENODEV || vc == VERBS_EPORT;
    snprintf(sh->res->setup_error, sizeof(sh->res->setup_error), "%s",
             verbs_errmsg());
    return -1;
  }
  sh->dev = dev;
  return 0;
}

/* nw workers, each with its connection and buffer.  0, or -1 with
 * setup_error (setup_skip: nothing to run on). */
static int open_workers(struct shared *sh, struct worker *w, int nw,
                        size_t cap)
{
  struct s3rdma_run_result *res = sh->res;
  for(int i = 0; i < nw; i++) {
    int wo;
    w[i].sh = sh;
    w[i].cap = cap;
    wo = worker_open(&w[i], res->setup_error, sizeof(res->setup_error));
    if(wo) {
      res->setup_skip = wo == -2;
      return -1;
    }
  }
  return 0;
}

int s3rdma_run(const struct s3rdma_run_opts *o,
               struct s3rdma_run_result *res)
{
  struct shared sh;
  struct worker *w = NULL;
  struct verbs_dev dev;
  int nw = o->concurrency, rc = -1;
  size_t cap;

  memset(res, 0, sizeof(*res));
  memset(&sh, 0, sizeof(sh));
  memset(&dev, 0, sizeof(dev));
  res->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if(stats_init(&res->lat_ms, 1024))
    return -1;
  sh.o = o;
  sh.res = res;
  pthread_mutex_init(&sh.lock, NULL);
  if(plan_tasks(&sh, &cap) || open_dev(&sh, &dev))
    goto out;
  w = calloc((size_t)nw, sizeof(*w));
  if(!w) {
    snprintf(res->setup_error, sizeof(res->setup_error), "out of memory");
    goto out;
  }
  if(open_workers(&sh, w, nw, cap))
    goto out;
  if(o->op == S3RDMA_OP_MULTIPART && mp_step(&sh, w[0].conn, 0)) {
    snprintf(res->setup_error, sizeof(res->setup_error), "%s",
             res->first_error);
    goto out;
  }
  if(run_workers(&sh, w, nw) < nw)
    goto out;
  sum_workers(res, w, nw);
  res->requests = (uint64_t)sh.tasks;
  res->cuda_threads_bound = sh.bound;
  if(o->op == S3RDMA_OP_MULTIPART && res->failed == 0 &&
     res->declined == res->fallback_requests &&
     mp_step(&sh, w[0].conn, 1))
    res->failed++;
  if(o->readback && o->op != S3RDMA_OP_GET && res->failed == 0)
    readback(&sh, w[0].conn);
  rc = 0;
out:
  for(int i = 0; w && i < nw; i++)
    worker_close(&w[i]);
  free(w);
  free(sh.upload_id);
  free(sh.parts);
  verbs_dev_close(&dev);
  pthread_mutex_destroy(&sh.lock);
  return rc;
}
