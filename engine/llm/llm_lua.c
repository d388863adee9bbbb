/*
 * llm_lua.c - require "strata.llm": run{...} drives an OpenAI-compatible
 * streaming endpoint wholly in C (llm.h) and returns plain tables.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "counters.h"   /* http_get: the shared libcurl GET */
#include "llm.h"
#include "strata.h"

static void push_summary(lua_State *L, const char *k, struct stats_samples *s)
{
  struct stats_summary m;
  stats_summarize(s, &m);
  lua_createtable(L, 0, 10);
  strata_set_int(L, "n", (lua_Integer)m.n);
  strata_set_num(L, "mean", m.mean);
  strata_set_num(L, "stdev", m.stdev);
  strata_set_num(L, "min", m.min);
  strata_set_num(L, "p50", m.p50);
  strata_set_num(L, "p90", m.p90);
  strata_set_num(L, "p95", m.p95);
  strata_set_num(L, "p99", m.p99);
  strata_set_num(L, "max", m.max);
  lua_setfield(L, -2, k);
}

static void push_result(lua_State *L, const struct llm_opts *o,
                        struct llm_result *r, int per_request)
{
  double d = r->duration_s;
  lua_createtable(L, 0, 24);
  strata_set_int(L, "requests", (lua_Integer)r->n);
  strata_set_int(L, "completed", (lua_Integer)r->completed);
  strata_set_int(L, "failed", (lua_Integer)r->failed);
  strata_set_num(L, "duration_s", d);
  strata_set_int(L, "input_tokens", (lua_Integer)r->input_tokens);
  strata_set_int(L, "output_tokens", (lua_Integer)r->output_tokens);
  strata_set_num(L, "req_per_s", d > 0 ? (double)r->completed / d : NAN);
  strata_set_num(L, "out_tok_per_s",
                 d > 0 ? (double)r->output_tokens / d : NAN);
  strata_set_num(L, "total_tok_per_s",
                 d > 0 ? (double)(r->output_tokens + r->input_tokens) / d
                       : NAN);
  strata_set_int(L, "concurrency", o->concurrency);
  strata_set_num(L, "request_rate", o->request_rate);
  strata_set_int(L, "peak_inflight", r->peak_inflight);
  push_summary(L, "ttft_ms", &r->ttft_ms);
  push_summary(L, "itl_ms", &r->itl_ms);
  push_summary(L, "tpot_ms", &r->tpot_ms);
  push_summary(L, "e2e_ms", &r->e2e_ms);

  lua_createtable(L, 0, LLM_ERR_COUNT);
  for(int e = 1; e < LLM_ERR_COUNT; e++)
    if(r->errors[e])
      strata_set_int(L, llm_strerr((enum llm_err)e),
                     (lua_Integer)r->errors[e]);
  lua_setfield(L, -2, "errors");
  lua_createtable(L, 0, (int)r->nstatus);
  for(size_t i = 0; i < r->nstatus; i++) {
    lua_pushinteger(L, (lua_Integer)r->status_count[i]);
    lua_rawseti(L, -2, r->status_code[i]);
  }
  lua_setfield(L, -2, "status");
  /* the first few failures, word for word */
  lua_newtable(L);
  for(size_t i = 0, k = 0; i < r->n && k < 8; i++)
    if(r->req[i].err != LLM_OK && r->req[i].err != LLM_ERR_STOPPED) {
      lua_pushfstring(L, "request %d: %s: %s", (int)i,
                      llm_strerr(r->req[i].err), r->req[i].error);
      lua_rawseti(L, -2, (lua_Integer)++k);
    }
  lua_setfield(L, -2, "error_texts");

