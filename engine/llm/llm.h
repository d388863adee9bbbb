/*
 * llm.h - an OpenAI-compatible streaming load generator: POST
 * /v1/completions or /v1/chat/completions with "stream": true and
 * "stream_options": {"include_usage": true}, server-sent events read as
 * they arrive on a curl multi handle, one timestamp (CLOCK_MONOTONIC) per
 * token chunk.  Arrivals as vLLM's benchmark (vllm/benchmarks/serve.py
 * get_request): all at once, or gamma-distributed gaps (shape =
 * burstiness; 1 = Poisson) rescaled to num_requests / request_rate, with
 * at most `concurrency` requests in flight.  Metrics follow that
 * benchmark's definitions (docs/llm.md).  No lua.h.
 */
#ifndef STRATA_LLM_H
#define STRATA_LLM_H

#include <stddef.h>
#include <stdint.h>

#include "stats.h"

enum llm_api { LLM_COMPLETIONS, LLM_CHAT };

/* Why a request failed (LLM_OK: it did not). */
enum llm_err {
  LLM_OK = 0,
  LLM_ERR_HTTP,       /* a status other than 200 */
  LLM_ERR_CONNECT,    /* resolve / connect / send failed */
  LLM_ERR_TRANSPORT,  /* the stream broke (reset, bad chunking, ...) */
  LLM_ERR_TIMEOUT,    /* the whole-request deadline passed */
  LLM_ERR_STALL,      /* no byte for stall_s */
  LLM_ERR_MALFORMED,  /* an event's data was neither JSON nor [DONE] */
  LLM_ERR_STREAM,     /* the server streamed an "error" object */
  LLM_ERR_NO_TOKEN,   /* 200 but no chunk with a choice */
  LLM_ERR_STOPPED,    /* SIGINT/SIGTERM */
  LLM_ERR_COUNT
};

const char *llm_strerr(enum llm_err e);   /* "http", "stall", ... */

struct llm_prompt {
  const char *text;   /* the prompt (completions) / user message (chat) */
  int input_len;      /* its length in tokens, as far as known (0: not) */
  int output_len;     /* max_tokens for it (0: the run's output_len) */
};

struct llm_opts {
  const char *url;            /* the endpoint, ".../v1/completions" */
  enum llm_api api;
  const char *model;
  const char *api_key;        /* "Authorization: Bearer"; NULL: none */
  const struct llm_prompt *prompts;  /* used round robin */
  size_t nprompts;
  size_t num_requests;
  int output_len;             /* max_tokens / max_completion_tokens */
  int ignore_eos;             /* send "ignore_eos": true (vLLM) */
  int concurrency;            /* most in flight; 0 = no limit */
  double request_rate;        /* req/s; 0 = all at once (vLLM's inf) */
  double burstiness;          /* gamma shape; 0 = 1 (Poisson) */
  uint64_t seed;
  double timeout_s;           /* whole request; 0 = none */
  double stall_s;             /* no byte for this long fails it; 0 = 30 */
  double connect_timeout_s;   /* 0 = 5 */
  const char *ca_bundle;      /* https; NULL = the system's */
  const char *id_prefix;      /* x-request-id = <prefix><index>; or NULL */
  int keep_itl;               /* keep each request's gaps (llm_req.itl) */
};

/* One request, as measured. */
struct llm_req {
  uint64_t start_ns;          /* since the run's start */
  uint64_t ttft_ns, e2e_ns;   /* e2e: start to the last token chunk */
  uint32_t chunks;            /* events with a choice */
  int32_t output_tokens;      /* usage.completion_tokens, else chunks */
  int32_t prompt_tokens;      /* usage.prompt_tokens, else input_len */
  int usage;                  /* a usage object came */
  long status;                /* HTTP status, 0 when none */
  enum llm_err err;
  char error[160];            /* what failed, for the first few */
  double *itl;                /* keep_itl: its gaps in ms, nitl of them */
  uint32_t nitl;
};

struct llm_result {
  size_t n;                   /* requests run */
  struct llm_req *req;        /* n of them, in submission order */
  size_t completed, failed;
  size_t errors[LLM_ERR_COUNT];
  long status_code[16];       /* HTTP statuses of LLM_ERR_HTTP ... */
  size_t status_count[16];    /* ... and how many of each */
  size_t nstatus;
  uint64_t input_tokens, output_tokens;  /* over completed requests */
  double duration_s;          /* first start to last end */
  uint64_t run0_ns;           /* the run's start on CLOCK_MONOTONIC */
  int peak_inflight;
  /* milliseconds, over completed requests (itl: every gap) */
  struct stats_samples ttft_ms, itl_ms, tpot_ms, e2e_ms;
};

/*
 * Run the load.  0 with *r filled (free with llm_result_free), or -1 with
 * err naming the step (bad options, curl could not start).  Failed
 * requests are results, not errors.
 */
int llm_run(const struct llm_opts *o, struct llm_result *r, char *err,
            size_t errlen);
void llm_result_free(struct llm_result *r);

/* The arrival offsets (seconds from the start) of n requests at rate
 * with burstiness, as get_request in vllm/benchmarks/serve.py; rate <= 0:
 * all zero.  Deterministic in seed. */
void llm_arrivals(double *t, size_t n, double rate, double burstiness,
                  uint64_t seed);

/* A synthetic prompt of about input_len tokens (words of a fixed list,
 * picked by seed), malloc'd; NULL when out of memory. */
char *llm_synthetic_prompt(int input_len, uint64_t seed);

/* The JSON request body for prompt p (malloc'd, NUL ended). */
char *llm_body(const struct llm_opts *o, const struct llm_prompt *p);

/* --- one stream, fed byte by byte (run.c; unit-tested) --------------- */
struct llm_stream;
/* Parse what arrived at time now_ns (since the request's start) into q;
 * returns -1 when the stream is malformed or reported an error (q->err
 * set) and the transfer should stop. */
struct llm_stream *llm_stream_new(struct llm_req *q);
int llm_stream_feed(struct llm_stream *s, const char *b, size_t n,
                    uint64_t now_ns);
int llm_stream_end(struct llm_stream *s, uint64_t now_ns);
int llm_stream_done(const struct llm_stream *s);  /* [DONE] seen */
/* This stream's inter-token gaps in ms (merged into the run's only when
 * the request completed, as vLLM's benchmark does). */
const struct stats_samples *llm_stream_itl(const struct llm_stream *s);
void llm_stream_free(struct llm_stream **s);

#endif
