/*
 * workload_lua.c - cl:run{...} (the workload engine, all in C) and
 * s3.scrape(url) (a Prometheus exposition as tables).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>

#include "prom.h"
#include "s3_lua.h"
#include "strata.h"
#include "workload.h"

#define MIB (1024.0 * 1024.0)

/* metrics = {url, bearer_env, ca_bundle, prefix, settle, timeout} */
struct scrape_opts {
  const char *url, *bearer, *ca, *prefix;
  double settle, timeout;
};

static void read_metrics_opts(lua_State *L, int idx, struct scrape_opts *m)
{
  static const char *const keys[] = { "url", "bearer_env", "ca_bundle",
    "prefix", "settle", "timeout", NULL };
  static const char *fn = "s3.run: metrics";
  const char *env;
  memset(m, 0, sizeof(*m));
  if(lua_type(L, idx) != LUA_TTABLE)
    return;
  strata_check_keys(L, idx, fn, keys);
  m->url = strata_opt_str(L, idx, fn, "url", NULL);
  env = strata_opt_str(L, idx, fn, "bearer_env", NULL);
  if(env) {
    m->bearer = getenv(env);
    if(!m->bearer || !*m->bearer)
      luaL_error(L, "%s: environment variable %s (bearer_env) is not set",
                 fn, env);
  }
  m->ca = strata_opt_str(L, idx, fn, "ca_bundle", getenv("AWS_CA_BUNDLE"));
  m->prefix = strata_opt_str(L, idx, fn, "prefix", "");
  m->settle = strata_opt_num(L, idx, fn, "settle", 0);
  m->timeout = strata_opt_num(L, idx, fn, "timeout", 10);
}

/* Push {name = after - before} for every metric name with the prefix. */
static void push_deltas(lua_State *L, const struct prom_doc *a,
                        const struct prom_doc *b, const char *prefix)
{
  size_t pl = strlen(prefix);
  lua_newtable(L);
  for(size_t i = 0; i < b->n; i++) {
    const char *name = b->s[i].name;
    int found;
    double va, vb;
    if(strncmp(name, prefix, pl))
      continue;
    if(lua_getfield(L, -1, name) != LUA_TNIL) {
      lua_pop(L, 1);
      continue;                     /* already summed */
    }
    lua_pop(L, 1);
    vb = prom_sum(b, name, NULL);
    va = prom_sum(a, name, &found);
    lua_pushnumber(L, vb - (found ? va : 0));
    lua_setfield(L, -2, name);
  }
}

/* Scrape the server's metrics with the counters family's parser. */
static int scrape(const char *url, const char *bearer, const char *ca,
                  double timeout_s, struct prom_doc *d, char *err,
                  size_t cap)
{
  struct http_req r;
  memset(&r, 0, sizeof(r));
  r.url = url;
  r.bearer = bearer;
  r.ca_bundle = ca;
  r.timeout_s = timeout_s;
  if(prom_fetch(&r, d, err, cap) == 0)
    return 0;
  /* name the peer: "scrape <url>: <what failed>" */
  {
    char what[512];
    snprintf(what, sizeof(what), "%s", err);
    snprintf(err, cap, "scrape %s: %.400s", url, what);
  }
  return -1;
}

static void set_pcts(lua_State *L, const char *pre, struct stats_samples *s,
                     double scale)
{
  static const struct { const char *k; double p; } pc[] = {
    { "p50", 50 }, { "p95", 95 }, { "p99", 99 }, { "p999", 99.9 },
    { "max", 100 } };
  char k[64];
  struct stats_summary sum;
  if(!s->n)
    return;
  for(size_t i = 0; i < sizeof(pc) / sizeof(pc[0]); i++) {
    snprintf(k, sizeof(k), "%s_%s_ms", pre, pc[i].k);
    strata_set_num(L, k, stats_percentile(s, pc[i].p) * scale);
  }
  stats_summarize(s, &sum);
  snprintf(k, sizeof(k), "%s_mean_ms", pre);
  strata_set_num(L, k, sum.mean * scale);
}

