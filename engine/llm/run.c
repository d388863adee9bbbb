/*
 * run.c - the load loop of llm.h: one curl multi handle, requests added
 * at their arrival times while fewer than `concurrency` are in flight,
 * bytes parsed in curl's write callback with the time they arrived.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "http.h"
#include "llm.h"
#include "strata.h"

#define LLM_ERRORS_KEPT 8     /* requests that keep their error text */

struct xfer {
  CURL *e;
  struct llm_req *q;
  struct llm_stream *st;
  char *body;
  struct curl_slist *hdrs;
  uint64_t t0;          /* absolute start, strata_now_ns() */
  uint64_t run0;
  long status;
  int stop;             /* the stream asked to stop (malformed/error) */
  char errbuf[CURL_ERROR_SIZE];
};

const char *llm_strerr(enum llm_err e)
{
  switch(e) {
  case LLM_OK:
    return "ok";
  case LLM_ERR_HTTP:
    return "http";
  case LLM_ERR_CONNECT:
    return "connect";
  case LLM_ERR_TRANSPORT:
    return "transport";
  case LLM_ERR_TIMEOUT:
    return "timeout";
  case LLM_ERR_STALL:
    return "stall";
  case LLM_ERR_MALFORMED:
    return "malformed";
  case LLM_ERR_STREAM:
    return "stream_error";
  case LLM_ERR_NO_TOKEN:
    return "no_token";
  case LLM_ERR_STOPPED:
    return "stopped";
  case LLM_ERR_COUNT:
    break;
  }
  return "?";
}

void llm_result_free(struct llm_result *r)
{
  for(size_t i = 0; r->req && i < r->n; i++)
    free(r->req[i].itl);
  free(r->req);
  r->req = NULL;
  stats_free(&r->ttft_ms);
  stats_free(&r->itl_ms);
  stats_free(&r->tpot_ms);
  stats_free(&r->e2e_ms);
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *arg)
{
  struct xfer *x = arg;
  size_t n = size * nmemb;
  uint64_t now = strata_now_ns();

  if(!x->status)
    curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &x->status);
  if(x->status != 200)
    return n;   /* an error body: drained, not parsed */
  if(llm_stream_feed(x->st, p, n, now - x->t0)) {
    x->stop = 1;
    return 0;
  }
  return n;
}

static void xfer_free(CURLM *m, struct xfer *x)
{
  if(!x)
    return;
  if(x->e) {
    curl_multi_remove_handle(m, x->e);
    curl_easy_cleanup(x->e);
  }
  curl_slist_free_all(x->hdrs);
  llm_stream_free(&x->st);
  free(x->body);
  free(x);
}

static struct xfer *start(CURLM *m, const struct llm_opts *o, size_t i,
                          struct llm_req *q, uint64_t run0)
{
  const struct llm_prompt *p = &o->prompts[i % o->nprompts];
  struct xfer *x = calloc(1, sizeof(*x));
  char h[256];

