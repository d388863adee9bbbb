/*
 * llm_test.c - the stream parser, JSON scanner, arrivals and bodies,
 * without a server (ctest llm_test, label unit).  Chunks are in the shape
 * of the OpenAI API reference's streaming examples (completion chunks,
 * the final usage chunk with "choices": []) and vLLM's error event.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json.h"
#include "llm.h"
#include "sse.h"

static const char CHUNK[] =
  "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,"
  "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" the\","
  "\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n";
static const char USAGE[] =
  "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1,"
  "\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":7,"
  "\"completion_tokens\":3,\"total_tokens\":10}}\n\n";

static void test_json(void)
{
  const char *v;
  size_t vn;
  const char *o = "{\"a\":1, \"choices\" : [ {\"x\":\"}\"} ], \"u\":null}";
  CHECK(llm_json_valid(o, strlen(o)) == 0);
  CHECK(llm_json_member(o, strlen(o), "choices", &v, &vn) == 0);
  CHECK(llm_json_nonempty_array(v, vn));
  CHECK(llm_json_member(o, strlen(o), "u", &v, &vn) == 0 && vn == 4);
  CHECK(llm_json_member(o, strlen(o), "zz", &v, &vn) == -1);
  CHECK(llm_json_valid("{\"a\":", 5) == -1);
  CHECK(llm_json_valid("{\"a\":1}x", 8) == -1);
  CHECK(llm_json_valid("[1,2,]", 6) == -1);
  CHECK(llm_json_valid("\"\\q\"", 4) == -1);
  CHECK(llm_json_valid("{\"a\":tru}", 9) == -1);
  CHECK(llm_json_valid(" [] ", 4) == 0 && !llm_json_nonempty_array("[ ]", 3));
  CHECK(llm_json_uint("42", 2) == 42 && llm_json_uint("-1", 2) == -1 &&
        llm_json_uint("null", 4) == -1);
}

struct seen {
  int n;
  char last[64];
};

static int on_ev(void *arg, const char *d, size_t n)
{
  struct seen *s = arg;
  s->n++;
  snprintf(s->last, sizeof(s->last), "%.*s", (int)n, d);
  return 0;
}

static void test_sse(void)
{
  struct sse p;
  struct seen s = { 0 };
  /* CRLF, CR, comment, multi-line data, a field we ignore, split bytes */
  const char *in = ": ping\r\nevent: x\r\ndata: a\r\ndata:b\r\n\r\n"
                   "data: c\r\rdata: [DONE]\n\n";
  sse_init(&p, on_ev, &s);
  for(size_t i = 0; in[i]; i++)
    CHECK(sse_feed(&p, in + i, 1) == 0);
  CHECK(sse_finish(&p) == 0);
  CHECK(s.n == 3);
  CHECK(!strcmp(s.last, "[DONE]"));
  sse_free(&p);

  memset(&s, 0, sizeof(s));
  sse_init(&p, on_ev, &s);
  CHECK(sse_feed(&p, "data: {\"x\":1}\ndata: y\n\n", 23) == 0);
  CHECK(s.n == 1 && !strcmp(s.last, "{\"x\":1}\ny"));
  /* a last event without its blank line is delivered at the end */
  CHECK(sse_feed(&p, "data: tail", 10) == 0 && s.n == 1);
  CHECK(sse_finish(&p) == 0 && s.n == 2 && !strcmp(s.last, "tail"));
  sse_free(&p);

  memset(&s, 0, sizeof(s));
  sse_init(&p, on_ev, &s);
  p.max = 16;
  CHECK(sse_feed(&p, "data: 0123456789abcdefghij\n\n", 28) == -1);
  sse_free(&p);
}

