/*
 * stage.c - the shard GETs of stage.h: `concurrency` threads, each with
 * its own kept-alive connection, take shards in order from a shared
 * counter; each shard lands at its offset in one buffer.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stage.h"
#include "strata.h"
#ifdef STRATA_LLM_WITH_CUDA
#include "cuda.h"
#endif

struct stage {
  const struct llm_stage_opts *o;
  uint64_t *off;            /* each shard's offset in the buffer */
  char *host;               /* host memory destination */
  void *dev;                /* GPU memory destination */
  atomic_size_t next;
  atomic_uint_fast64_t bytes, first_byte, last_end;
  pthread_mutex_t lock;
  size_t failed;
  double copy_s;
  char error[320];
  uint64_t t0;
};

struct worker {
  struct stage *s;
  struct s3_conn *conn;
  char *pinned;             /* GPU: the staging chunk */
  size_t fill;
  uint64_t dst;             /* GPU: where the chunk goes next */
  double copy_s;
  int bad;
  char err[200];
};

static void note(struct stage *s, const char *what, const char *detail)
{
  pthread_mutex_lock(&s->lock);
  s->failed++;
  if(!s->error[0])
    snprintf(s->error, sizeof(s->error), "%.200s%s%.100s", what,
             detail[0] ? ": " : "", detail);
  pthread_mutex_unlock(&s->lock);
}

#ifdef STRATA_LLM_WITH_CUDA
static int flush(struct worker *w)
{
  uint64_t t = strata_now_ns();
  if(!w->fill)
    return 0;
  if(cuda_copy((char *)w->s->dev + w->dst, w->pinned, w->fill, w->err,
               sizeof(w->err)))
    return -1;
  w->copy_s += (double)(strata_now_ns() - t) / 1e9;
  w->dst += w->fill;
  w->fill = 0;
  return 0;
}
#endif

/* GPU: bytes go through the pinned chunk to the device */
static size_t sink(void *arg, uint64_t off, const char *p, size_t n)
{
  struct worker *w = arg;
  size_t chunk = w->s->o->chunk ? w->s->o->chunk : 8u << 20, done = 0;
  uint64_t zero = 0;
  (void)off;
  atomic_compare_exchange_strong(&w->s->first_byte, &zero,
                                 strata_now_ns());
#ifdef STRATA_LLM_WITH_CUDA
  while(done < n) {
    size_t k = n - done < chunk - w->fill ? n - done : chunk - w->fill;
    memcpy(w->pinned + w->fill, p + done, k);
    w->fill += k;
    done += k;
    if(w->fill == chunk && flush(w))
      return 0;
  }
#else
  (void)p;
  (void)chunk;
  done = n;
#endif
  return done;
}

static void *run(void *arg)
{
  struct worker *w = arg;
  struct stage *s = w->s;
  const struct llm_stage_opts *o = s->o;
  size_t i;

  while((i = atomic_fetch_add(&s->next, 1)) < o->n && !strata_stop_flag) {
    const struct s3_object *sh = &o->shards[i];
    struct s3_req q = { 0 };
    struct s3_resp r;
    enum s3_fail f;
    q.method = "GET";
    q.bucket = o->bucket;
    q.key = sh->key;
    if(o->gpu) {
      q.sink = sink;
      q.sink_arg = w;
      w->dst = s->off[i];
      w->fill = 0;
    }
    else {
      q.dst = s->host + s->off[i];
      q.dst_cap = sh->size;
    }
    f = s3_perform(w->conn, &q, &r);
#ifdef STRATA_LLM_WITH_CUDA
    if(o->gpu && f == S3_OK && r.status / 100 == 2 && flush(w))
      f = S3_ERR_ABORTED;
#endif
    if(!o->gpu && f == S3_OK && r.bytes_in) {
      uint64_t zero = 0;   /* host: the first byte is the reply's */
      atomic_compare_exchange_strong(&s->first_byte, &zero,
                                     s->t0 + r.ttfb_ns);
    }
    if(f != S3_OK || r.status / 100 != 2 || r.bytes_in != sh->size) {
      char d[300];
      s3_describe(&q, &r, d, sizeof(d));
      if(f == S3_OK && r.status / 100 == 2)
        snprintf(d, sizeof(d), "GET %s: %llu bytes, listed %llu", sh->key,
                 (unsigned long long)r.bytes_in,
                 (unsigned long long)sh->size);
      note(s, d, w->err);
    }
    else
      atomic_fetch_add(&s->bytes, sh->size);
    {
      uint64_t now = strata_now_ns(), prev = atomic_load(&s->last_end);
      while(now > prev &&
            !atomic_compare_exchange_weak(&s->last_end, &prev, now))
        ;
    }
    s3_resp_free(&r);
  }
  return NULL;
}

