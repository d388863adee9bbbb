/*
 * stage.c - the T4 model staging of stage.h: `concurrency` workers, each
 * with its own control connection and RC QP (or cuObject client), take
 * transfers (a shard, or a piece of one) from a shared counter; every
 * transfer lands at its offset in one buffer registered once.
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
#include "rc_client.h"
#include "single.h"
#include "stage.h"
#include "strata.h"
#include "verbs.h"
#include "wire.h"

struct task {
  size_t shard;
  uint64_t off, len, dst;     /* object offset, bytes, buffer offset */
  int ranged;
};

struct shared {
  const struct s3rdma_stage_opts *o;
  struct verbs_dev dev;
  int dev_open;
  struct verbs_buf buf;       /* RC: the registered destination */
  char *base;                 /* its address (host or device) */
  int dmabuf_fd;
  struct task *tasks;
  size_t ntasks;
  atomic_size_t next;
  atomic_uint_fast64_t *landed;      /* per shard */
  atomic_uint_fast64_t bytes, first, last, reply_ok, landed_ok, declined;
  uint64_t t0;
  pthread_mutex_t lock;
  struct s3rdma_stage_result *r;
};

struct worker {
  struct shared *sh;
  pthread_t tid;
  struct s3rdma_rc rc;
  int rc_open;
  struct s3_conn *conn;       /* cuObject */
  struct s3rdma_cuobj *cuobj;
};