static void push_result(lua_State *L, struct s3w_result *r)
{
  double el = r->elapsed_s > 0 ? r->elapsed_s : NAN;
  double cpu = r->cpu_user_s + r->cpu_sys_s;
  lua_newtable(L);
  strata_set_int(L, "ops", (lua_Integer)r->ops);
  strata_set_int(L, "bytes", (lua_Integer)r->bytes);
  strata_set_int(L, "errors", (lua_Integer)r->errors);
  strata_set_int(L, "warmup_ops", (lua_Integer)r->warmup_ops);
  strata_set_int(L, "warmup_bytes", (lua_Integer)r->warmup_bytes);
  strata_set_int(L, "prepare_bytes", (lua_Integer)r->prepare_bytes);
  strata_set_int(L, "verify_failures", (lua_Integer)r->verify_failures);
  strata_set_num(L, "elapsed_s", r->elapsed_s);
  strata_set_num(L, "mbps", (double)r->bytes / el / 1e6);
  strata_set_num(L, "mibps", (double)r->bytes / el / MIB);
  strata_set_num(L, "gbps", (double)r->bytes * 8 / el / 1e9);
  strata_set_num(L, "ops_per_s", (double)r->ops / el);
  set_pcts(L, "lat", &r->lat, 1e3);
  set_pcts(L, "ttfb", &r->ttfb, 1e3);
  if(r->get_ops && r->put_ops) {
    set_pcts(L, "get_lat", &r->lat_get, 1e3);
    set_pcts(L, "put_lat", &r->lat_put, 1e3);
  }
  strata_set_int(L, "get_ops", (lua_Integer)r->get_ops);
  strata_set_int(L, "put_ops", (lua_Integer)r->put_ops);
  strata_set_num(L, "get_mbps", (double)r->get_bytes / el / 1e6);
  strata_set_num(L, "put_mbps", (double)r->put_bytes / el / 1e6);
  if(r->mp_uploads) {
    strata_set_int(L, "uploads", (lua_Integer)r->mp_uploads);
    set_pcts(L, "object", &r->lat_put, 1e3);
  }
  strata_set_num(L, "cpu_s", cpu);
  strata_set_num(L, "cpu_util_pct", 100 * cpu / el / r->ncpu);
  strata_set_num(L, "cpu_s_per_gib",
                 r->bytes ? cpu / ((double)r->bytes / (MIB * 1024)) : NAN);
  strata_set_num(L, "host_cpu_util_pct", 100 * r->host_cpu_util);
  if(r->gpu_copy_s > 0) {
    strata_set_num(L, "gpu_copy_s", r->gpu_copy_s);
    strata_set_num(L, "gpu_copy_gbps",
                   (double)r->bytes * 8 / r->gpu_copy_s / 1e9);
  }
  lua_newtable(L);
  for(int i = 0; i < r->nerr; i++) {
    char k[96];
    if(r->err[i].status)
      snprintf(k, sizeof(k), "%ld %s", r->err[i].status, r->err[i].code);
    else
      snprintf(k, sizeof(k), "%s", r->err[i].code);
    lua_pushinteger(L, (lua_Integer)r->err[i].count);
    lua_setfield(L, -2, k);
  }
  if(r->err_other) {
    lua_pushinteger(L, (lua_Integer)r->err_other);
    lua_setfield(L, -2, "other");
  }
  lua_setfield(L, -2, "errors_by");
  if(r->first_error[0])
    strata_set_str(L, "first_error", r->first_error);
}

/* samples = true: every request's latency (ms), as lat_samples_ms, so
 * that several clients' runs merge into exact percentiles (a fleet run's
 * S3 rows: docs/fleet.md), never averaged per-client percentiles. */
static void push_samples(lua_State *L, const struct stats_samples *s)
{
  lua_createtable(L, (int)s->n, 0);
  for(size_t i = 0; i < s->n; i++) {
    lua_pushnumber(L, s->v[i] * 1e3);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "lat_samples_ms");
}