static void test_stream(void)
{
  struct llm_req q;
  struct llm_stream *s;
  const struct stats_samples *itl;

  memset(&q, 0, sizeof(q));
  s = llm_stream_new(&q);
  CHECK(s != NULL);
  CHECK(llm_stream_feed(s, CHUNK, strlen(CHUNK), 50000000) == 0);
  /* the second chunk arrives in two pieces; its time is the last one */
  CHECK(llm_stream_feed(s, CHUNK, 40, 55000000) == 0);
  CHECK(llm_stream_feed(s, CHUNK + 40, strlen(CHUNK) - 40, 60000000) == 0);
  CHECK(llm_stream_feed(s, CHUNK, strlen(CHUNK), 72000000) == 0);
  CHECK(llm_stream_feed(s, USAGE, strlen(USAGE), 80000000) == 0);
  CHECK(llm_stream_feed(s, "data: [DONE]\n\n", 14, 81000000) == 0);
  CHECK(llm_stream_end(s, 82000000) == 0);
  CHECK(llm_stream_done(s));
  CHECK(q.chunks == 3);
  CHECK(q.ttft_ns == 50000000);
  CHECK(q.e2e_ns == 72000000);      /* the last token chunk, not usage */
  CHECK(q.usage && q.output_tokens == 3 && q.prompt_tokens == 7);
  itl = llm_stream_itl(s);
  CHECK(itl->n == 2 && fabs(itl->v[0] - 10.0) < 1e-9 &&
        fabs(itl->v[1] - 12.0) < 1e-9);
  CHECK(q.err == LLM_OK);
  llm_stream_free(&s);
  CHECK(s == NULL);

  memset(&q, 0, sizeof(q));
  s = llm_stream_new(&q);
  CHECK(llm_stream_feed(s, CHUNK, strlen(CHUNK), 1) == 0);
  CHECK(llm_stream_feed(s, "data: {\"choices\":[{\"te\n\n", 24, 2) == -1);
  CHECK(q.err == LLM_ERR_MALFORMED && q.chunks == 1);
  llm_stream_free(&s);

  memset(&q, 0, sizeof(q));
  s = llm_stream_new(&q);
  CHECK(llm_stream_feed(s, "data: {\"error\":{\"message\":\"boom\","
                        "\"code\":500}}\n\n", 49, 2) == -1);
  CHECK(q.err == LLM_ERR_STREAM);
  llm_stream_free(&s);
}

static void test_arrivals(void)
{
  double t[2000], t2[2000], mean = 0, var = 0;
  llm_arrivals(t, 2000, 50, 1, 7);
  llm_arrivals(t2, 2000, 50, 1, 7);
  CHECK(!memcmp(t, t2, sizeof(t)));       /* reproducible */
  CHECK(fabs(t[1999] - 40.0) < 1e-9);     /* rescaled to n / rate */
  for(int i = 1; i < 2000; i++)
    CHECK(t[i] >= t[i - 1]);
  for(int i = 1; i < 2000; i++)
    mean += (t[i] - t[i - 1]) / 1999;
  for(int i = 1; i < 2000; i++)
    var += pow(t[i] - t[i - 1] - mean, 2) / 1998;
  /* exponential gaps: coefficient of variation about 1 */
  CHECK(fabs(sqrt(var) / mean - 1.0) < 0.1);
  llm_arrivals(t, 100, 10, 1e308 * 10, 1);  /* burstiness inf: constant */
  CHECK(fabs(t[1] - t[0] - 0.1) < 1e-9);
  llm_arrivals(t, 10, 0, 1, 1);
  CHECK(t[9] == 0);
  llm_arrivals(t, 2000, 50, 0.25, 3);      /* bursty: CV about 2 */
  mean = var = 0;
  for(int i = 1; i < 2000; i++)
    mean += (t[i] - t[i - 1]) / 1999;
  for(int i = 1; i < 2000; i++)
    var += pow(t[i] - t[i - 1] - mean, 2) / 1998;
  CHECK(sqrt(var) / mean > 1.6 && sqrt(var) / mean < 2.4);
}

static void test_body(void)
{
  struct llm_opts o;
  struct llm_prompt p = { "say \"hi\"\n", 3, 0 };
  char *b, *w;
  memset(&o, 0, sizeof(o));
  o.model = "m";
  o.output_len = 16;
  o.ignore_eos = 1;
  b = llm_body(&o, &p);
  CHECK(b && !strcmp(b, "{\"model\":\"m\",\"prompt\":\"say \\\"hi\\\"\\u000a\","
        "\"max_tokens\":16,\"ignore_eos\":true,\"stream\":true,"
        "\"stream_options\":{\"include_usage\":true}}"));
  CHECK(b && llm_json_valid(b, strlen(b)) == 0);
  free(b);
  o.api = LLM_CHAT;
  o.ignore_eos = 0;
  b = llm_body(&o, &p);
  CHECK(b && strstr(b, "\"messages\":[{\"role\":\"user\",\"content\":") &&
        strstr(b, "\"max_completion_tokens\":16"));
  free(b);
  w = llm_synthetic_prompt(50, 1);
  CHECK(w != NULL);
  if(w) {
    int words = 1;
    for(char *c = w; *c; c++)
      words += *c == ' ';
    CHECK(words == 50);
  }
  free(w);
}

int main(void)
{
  test_json();
  test_sse();
  test_stream();
  test_arrivals();
  test_body();
  if(check_failures) {
    fprintf(stderr, "llm_test: %d check(s) failed\n", check_failures);
    return 1;
  }
  printf("llm_test: ok\n");
  return 0;
}