static void note(struct shared *sh, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static void note(struct shared *sh, const char *fmt, ...)
{
  va_list ap;
  pthread_mutex_lock(&sh->lock);
  if(!sh->r->error[0]) {
    va_start(ap, fmt);
    vsnprintf(sh->r->error, sizeof(sh->r->error), fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&sh->lock);
}

static void stamp(struct shared *sh)
{
  uint64_t now = strata_now_ns(), zero = 0,
           prev = atomic_load(&sh->last);
  atomic_compare_exchange_strong(&sh->first, &zero, now);
  while(now > prev && !atomic_compare_exchange_weak(&sh->last, &prev, now))
    ;
}

static void one(struct worker *w, const struct task *k)
{
  struct shared *sh = w->sh;
  const struct s3rdma_stage_opts *o = sh->o;
  const char *key = o->shards[k->shard].key;
  struct s3rdma_outcome oc;

  memset(&oc, 0, sizeof(oc));
  if(o->mode == S3RDMA_MODE_RC) {
    struct s3rdma_xfer x = {
      .put = 0, .bucket = o->bucket, .key = key, .size = k->len,
      .offset = k->off, .has_offset = k->ranged, .buf = &sh->buf,
      .buf_off = k->dst
    };
    s3rdma_rc_transfer(&w->rc, &x, &oc);
  }
  else {
    struct s3rdma_single q = {
      .put = 0, .bucket = o->bucket, .key = key, .size = k->len,
      .offset = k->off, .ranged = k->ranged
    };
    char why[300], form[S3RDMA_CUOBJ_DESC_LEN + 40];
    char *tok = s3rdma_cuobj_token(w->cuobj, sh->base + k->dst,
                                   (size_t)k->len, 0, (size_t)k->len, 0,
                                   why, sizeof(why));
    if(tok && s3rdma_cuobj_token_form(tok, o->contract,
                                      (uint64_t)(uintptr_t)(sh->base +
                                                            k->dst),
                                      k->len, form, sizeof(form), why,
                                      sizeof(why))) {
      free(tok);
      tok = NULL;
    }
    if(!tok) {
      oc.status = S3RDMA_FAILED;
      oc.step = "token";
      snprintf(oc.error, sizeof(oc.error), "%s", why);
    }
    else {
      q.token = form;
      s3rdma_single_transfer(w->conn, &q, &oc);
      free(tok);
      oc.landed_ok = oc.status == S3RDMA_OK;   /* checked by verify */
      oc.bytes_landed = oc.status == S3RDMA_OK ? k->len : 0;
    }
  }
  atomic_fetch_add(&sh->reply_ok, (uint64_t)oc.reply_ok);
  atomic_fetch_add(&sh->landed_ok, (uint64_t)oc.landed_ok);
  if(oc.status == S3RDMA_DECLINED)
    atomic_fetch_add(&sh->declined, 1);
  if(oc.status != S3RDMA_OK || oc.bytes_landed != k->len) {
    note(sh, "GET %s bytes %llu-%llu: %s: %s", key,
         (unsigned long long)k->off,
         (unsigned long long)(k->off + k->len - 1),
         oc.step ? oc.step : "transfer", oc.error[0] ? oc.error :
         "fewer bytes landed than asked");
    return;
  }
  atomic_fetch_add(&sh->landed[k->shard], k->len);
  atomic_fetch_add(&sh->bytes, k->len);
  stamp(sh);
}

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct shared *sh = w->sh;
  char err[300];
  size_t i;
  if(sh->o->gpu_memory &&
     cuda_bind(sh->o->gpu_device, err, sizeof(err))) {
    note(sh, "CUDA context for worker thread: %s", err);
    return NULL;
  }
  while((i = atomic_fetch_add(&sh->next, 1)) < sh->ntasks &&
        !strata_stop_flag)
    one(w, &sh->tasks[i]);
  return NULL;
}

/* Split every shard into transfers of at most piece bytes. */
static int plan(struct shared *sh, uint64_t *total)
{
  const struct s3rdma_stage_opts *o = sh->o;
  uint64_t piece = o->piece ? o->piece : 1ull << 30, n = 0, dst = 0;
  if(piece > S3RDMA_SIZE_MAX)
    piece = S3RDMA_SIZE_MAX;
  for(size_t i = 0; i < o->n; i++)
    n += (o->shards[i].size + piece - 1) / piece;
  sh->tasks = calloc((size_t)(n ? n : 1), sizeof(*sh->tasks));
  if(!sh->tasks)
    return -1;
  for(size_t i = 0; i < o->n; i++) {
    uint64_t sz = o->shards[i].size;
    for(uint64_t off = 0; off < sz; off += piece) {
      struct task *k = &sh->tasks[sh->ntasks++];
      k->shard = i;
      k->off = off;
      k->len = sz - off < piece ? sz - off : piece;
      k->dst = dst + off;
      k->ranged = sz > piece;
    }
    dst += sz;
  }
  *total = dst;
  return 0;
}

static int setup(struct shared *sh, uint64_t total)
{
  const struct s3rdma_stage_opts *o = sh->o;
  struct s3rdma_stage_result *r = sh->r;
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                     IBV_ACCESS_REMOTE_READ;
  size_t len = (size_t)(total ? total : 1);
  enum verbs_code vc;
  int st;

  if(o->mode == S3RDMA_MODE_RC) {
    vc = verbs_dev_open(&sh->dev, o->dev, o->port, o->gid_index);
    if(vc) {
      r->setup_skip = vc == VERBS_ENODEV || vc == VERBS_EPORT;
      snprintf(r->error, sizeof(r->error), "%s%s", r->setup_skip ?
               "no usable RDMA device: " : "", verbs_errmsg());
      return -1;
    }
    sh->dev_open = 1;
  }
  if(o->gpu_memory) {
    void *p = NULL;
    st = cuda_alloc(o->gpu_device, len, CUDA_MEM_DEVICE, &p, r->error,
                    sizeof(r->error));
    if(st) {
      r->setup_skip = st == CUDA_ABSENT;
      return -1;
    }
    sh->base = p;
    if(o->mode == S3RDMA_MODE_RC) {
      uint64_t off = 0, length = 0;
      st = cuda_dmabuf_export(p, len, &sh->dmabuf_fd, &off, &length,
                              r->error, sizeof(r->error));
      if(st) {
        r->setup_skip = st == CUDA_ABSENT;
        return -1;
      }
      vc = verbs_buf_dmabuf(&sh->dev, &sh->buf, sh->dmabuf_fd, off, len,
                            (uint64_t)(uintptr_t)p, access);
      if(vc) {
        r->setup_skip = vc == VERBS_EUNSUPPORTED;
        snprintf(r->error, sizeof(r->error), "GPU memory RDMA "
                 "(GPUDirect): %s", verbs_errmsg());
        return -1;
      }
    }
  }
  else if(o->mode == S3RDMA_MODE_RC) {
    if(verbs_buf_host(&sh->dev, &sh->buf, len, 0, -1, access)) {
      snprintf(r->error, sizeof(r->error), "%s", verbs_errmsg());
      return -1;
    }
    sh->base = sh->buf.addr;
  }
  else if(!(sh->base = aligned_alloc(4096, (len + 4095) & ~(size_t)4095))) {
    snprintf(r->error, sizeof(r->error), "cannot allocate %zu bytes", len);
    return -1;
  }
  return 0;
}

/* GET every shard again over HTTP; compare with the bytes that landed. */
static void verify(struct shared *sh)
{
  const struct s3rdma_stage_opts *o = sh->o;
  struct s3rdma_stage_result *r = sh->r;
  struct s3_conn *c = s3_conn_new(o->data_cfg);
  uint64_t max = 0, dst = 0;
  char *a = NULL, *b = NULL, err[300];
  for(size_t i = 0; i < o->n; i++)
    if(o->shards[i].size > max)
      max = o->shards[i].size;
  a = malloc((size_t)(max ? max : 1));
  b = o->gpu_memory ? malloc((size_t)(max ? max : 1)) : NULL;
  for(size_t i = 0; c && a && (b || !o->gpu_memory) && i < o->n; i++) {
    const struct s3_object *s = &o->shards[i];
    struct s3_req q = { 0 };
    struct s3_resp re;
    const char *landed = sh->base + dst;
    dst += s->size;
    if(!s->size)
      continue;
    q.method = "GET";
    q.bucket = o->bucket;
    q.key = s->key;
    q.dst = a;
    q.dst_cap = s->size;
    s3_perform(c, &q, &re);
    r->verified++;
    if(re.fail != S3_OK || re.status != 200 || re.bytes_in != s->size) {
      r->verify_errors++;
      note(sh, "verify: GET %s over HTTP: %s", s->key,
           re.fail != S3_OK ? re.error : "HTTP error or wrong length");
    }
    else if(o->gpu_memory &&
            cuda_copy(b, landed, (size_t)s->size, err, sizeof(err))) {
      r->verify_errors++;
      note(sh, "verify: GPU -> host copy of %s: %s", s->key, err);
    }
    else if(memcmp(a, o->gpu_memory ? b : landed, (size_t)s->size)) {
      r->verify_errors++;
      note(sh, "verify: %s: the bytes that landed by RDMA differ from "
           "the object", s->key);
    }
    s3_resp_free(&re);
  }
  if(!c || !a || (o->gpu_memory && !b))
    note(sh, "verify: out of memory");
  s3_conn_free(&c);
  free(a);
  free(b);
}

int s3rdma_stage(const struct s3rdma_stage_opts *o,
                 struct s3rdma_stage_result *r)
{
  struct shared sh;
  struct worker *w = NULL;
  struct rusage ru0, ru1;
  uint64_t total = 0;
  int nw = o->concurrency > 0 ? o->concurrency : 1, started = 0, rc = -1;

  memset(r, 0, sizeof(*r));
  memset(&sh, 0, sizeof(sh));
  sh.dmabuf_fd = -1;
  sh.o = o;
  sh.r = r;
  pthread_mutex_init(&sh.lock, NULL);
  if(plan(&sh, &total) ||
     !(sh.landed = calloc(o->n ? o->n : 1, sizeof(*sh.landed)))) {
    snprintf(r->error, sizeof(r->error), "out of memory");
    goto out;
  }
  if((size_t)nw > sh.ntasks)
    nw = (int)(sh.ntasks ? sh.ntasks : 1);
  if(setup(&sh, total))
    goto out;
  if(!(w = calloc((size_t)nw, sizeof(*w)))) {
    snprintf(r->error, sizeof(r->error), "out of memory");
    goto out;
  }
  for(int i = 0; i < nw; i++) {
    w[i].sh = &sh;
    if(o->mode == S3RDMA_MODE_RC) {
      if(s3rdma_rc_open(&w[i].rc, &sh.dev, o->ctrl_cfg)) {
        snprintf(r->error, sizeof(r->error), "%s", verbs_errmsg());
        goto out;
      }
      w[i].rc_open = 1;
      s3rdma_rc_host_no_port(&w[i].rc, o->ctrl_cfg->endpoint,
                             !o->ctrl_host_port);
      if(o->landing_grace_s > 0)
        w[i].rc.landing_grace_ns = (uint64_t)(o->landing_grace_s * 1e9);
    }
    else {
      if(!(w[i].conn = s3_conn_new(o->data_cfg))) {
        snprintf(r->error, sizeof(r->error), "out of memory");
        goto out;
      }
      if(!(w[i].cuobj = s3rdma_cuobj_open(r->error, sizeof(r->error)))) {
        r->setup_skip = 1;
        goto out;
      }
    }
  }
  getrusage(RUSAGE_SELF, &ru0);
  sh.t0 = strata_now_ns();
  for(; started < nw; started++)
    if(pthread_create(&w[started].tid, NULL, worker_main, &w[started])) {
      snprintf(r->error, sizeof(r->error), "cannot start worker %d",
               started);
      break;
    }
  for(int i = 0; i < started; i++)
    pthread_join(w[i].tid, NULL);
  getrusage(RUSAGE_SELF, &ru1);
  if(started < nw)
    goto out;
  r->cpu_s = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
             (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
             (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
             (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
  r->bytes = atomic_load(&sh.bytes);
  r->transfers = sh.ntasks;
  r->reply_ok = atomic_load(&sh.reply_ok);
  r->landed_ok = atomic_load(&sh.landed_ok);
  r->declined = atomic_load(&sh.declined);
  for(size_t i = 0; i < o->n; i++)
    r->failed += atomic_load(&sh.landed[i]) != o->shards[i].size;
  if(atomic_load(&sh.last) > sh.t0)
    r->seconds = (double)(atomic_load(&sh.last) - sh.t0) / 1e9;
  if(atomic_load(&sh.first) > sh.t0)
    r->first_byte_s = (double)(atomic_load(&sh.first) - sh.t0) / 1e9;
  if(o->verify && !r->failed)
    verify(&sh);
  rc = 0;
out:
  for(int i = 0; w && i < nw; i++) {
    if(w[i].rc_open)
      s3rdma_rc_close(&w[i].rc);
    s3_conn_free(&w[i].conn);
    s3rdma_cuobj_close(&w[i].cuobj);
  }
  free(w);
  verbs_buf_free(&sh.buf);
  if(sh.dmabuf_fd >= 0)
    close(sh.dmabuf_fd);
  if(o->gpu_memory) {
    void *p = sh.base;
    cuda_free(&p, CUDA_MEM_DEVICE);
  }
  else if(o->mode != S3RDMA_MODE_RC)
    free(sh.base);
  if(sh.dev_open)
    verbs_dev_close(&sh.dev);
  free(sh.tasks);
  free((void *)sh.landed);
  pthread_mutex_destroy(&sh.lock);
  return rc;
}