/* Delete the keys the run used (objects stay out of later runs' way). */
static void cleanup(struct l_client *c, const struct s3w_params *p)
{
  for(int i = 0; i < p->objects; i++) {
    struct s3_req q = { 0 };
    struct s3_resp r;
    char key[512];
    snprintf(key, sizeof(key), "%s%d", p->prefix, i);
    q.method = "DELETE";
    q.bucket = p->bucket;
    q.key = key;
    s3_perform(c->conn, &q, &r);
    s3_resp_free(&r);
  }
}

/*
 * cl:run{op, bucket, size, concurrency, count | duration, warmup,
 *        get_ratio, objects, prepare, part_size, range, verify, memory,
 *        seed, prefix, host_buffer_max, cleanup, metrics = {...}}
 */
int s3l_run(lua_State *L)
{
  static const char *const keys[] = { "op", "bucket", "size",
    "concurrency", "count", "duration", "warmup", "get_ratio", "objects",
    "prepare", "part_size", "range", "verify", "memory", "seed", "prefix",
    "host_buffer_max", "cleanup", "metrics", "device", "samples", NULL };
  static const char *const ops[] = { "get", "put", "mixed", "multipart",
                                     NULL };
  static const char *fn = "s3.run";
  struct l_client *c = s3l_check(L, 1, fn);
  struct s3w_params p;
  struct s3w_result res;
  struct scrape_opts m;
  struct prom_doc before = { 0 }, after = { 0 };
  char err[512], prefix[128], serr[512] = "";
  const char *mem, *opname;
  int rc, have_before = 0;

  luaL_checktype(L, 2, LUA_TTABLE);
  strata_check_keys(L, 2, fn, keys);
  memset(&p, 0, sizeof(p));
  opname = strata_opt_str(L, 2, fn, "op", NULL);
  if(!opname)
    return luaL_error(L, "%s: option 'op' is required (get, put, mixed, "
                      "multipart)", fn);
  lua_getfield(L, 2, "op");
  p.op = (enum s3w_op)luaL_checkoption(L, -1, NULL, ops);
  lua_pop(L, 1);
  p.bucket = strata_opt_str(L, 2, fn, "bucket", NULL);
  if(!p.bucket)
    return luaL_error(L, "%s: option 'bucket' is required", fn);
  p.size = (uint64_t)strata_opt_int(L, 2, fn, "size", 0);
  if(!p.size)
    return luaL_error(L, "%s: option 'size' must be > 0 bytes", fn);
  p.concurrency = (int)strata_opt_int(L, 2, fn, "concurrency", 1);
  if(p.concurrency < 1 || p.concurrency > 4096)
    return luaL_error(L, "%s: option 'concurrency' must be 1..4096", fn);
  p.count = (uint64_t)strata_opt_int(L, 2, fn, "count", 0);
  p.duration_s = strata_opt_num(L, 2, fn, "duration", 0);
  if(!p.count && p.duration_s <= 0)
    return luaL_error(L, "%s: give 'count' (operations) or 'duration' "
                      "(seconds)", fn);
  p.warmup_s = strata_opt_num(L, 2, fn, "warmup", 0);
  p.get_ratio = strata_opt_num(L, 2, fn, "get_ratio", 0.7);
  if(p.get_ratio < 0 || p.get_ratio > 1)
    return luaL_error(L, "%s: option 'get_ratio' must be 0..1", fn);
  p.objects = (int)strata_opt_int(L, 2, fn, "objects", p.concurrency);
  if(p.objects < 1)
    return luaL_error(L, "%s: option 'objects' must be >= 1", fn);
  p.prepare = strata_opt_bool(L, 2, fn, "prepare", 1);
  p.part_size = (uint64_t)strata_opt_int(L, 2, fn, "part_size", 0);
  if(p.op == S3W_MULTIPART && p.part_size < 1)
    return luaL_error(L, "%s: multipart needs 'part_size'", fn);
  p.range_len = (uint64_t)strata_opt_int(L, 2, fn, "range", 0);
  p.verify = strata_opt_bool(L, 2, fn, "verify", 0);
  p.seed = (uint64_t)strata_opt_int(L, 2, fn, "seed", 1);
  p.host_buffer_max = (uint64_t)strata_opt_int(L, 2, fn, "host_buffer_max",
                                               8ll << 30);
  snprintf(prefix, sizeof(prefix), "strata-%d-", (int)getpid());
  p.prefix = strata_opt_str(L, 2, fn, "prefix", prefix);
  mem = strata_opt_str(L, 2, fn, "memory", "host");
  if(strcmp(mem, "host") && strcmp(mem, "cuda"))
    return luaL_error(L, "%s: option 'memory' must be \"host\" or "
                      "\"cuda\", got \"%s\"", fn, mem);
  p.memory = strcmp(mem, "cuda") ? S3W_HOST : S3W_CUDA;
  p.device = (int)strata_opt_int(L, 2, fn, "device", 0);
  lua_getfield(L, 2, "metrics");
  read_metrics_opts(L, lua_gettop(L), &m);
  lua_pop(L, 1);

  if(m.url) {
    if(scrape(m.url, m.bearer, m.ca, m.timeout, &before, serr,
              sizeof(serr)) == 0)
      have_before = 1;
  }
  rc = s3w_run(&c->cfg, &p, &res, err, sizeof(err));
  if(rc) {
    prom_doc_free(&before);
    s3w_result_free(&res);
    if(rc == S3W_ABSENT)
      return strata_skip(L, "memory = \"%s\": %s", mem, err);
    return luaL_error(L, "%s: %s", fn, err);
  }
  if(strata_opt_bool(L, 2, fn, "cleanup", 1))
    cleanup(c, &p);
  push_result(L, &res);
  if(strata_opt_bool(L, 2, fn, "samples", 0))
    push_samples(L, &res.lat);
  s3w_result_free(&res);
  if(m.url && have_before) {
    if(m.settle > 0) {
      struct timespec ts = { (time_t)m.settle,
        (long)((m.settle - (double)(time_t)m.settle) * 1e9) };
      nanosleep(&ts, NULL);
    }
    if(scrape(m.url, m.bearer, m.ca, m.timeout, &after, serr,
              sizeof(serr)) == 0) {
      push_deltas(L, &before, &after, m.prefix);
      lua_setfield(L, -2, "server");
    }
  }
  if(serr[0])
    strata_set_str(L, "server_error", serr);
  prom_doc_free(&before);
  prom_doc_free(&after);
  return 1;
}