int llm_stage(const struct llm_stage_opts *o, struct llm_stage_result *r)
{
  struct stage s;
  struct worker *w = NULL;
  pthread_t *th = NULL;
  uint64_t total = 0;
  int nt = o->concurrency > 0 ? o->concurrency : 1, rc = -1, started = 0;

  memset(r, 0, sizeof(*r));
  memset(&s, 0, sizeof(s));
  s.o = o;
  pthread_mutex_init(&s.lock, NULL);
  if((size_t)nt > o->n)
    nt = (int)(o->n ? o->n : 1);
  s.off = calloc(o->n + 1, sizeof(*s.off));
  w = calloc((size_t)nt, sizeof(*w));
  th = calloc((size_t)nt, sizeof(*th));
  if(!s.off || !w || !th) {
    snprintf(r->error, sizeof(r->error), "out of memory");
    goto out;
  }
  for(size_t i = 0; i < o->n; i++) {
    s.off[i] = total;
    total += o->shards[i].size;
  }
  if(o->gpu) {
#ifdef STRATA_LLM_WITH_CUDA
    int st = cuda_alloc(o->device, (size_t)(total ? total : 1),
                        CUDA_MEM_DEVICE, &s.dev, r->error,
                        sizeof(r->error));
    if(st) {
      rc = st == CUDA_ABSENT ? -2 : -1;
      goto out;
    }
#else
    snprintf(r->error, sizeof(r->error), "built without CUDA");
    rc = -2;
    goto out;
#endif
  }
  else if(!(s.host = malloc((size_t)(total ? total : 1)))) {
    snprintf(r->error, sizeof(r->error), "cannot allocate %llu bytes of "
             "host memory", (unsigned long long)total);
    goto out;
  }
  for(int i = 0; i < nt; i++) {
    w[i].s = &s;
    w[i].conn = s3_conn_new(o->cfg);
    if(!w[i].conn) {
      snprintf(r->error, sizeof(r->error), "cannot open a connection");
      goto out;
    }
#ifdef STRATA_LLM_WITH_CUDA
    if(o->gpu && cuda_alloc(o->device, o->chunk ? o->chunk : 8u << 20,
                            CUDA_MEM_PINNED, (void **)&w[i].pinned,
                            r->error, sizeof(r->error)))
      goto out;
#endif
  }
  s.t0 = strata_now_ns();
  for(; started < nt; started++)
    if(pthread_create(&th[started], NULL, run, &w[started])) {
      snprintf(r->error, sizeof(r->error), "pthread_create failed");
      break;
    }
  for(int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  if(started < nt)
    goto out;
  r->bytes = atomic_load(&s.bytes);
  r->failed = s.failed + (o->n > atomic_load(&s.next) ?
                          o->n - atomic_load(&s.next) : 0);
  r->seconds = atomic_load(&s.last_end) > s.t0 ?
               (double)(atomic_load(&s.last_end) - s.t0) / 1e9 : 0;
  r->first_byte_s = atomic_load(&s.first_byte) > s.t0 ?
                    (double)(atomic_load(&s.first_byte) - s.t0) / 1e9 : 0;
  for(int i = 0; i < nt; i++)
    r->copy_s += w[i].copy_s;
  if(s.error[0])
    snprintf(r->error, sizeof(r->error), "%s", s.error);
  rc = 0;
out:
  for(int i = 0; w && i < nt; i++) {
    s3_conn_free(&w[i].conn);
#ifdef STRATA_LLM_WITH_CUDA
    cuda_free((void **)&w[i].pinned, CUDA_MEM_PINNED);
#endif
  }
#ifdef STRATA_LLM_WITH_CUDA
  cuda_free(&s.dev, CUDA_MEM_DEVICE);
#endif
  free(s.host);
  free(s.off);
  free(w);
  free(th);
  pthread_mutex_destroy(&s.lock);
  return rc;
}