  if(per_request) {
    lua_createtable(L, (int)r->n, 0);
    for(size_t i = 0; i < r->n; i++) {
      const struct llm_req *q = &r->req[i];
      lua_createtable(L, 0, 12);
      strata_set_num(L, "start_s", (double)q->start_ns / 1e9);
      /* on CLOCK_MONOTONIC, to set beside a server's own on this host */
      strata_set_int(L, "start_ns", (lua_Integer)(r->run0_ns + q->start_ns));
      strata_set_int(L, "first_token_ns", q->chunks ? (lua_Integer)
                     (r->run0_ns + q->start_ns + q->ttft_ns) : 0);
      strata_set_int(L, "last_token_ns", q->chunks ? (lua_Integer)
                     (r->run0_ns + q->start_ns + q->e2e_ns) : 0);
      strata_set_num(L, "ttft_ms", q->chunks ? (double)q->ttft_ns / 1e6
                                             : NAN);
      strata_set_num(L, "e2e_ms", q->chunks ? (double)q->e2e_ns / 1e6
                                            : NAN);
      strata_set_int(L, "chunks", q->chunks);
      strata_set_int(L, "output_tokens", q->output_tokens);
      strata_set_int(L, "prompt_tokens", q->prompt_tokens);
      strata_set_int(L, "status", q->status);
      strata_set_str(L, "error", llm_strerr(q->err));
      if(q->itl) {
        lua_createtable(L, (int)q->nitl, 0);
        for(uint32_t k = 0; k < q->nitl; k++) {
          lua_pushnumber(L, q->itl[k]);
          lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "itl_ms");
      }
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "per_request");
  }
}