/*
 * s3.scrape(url [, {bearer_env, ca_bundle, timeout}])
 *   -> {["name{labels}"] = value}, {name = sum over labels}
 * Raises when the endpoint cannot be read.
 */
int s3l_scrape(lua_State *L)
{
  static const char *const keys[] = { "bearer_env", "ca_bundle", "timeout",
                                      NULL };
  static const char *fn = "s3.scrape";
  const char *url = luaL_checkstring(L, 1), *bearer = NULL, *env;
  struct prom_doc s;
  char err[512];
  if(!lua_isnoneornil(L, 2))
    strata_check_keys(L, 2, fn, keys);
  env = strata_opt_str(L, 2, fn, "bearer_env", NULL);
  if(env && !(bearer = getenv(env)))
    return luaL_error(L, "%s: environment variable %s (bearer_env) is not "
                      "set", fn, env);
  if(scrape(url, bearer, strata_opt_str(L, 2, fn, "ca_bundle", NULL),
            strata_opt_num(L, 2, fn, "timeout", 10), &s, err, sizeof(err)))
    return luaL_error(L, "%s: %s", fn, err);
  lua_createtable(L, 0, (int)s.n);
  lua_newtable(L);
  for(size_t i = 0; i < s.n; i++) {
    char key[1024];
    prom_key(&s.s[i], key, sizeof(key));
    lua_pushnumber(L, s.s[i].value);
    lua_setfield(L, -3, key);
    if(lua_getfield(L, -1, s.s[i].name) == LUA_TNUMBER) {
      double v = lua_tonumber(L, -1) + s.s[i].value;
      lua_pop(L, 1);
      lua_pushnumber(L, v);
    }
    else {
      lua_pop(L, 1);
      lua_pushnumber(L, s.s[i].value);
    }
    lua_setfield(L, -2, s.s[i].name);
  }
  prom_doc_free(&s);
  return 2;
}
