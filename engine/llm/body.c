/*
 * body.c - what a run sends: the arrival schedule, synthetic prompts and
 * the JSON request bodies.
 *
 * Request fields: OpenAI API reference, "Completions" (model, prompt,
 * max_tokens, stream, stream_options.include_usage) and "Chat
 * Completions" (model, messages[{role, content}], max_completion_tokens,
 * stream, stream_options.include_usage); ignore_eos is vLLM's extra
 * sampling parameter, sent as vLLM's benchmark does
 * (endpoint_request_func.py _update_payload_common).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"
#include "strata.h"

/* xorshift64* (Vigna): reproducible in seed, no global state. */
static uint64_t rnd(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

static double unif(uint64_t *s)   /* (0, 1) */
{
  return ((double)(rnd(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(uint64_t *s)
{
  return sqrt(-2.0 * log(unif(s))) * cos(6.283185307179586 * unif(s));
}

/* Gamma(shape k, scale 1): Marsaglia & Tsang (2000); k < 1 through
 * Gamma(k + 1) * U^(1/k). */
static double gamma1(uint64_t *s, double k)
{
  double d, c, x, v, u;
  if(k < 1)
    return gamma1(s, k + 1) * pow(unif(s), 1.0 / k);
  d = k - 1.0 / 3.0;
  c = 1.0 / sqrt(9.0 * d);
  for(;;) {
    do {
      x = normal(s);
      v = 1.0 + c * x;
    } while(v <= 0);
    v = v * v * v;
    u = unif(s);
    if(log(u) < 0.5 * x * x + d - d * v + d * log(v))
      return d * v;
  }
}

void llm_arrivals(double *t, size_t n, double rate, double burstiness,
                  uint64_t seed)
{
  uint64_t s = seed ? seed : 0x9E3779B97F4A7C15ULL;
  double k = burstiness > 0 ? burstiness : 1.0, acc = 0;

  if(!n)
    return;
  if(rate <= 0 || isinf(rate)) {
    memset(t, 0, n * sizeof(*t));
    return;
  }
  /* serve.py: delay_i ~ Gamma(shape = burstiness, scale = 1 / (rate *
   * burstiness)), cumulated, then rescaled so the last is n / rate */
  for(size_t i = 0; i < n; i++) {
    acc += isinf(k) ? 1.0 / rate : gamma1(&s, k) / (rate * k);
    t[i] = acc;
  }
  if(t[n - 1] > 0) {
    double f = ((double)n / rate) / t[n - 1];
    for(size_t i = 0; i < n; i++)
      t[i] *= f;
  }
}

/* Common English words, each one GPT-2 / Llama BPE token with its leading
 * space in running text (so a prompt of N words is about N tokens; the
 * server's usage.prompt_tokens says exactly). */
static const char *const WORDS[] = {
  "the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
  "was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
  "his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
  "were", "their", "one", "all", "we", "can", "her", "has", "there",
  "been", "if", "more", "when", "will", "would", "who", "so", "no",
  "time", "people", "year", "way", "day", "man", "thing", "world", "life",
  "hand", "part", "place", "case", "week", "number", "group"
};
#define NWORDS (sizeof(WORDS) / sizeof(WORDS[0]))

char *llm_synthetic_prompt(int input_len, uint64_t seed)
{
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  size_t cap = (size_t)(input_len > 0 ? input_len : 1) * 8 + 1, len = 0;
  char *p = malloc(cap);
  if(!p)
    return NULL;
  for(int i = 0; i < input_len; i++) {
    const char *w = WORDS[rnd(&s) % NWORDS];
    len += (size_t)snprintf(p + len, cap - len, "%s%s", i ? " " : "", w);
  }
  p[len] = '\0';
  return p;
}

/* --- JSON out ------------------------------------------------------------- */

struct buf {
  char *p;
  size_t len, cap;
  int oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
  if(b->oom)
    return;
  if(strata_reserve(&b->p, &b->cap, b->len + n + 1, 512)) {
    b->oom = 1;
    return;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
  put(b, s, strlen(s));
}

/* A JSON string (RFC 8259 escapes; UTF-8 passes through). */
static void str(struct buf *b, const char *s)
{
  put(b, "\"", 1);
  for(; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char e[8];
    if(c == '"' || c == '\\') {
      e[0] = '\\';
      e[1] = (char)c;
      put(b, e, 2);
    }
    else if(c < 0x20) {
      snprintf(e, sizeof(e), "\\u%04x", c);
      put(b, e, 6);
    }
    else
      put(b, (const char *)&c, 1);
  }
  put(b, "\"", 1);
}

char *llm_body(const struct llm_opts *o, const struct llm_prompt *p)
{
  struct buf b = { 0 };
  char n[32];
  int out = p->output_len > 0 ? p->output_len : o->output_len;

  puts_(&b, "{\"model\":");
  str(&b, o->model ? o->model : "");
  if(o->api == LLM_CHAT) {
    puts_(&b, ",\"messages\":[{\"role\":\"user\",\"content\":");
    str(&b, p->text ? p->text : "");
    puts_(&b, "}]");
  }
  else {
    puts_(&b, ",\"prompt\":");
    str(&b, p->text ? p->text : "");
  }
  if(out > 0) {
    snprintf(n, sizeof(n), "%d", out);
    puts_(&b, o->api == LLM_CHAT ? ",\"max_completion_tokens\":"
                                 : ",\"max_tokens\":");
    puts_(&b, n);
  }
  if(o->ignore_eos)
    puts_(&b, ",\"ignore_eos\":true");
  puts_(&b, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
  if(b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