  if(!x)
    return NULL;
  x->q = q;
  x->run0 = run0;
  x->e = curl_easy_init();
  x->st = llm_stream_new(q);
  x->body = llm_body(o, p);
  if(!x->e || !x->st || !x->body)
    goto fail;
  q->prompt_tokens = p->input_len;
  x->hdrs = curl_slist_append(x->hdrs, "Content-Type: application/json");
  x->hdrs = curl_slist_append(x->hdrs, "Accept: text/event-stream");
  if(o->api_key && *o->api_key) {
    snprintf(h, sizeof(h), "Authorization: Bearer %s", o->api_key);
    x->hdrs = curl_slist_append(x->hdrs, h);
  }
  if(o->id_prefix) {
    snprintf(h, sizeof(h), "x-request-id: %s%zu", o->id_prefix, i);
    x->hdrs = curl_slist_append(x->hdrs, h);
  }
  if(!x->hdrs)
    goto fail;
  /* the settings every strata request shares (engine/http) */
  {
    struct http_common co = {
      .timeout_ms = o->timeout_s > 0 ? (long)(o->timeout_s * 1000) : 0,
      .connect_timeout_ms = (long)((o->connect_timeout_s > 0
                                    ? o->connect_timeout_s : 5) * 1000),
      .ca_bundle = o->ca_bundle, .errbuf = x->errbuf
    };
    http_setopt_common(x->e, &co);
  }
  curl_easy_setopt(x->e, CURLOPT_USERAGENT, "strata");
  /* a stream that stops sending: below 1 byte/s for stall_s */
  curl_easy_setopt(x->e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(x->e, CURLOPT_LOW_SPEED_TIME,
                   (long)ceil(o->stall_s > 0 ? o->stall_s : 30));
  curl_easy_setopt(x->e, CURLOPT_URL, o->url);
  curl_easy_setopt(x->e, CURLOPT_HTTPHEADER, x->hdrs);
  curl_easy_setopt(x->e, CURLOPT_POSTFIELDS, x->body);
  curl_easy_setopt(x->e, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(x->e, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(x->e, CURLOPT_PRIVATE, x);
  x->t0 = strata_now_ns();
  q->start_ns = x->t0 - run0;
  if(curl_multi_add_handle(m, x->e) != CURLM_OK)
    goto fail;
  return x;
fail:
  xfer_free(m, x);
  return NULL;
}

static void note_status(struct llm_result *r, long st)
{
  for(size_t i = 0; i < r->nstatus; i++)
    if(r->status_code[i] == st) {
      r->status_count[i]++;
      return;
    }
  if(r->nstatus < 16) {
    r->status_code[r->nstatus] = st;
    r->status_count[r->nstatus++] = 1;
  }
}

/* A transfer ended with rc: classify it and add its figures. */
static void finish(const struct llm_opts *o, struct llm_result *r,
                   struct xfer *x, CURLcode rc, uint64_t now)
{
  struct llm_req *q = x->q;
  double el_s = (double)(now - x->t0) / 1e9;

  q->status = x->status;
  if(rc == CURLE_OK && x->status == 200 && q->err == LLM_OK)
    llm_stream_end(x->st, now - x->t0);
  if(q->err != LLM_OK)
    ;   /* the stream said why (malformed, error event) */
  else if(rc == CURLE_OPERATION_TIMEDOUT) {
    int whole = o->timeout_s > 0 && el_s >= o->timeout_s - 0.05;
    q->err = whole ? LLM_ERR_TIMEOUT
             : q->status ? LLM_ERR_STALL : LLM_ERR_CONNECT;
    if(!whole && q->status)
      snprintf(q->error, sizeof(q->error), "no byte for %.0f s after %u "
               "chunks", o->stall_s > 0 ? o->stall_s : 30, q->chunks);
  }
  else if(rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
          rc == CURLE_SEND_ERROR || rc == CURLE_URL_MALFORMAT)
    q->err = LLM_ERR_CONNECT;
  else if(rc != CURLE_OK)
    q->err = LLM_ERR_TRANSPORT;
  else if(x->status != 200)
    q->err = LLM_ERR_HTTP;
  else if(!q->chunks)
    q->err = LLM_ERR_NO_TOKEN;
  if(q->err != LLM_OK && !q->error[0])
    snprintf(q->error, sizeof(q->error), "%s%s%.100s",
             rc != CURLE_OK ? curl_easy_strerror(rc) : "HTTP status",
             x->errbuf[0] ? ": " : "", x->errbuf);
  if(q->err == LLM_ERR_HTTP && !x->errbuf[0])
    snprintf(q->error, sizeof(q->error), "HTTP %ld", x->status);

  if(q->err != LLM_OK) {
    r->failed++;
    r->errors[q->err]++;
    if(q->err == LLM_ERR_HTTP)
      note_status(r, x->status);
    return;
  }
  if(!q->usage)
    q->output_tokens = (int32_t)q->chunks;
  r->completed++;
  r->output_tokens += (uint64_t)(q->output_tokens > 0 ? q->output_tokens
                                                      : 0);
  r->input_tokens += (uint64_t)(q->prompt_tokens > 0 ? q->prompt_tokens
                                                     : 0);
  stats_add(&r->ttft_ms, (double)q->ttft_ns / 1e6);
  stats_add(&r->e2e_ms, (double)q->e2e_ns / 1e6);
  /* serve.py calculate_metrics: (latency - ttft) / (output_len - 1) */
  if(q->output_tokens > 1)
    stats_add(&r->tpot_ms, (double)(q->e2e_ns - q->ttft_ns) / 1e6 /
                           (q->output_tokens - 1));
  stats_merge(&r->itl_ms, llm_stream_itl(x->st));
  if(o->keep_itl) {
    const struct stats_samples *g = llm_stream_itl(x->st);
    q->itl = g->n ? malloc(g->n * sizeof(double)) : NULL;
    if(q->itl) {
      memcpy(q->itl, g->v, g->n * sizeof(double));
      q->nitl = (uint32_t)g->n;
    }
  }
}

int llm_run(const struct llm_opts *o, struct llm_result *r, char *err,
            size_t errlen)
{
  CURLM *m = NULL;
  struct xfer **live = NULL;
  double *at = NULL;
  size_t n = o->num_requests, next = 0, done = 0;
  int inflight = 0, rc = -1;
  uint64_t run0, first = 0, last = 0;

  memset(r, 0, sizeof(*r));
  if(!o->url || !o->prompts || !o->nprompts || !n) {
    snprintf(err, errlen, "options: url, prompts and num_requests needed");
    return -1;
  }
  if(http_global_init()) {
    snprintf(err, errlen, "%s", http_init_error());
    return -1;
  }
  r->req = calloc(n, sizeof(*r->req));
  live = calloc(n, sizeof(*live));
  at = malloc(n * sizeof(*at));
  m = curl_multi_init();
  if(!r->req || !live || !at || !m) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  r->n = n;
  llm_arrivals(at, n, o->request_rate, o->burstiness, o->seed);
  run0 = strata_now_ns();
  r->run0_ns = run0;
  while(done < n) {
    uint64_t now = strata_now_ns();
    int running = 0;
    long wait_ms = 100;
    CURLMsg *msg;
    int left;

    while(next < n && !strata_stop_flag &&
          (o->concurrency <= 0 || inflight < o->concurrency) &&
          (double)(now - run0) / 1e9 >= at[next]) {
      live[next] = start(m, o, next, &r->req[next], run0);
      if(!live[next]) {
        snprintf(err, errlen, "request %zu: cannot set up the transfer",
                 next);
        goto out;
      }
      if(!first)
        first = live[next]->t0;
      next++;
      if(++inflight > r->peak_inflight)
        r->peak_inflight = inflight;
    }
    if(strata_stop_flag) {
      for(size_t i = next; i < n; i++) {
        r->req[i].err = LLM_ERR_STOPPED;
        r->failed++;
        r->errors[LLM_ERR_STOPPED]++;
      }
      done += n - next;
      next = n;
      for(size_t i = 0; i < n; i++)
        if(live[i]) {
          live[i]->q->err = LLM_ERR_STOPPED;
          finish(o, r, live[i], CURLE_ABORTED_BY_CALLBACK,
                 strata_now_ns());
          xfer_free(m, live[i]);
          live[i] = NULL;
          inflight--;
          done++;
        }
      break;
    }
    curl_multi_perform(m, &running);
    while((msg = curl_multi_info_read(m, &left))) {
      struct xfer *x = NULL;
      if(msg->msg != CURLMSG_DONE)
        continue;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
      now = strata_now_ns();
      finish(o, r, x, msg->data.result, now);
      last = now;
      live[x->q - r->req] = NULL;
      xfer_free(m, x);
      inflight--;
      done++;
    }
    if(done >= n)
      break;
    if(next < n && (o->concurrency <= 0 || inflight < o->concurrency)) {
      double d = at[next] - (double)(strata_now_ns() - run0) / 1e9;
      wait_ms = d <= 0 ? 0 : (long)(d * 1000) + 1;
      if(wait_ms > 100)
        wait_ms = 100;
    }
    if(wait_ms)
      curl_multi_poll(m, NULL, 0, (int)wait_ms, NULL);
  }
  r->duration_s = last > first ? (double)(last - first) / 1e9 : 0;
  rc = 0;
out:
  if(live)
    for(size_t i = 0; i < n; i++)
      xfer_free(m, live[i]);
  free(live);
  free(at);
  if(m)
    curl_multi_cleanup(m);
  if(rc)
    llm_result_free(r);
  return rc;
}
