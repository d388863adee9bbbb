/*
 * stream.c - one completion stream: server-sent events in, a request's
 * timings out.  A "token chunk" is an event whose JSON has a non-empty
 * "choices" array (vLLM's benchmark: async_request_openai_completions /
 * _chat_completions in vllm/benchmarks/lib/endpoint_request_func.py): the
 * first one gives TTFT, each later one an inter-token gap.  The usage
 * chunk (OpenAI: "choices" is empty there) gives the token counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "llm.h"
#include "sse.h"

struct llm_stream {
  struct sse sse;
  struct llm_req *q;
  struct stats_samples itl;
  uint64_t now, last;
  int done;
};

static void fail(struct llm_req *q, enum llm_err e, const char *what,
                 const char *data, size_t n)
{
  q->err = e;
  snprintf(q->error, sizeof(q->error), "%s: %.*s", what,
           (int)(n > 80 ? 80 : n), data);
}

static int on_event(void *arg, const char *d, size_t n)
{
  struct llm_stream *s = arg;
  struct llm_req *q = s->q;
  const char *v;
  size_t vn;

  if(n == 6 && !memcmp(d, "[DONE]", 6)) {
    s->done = 1;
    return 0;
  }
  if(llm_json_valid(d, n)) {
    fail(q, LLM_ERR_MALFORMED, "event data is not JSON", d, n);
    return -1;
  }
  if(!llm_json_member(d, n, "error", &v, &vn) &&
     !(vn == 4 && !memcmp(v, "null", 4))) {
    fail(q, LLM_ERR_STREAM, "the server streamed an error", v, vn);
    return -1;
  }
  if(!llm_json_member(d, n, "choices", &v, &vn) &&
     llm_json_nonempty_array(v, vn)) {
    if(!q->chunks)
      q->ttft_ns = s->now;
    else if(stats_add(&s->itl, (double)(s->now - s->last) / 1e6))
      return -1;
    s->last = s->now;
    q->e2e_ns = s->now;
    q->chunks++;
  }
  if(!llm_json_member(d, n, "usage", &v, &vn) && v[0] == '{') {
    const char *c;
    size_t cn;
    long long x;
    if(!llm_json_member(v, vn, "completion_tokens", &c, &cn) &&
       (x = llm_json_uint(c, cn)) >= 0) {
      q->output_tokens = (int32_t)x;
      q->usage = 1;
    }
    if(!llm_json_member(v, vn, "prompt_tokens", &c, &cn) &&
       (x = llm_json_uint(c, cn)) >= 0)
      q->prompt_tokens = (int32_t)x;
  }
  return 0;
}

struct llm_stream *llm_stream_new(struct llm_req *q)
{
  struct llm_stream *s = calloc(1, sizeof(*s));
  if(!s)
    return NULL;
  s->q = q;
  sse_init(&s->sse, on_event, s);
  return s;
}

int llm_stream_feed(struct llm_stream *s, const char *b, size_t n,
                    uint64_t now_ns)
{
  s->now = now_ns;
  if(sse_feed(&s->sse, b, n)) {
    if(s->q->err == LLM_OK)
      fail(s->q, LLM_ERR_MALFORMED, "event stream", "line too long", 13);
    return -1;
  }
  return 0;
}

int llm_stream_end(struct llm_stream *s, uint64_t now_ns)
{
  s->now = now_ns;
  if(sse_finish(&s->sse)) {
    if(s->q->err == LLM_OK)
      fail(s->q, LLM_ERR_MALFORMED, "event stream", "line too long", 13);
    return -1;
  }
  return 0;
}

int llm_stream_done(const struct llm_stream *s)
{
  return s->done;
}

const struct stats_samples *llm_stream_itl(const struct llm_stream *s)
{
  return &s->itl;
}

void llm_stream_free(struct llm_stream **s)
{
  if(!s || !*s)
    return;
  sse_free(&(*s)->sse);
  stats_free(&(*s)->itl);
  free(*s);
  *s = NULL;
}