/* prompts = { "text" | {text =, input_len =, output_len =}, ... } */
static size_t read_prompts(lua_State *L, int t, const char *fn,
                           struct llm_prompt **out)
{
  size_t n = lua_rawlen(L, t);
  struct llm_prompt *p;
  if(!n)
    luaL_error(L, "%s: option 'prompts' is an empty list", fn);
  p = lua_newuserdatauv(L, n * sizeof(*p), 0);   /* freed with the state */
  lua_setfield(L, LUA_REGISTRYINDEX, "strata.llm.prompts");
  for(size_t i = 0; i < n; i++) {
    lua_rawgeti(L, t, (lua_Integer)i + 1);
    memset(&p[i], 0, sizeof(p[i]));
    if(lua_type(L, -1) == LUA_TSTRING)
      p[i].text = lua_tostring(L, -1);
    else if(lua_istable(L, -1)) {
      lua_getfield(L, -1, "text");
      p[i].text = lua_tostring(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "input_len");
      p[i].input_len = (int)lua_tointeger(L, -1);
      lua_pop(L, 1);
      lua_getfield(L, -1, "output_len");
      p[i].output_len = (int)lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    if(!p[i].text)
      luaL_error(L, "%s: prompts[%d] has no text", fn, (int)i + 1);
    lua_pop(L, 1);   /* the string stays alive: prompts table holds it */
  }
  *out = p;
  return n;
}

/*
 * llm.run{url, api = "completions"|"chat", model, prompts | input_len,
 *         output_len, num_prompts, num_requests, concurrency,
 *         request_rate, burstiness, seed, ignore_eos, timeout,
 *         stall_timeout, connect_timeout, ca_bundle, api_key_env,
 *         id_prefix, per_request}
 */
static int l_run(lua_State *L)
{
  static const char *const keys[] = { "url", "api", "model", "prompts",
    "input_len", "output_len", "num_prompts", "num_requests",
    "concurrency", "request_rate", "burstiness", "seed", "ignore_eos",
    "timeout", "stall_timeout", "connect_timeout", "ca_bundle",
    "api_key_env", "id_prefix", "per_request", NULL };
  static const char *fn = "llm.run";
  struct llm_opts o;
  struct llm_result r;
  struct llm_prompt *p = NULL;
  char **synth = NULL;
  const char *api, *env;
  char err[256];
  size_t np;
  int rc, input_len;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  memset(&o, 0, sizeof(o));
  o.url = strata_opt_str(L, 1, fn, "url", NULL);
  if(!o.url)
    return luaL_error(L, "%s: option 'url' is required", fn);
  api = strata_opt_str(L, 1, fn, "api", "completions");
  if(!strcmp(api, "chat"))
    o.api = LLM_CHAT;
  else if(strcmp(api, "completions"))
    return luaL_error(L, "%s: option 'api' must be \"completions\" or "
                      "\"chat\", got \"%s\"", fn, api);
  o.model = strata_opt_str(L, 1, fn, "model", NULL);
  if(!o.model)
    return luaL_error(L, "%s: option 'model' is required", fn);
  o.output_len = (int)strata_opt_int(L, 1, fn, "output_len", 128);
  o.num_requests = (size_t)strata_opt_int(L, 1, fn, "num_requests", 100);
  if(o.num_requests < 1 || o.num_requests > 10000000)
    return luaL_error(L, "%s: option 'num_requests' must be >= 1", fn);
  o.concurrency = (int)strata_opt_int(L, 1, fn, "concurrency", 0);
  if(o.concurrency < 0)
    return luaL_error(L, "%s: option 'concurrency' must be >= 0", fn);
  o.request_rate = strata_opt_num(L, 1, fn, "request_rate", 0);
  if(o.request_rate < 0)
    return luaL_error(L, "%s: option 'request_rate' must be >= 0 (0 = "
                      "all at once)", fn);
  o.burstiness = strata_opt_num(L, 1, fn, "burstiness", 1);
  if(!(o.burstiness > 0))
    return luaL_error(L, "%s: option 'burstiness' must be > 0", fn);
  o.seed = (uint64_t)strata_opt_int(L, 1, fn, "seed", 0);
  o.ignore_eos = strata_opt_bool(L, 1, fn, "ignore_eos", 0);
  o.timeout_s = strata_opt_num(L, 1, fn, "timeout", 0);
  o.stall_s = strata_opt_num(L, 1, fn, "stall_timeout", 30);
  o.connect_timeout_s = strata_opt_num(L, 1, fn, "connect_timeout", 5);
  o.ca_bundle = strata_opt_str(L, 1, fn, "ca_bundle", NULL);
  o.id_prefix = strata_opt_str(L, 1, fn, "id_prefix", NULL);
  o.keep_itl = strata_opt_bool(L, 1, fn, "per_request", 0);
  env = strata_opt_str(L, 1, fn, "api_key_env", NULL);
  if(env) {
    o.api_key = getenv(env);
    if(!o.api_key || !*o.api_key)
      return luaL_error(L, "%s: api_key_env: environment variable %s is "
                        "not set", fn, env);
  }

  lua_getfield(L, 1, "prompts");
  if(!lua_isnil(L, -1)) {
    luaL_checktype(L, -1, LUA_TTABLE);
    np = read_prompts(L, lua_gettop(L), fn, &p);
  }
  else {
    input_len = (int)strata_opt_int(L, 1, fn, "input_len", 128);
    np = (size_t)strata_opt_int(L, 1, fn, "num_prompts", 16);
    if(input_len < 1 || np < 1 || np > 100000)
      return luaL_error(L, "%s: input_len and num_prompts must be >= 1",
                        fn);
    p = lua_newuserdatauv(L, np * (sizeof(*p) + sizeof(char *)), 0);
    synth = (char **)(p + np);
    for(size_t i = 0; i < np; i++) {
      synth[i] = llm_synthetic_prompt(input_len, o.seed + i + 1);
      p[i].text = synth[i];
      p[i].input_len = input_len;
      p[i].output_len = 0;
      if(!synth[i]) {
        for(size_t j = 0; j < i; j++)
          free(synth[j]);
        return luaL_error(L, "%s: out of memory", fn);
      }
    }
  }
  o.prompts = p;
  o.nprompts = np;
  rc = llm_run(&o, &r, err, sizeof(err));
  if(synth)
    for(size_t i = 0; i < np; i++)
      free(synth[i]);
  if(rc)
    return luaL_error(L, "%s: %s", fn, err);
  push_result(L, &o, &r, strata_opt_bool(L, 1, fn, "per_request", 0));
  llm_result_free(&r);
  return 1;
}

/* llm.arrivals(n, rate, burstiness, seed) -> { t1, ..., tn } (seconds) */
static int l_arrivals(lua_State *L)
{
  lua_Integer n = luaL_checkinteger(L, 1);
  double rate = luaL_checknumber(L, 2);
  double b = luaL_optnumber(L, 3, 1);
  uint64_t seed = (uint64_t)luaL_optinteger(L, 4, 0);
  double *t;
  luaL_argcheck(L, n >= 1 && n <= 10000000, 1, "1..1e7 requests");
  luaL_argcheck(L, b > 0, 3, "burstiness must be > 0");
  t = lua_newuserdatauv(L, (size_t)n * sizeof(*t), 0);
  llm_arrivals(t, (size_t)n, rate, b, seed);
  lua_createtable(L, (int)n, 0);
  for(lua_Integer i = 0; i < n; i++) {
    lua_pushnumber(L, t[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* llm.body{api, model, prompt, output_len, ignore_eos} -> the JSON body */
static int l_body(lua_State *L)
{
  static const char *const keys[] = { "api", "model", "prompt",
    "output_len", "ignore_eos", NULL };
  static const char *fn = "llm.body";
  struct llm_opts o;
  struct llm_prompt p;
  char *b;
  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  memset(&o, 0, sizeof(o));
  memset(&p, 0, sizeof(p));
  o.api = !strcmp(strata_opt_str(L, 1, fn, "api", "completions"), "chat")
          ? LLM_CHAT : LLM_COMPLETIONS;
  o.model = strata_opt_str(L, 1, fn, "model", "");
  o.output_len = (int)strata_opt_int(L, 1, fn, "output_len", 0);
  o.ignore_eos = strata_opt_bool(L, 1, fn, "ignore_eos", 0);
  p.text = strata_opt_str(L, 1, fn, "prompt", "");
  b = llm_body(&o, &p);
  if(!b)
    return luaL_error(L, "%s: out of memory", fn);
  lua_pushstring(L, b);
  free(b);
  return 1;
}

/* llm.synthetic_prompt(input_len, seed) -> text */
static int l_synthetic(lua_State *L)
{
  char *s = llm_synthetic_prompt((int)luaL_checkinteger(L, 1),
                                 (uint64_t)luaL_optinteger(L, 2, 0));
  if(!s)
    return luaL_error(L, "llm.synthetic_prompt: out of memory");
  lua_pushstring(L, s);
  free(s);
  return 1;
}

/*
 * llm.ready{url, timeout = 900, interval = 0.25} -> seconds until url
 * answered 200 (the readiness URL a site names for its serving endpoint), polled
 * from the call; raises naming the last answer when the deadline passes.
 */
static int l_ready(lua_State *L)
{
  static const char *const keys[] = { "url", "timeout", "interval", NULL };
  static const char *fn = "llm.ready";
  struct http_req r;
  char err[512] = "", safe[512];
  double limit, every;
  uint64_t t0 = strata_now_ns();
  long status = 0;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  memset(&r, 0, sizeof(r));
  r.url = strata_opt_str(L, 1, fn, "url", NULL);
  if(!r.url)
    return luaL_error(L, "%s: option 'url' is required", fn);
  limit = strata_opt_num(L, 1, fn, "timeout", 900);
  every = strata_opt_num(L, 1, fn, "interval", 0.25);
  r.timeout_s = 2;
  r.any_status = 1;
  r.max_bytes = 1 << 16;
  while(!strata_stop_flag) {
    char *body = NULL;
    size_t len;
    status = 0;
    if(http_get(&r, &body, &len, &status, err, sizeof(err)) == 0) {
      free(body);
      if(status == 200) {
        lua_pushnumber(L, (double)(strata_now_ns() - t0) / 1e9);
        return 1;
      }
      snprintf(err, sizeof(err), "HTTP %ld", status);
    }
    if((double)(strata_now_ns() - t0) / 1e9 >= limit)
      break;
    {
      struct timespec ts = { (time_t)every,
                             (long)((every - (double)(time_t)every) * 1e9) };
      nanosleep(&ts, NULL);
    }
  }
  http_safe_url(r.url, safe, sizeof(safe));
  return luaL_error(L, "%s: %s: not ready after %.0f s (last: %s)", fn,
                    safe, limit, err);
}

int llm_l_stage(lua_State *L);   /* stage_lua.c */

static const luaL_Reg llm_funcs[] = {
  { "ready", l_ready },
  { "stage", llm_l_stage },
  { "run", l_run },
  { "arrivals", l_arrivals },
  { "body", l_body },
  { "synthetic_prompt", l_synthetic },
  { NULL, NULL }
};

int luaopen_strata_llm(lua_State *L)
{
  luaL_newlib(L, llm_funcs);
  return 1;
}
