/*
 * counters_lua.c - require "strata.counters": the sampler handle
 * (start / stop / __close), one-shot snapshots, and the Prometheus
 * parser, scraper and HTTP API query.  Only checks, converts and opens;
 * the work is in procfs.c, prom.c and sampler.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>
#include <curl/curl.h>

#include "counters.h"
#include "strata.h"

#define SAMPLER_MT "strata.counters.sampler"

static const char *const src_names[] = {
  "cpu", "softirq", "interrupts", "intr", "ctxt", "net", "rdma", "tcp",
  "ethtool", "gpu", "disk", NULL
};
static const unsigned src_bits[] = {
  CTR_SRC_CPU, CTR_SRC_SOFTIRQ, CTR_SRC_INTR, CTR_SRC_INTR, CTR_SRC_CTXT,
  CTR_SRC_NET, CTR_SRC_RDMA, CTR_SRC_TCP, CTR_SRC_ETHTOOL, CTR_SRC_GPU,
  CTR_SRC_DISK
};
#define SRC_DEFAULT (CTR_SRC_CPU | CTR_SRC_SOFTIRQ | CTR_SRC_INTR | \
                     CTR_SRC_CTXT | CTR_SRC_NET | CTR_SRC_RDMA | CTR_SRC_TCP | \
                     CTR_SRC_DISK)

static unsigned opt_sources(lua_State *L, int idx, const char *fn)
{
  unsigned bits = 0;
  int t = lua_getfield(L, idx, "sources");
  if(t == LUA_TNIL) {
    lua_pop(L, 1);
    return SRC_DEFAULT;
  }
  if(t != LUA_TTABLE)
    luaL_error(L, "%s: option 'sources' must be a list of names", fn);
  for(lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
    const char *nm = lua_tostring(L, -1);
    int k = -1;
    for(int j = 0; nm && src_names[j]; j++)
      if(!strcmp(nm, src_names[j]))
        k = j;
    if(k < 0)
      luaL_error(L, "%s: sources[%d]: unknown source '%s' (cpu, softirq, "
                 "interrupts, ctxt, net, rdma, tcp, ethtool, gpu, disk)", fn,
                 (int)i,
                 nm ? nm : luaL_typename(L, -1));
    bits |= src_bits[k];
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  return bits;
}

/* 'ethtool' = { "ens1f0", ... }: a NULL-ended array in a userdata left on
 * the stack (the strings stay owned by the option table).  NULL if unset;
 * sets CTR_SRC_ETHTOOL in *src when given. */
static char **opt_ifaces(lua_State *L, int idx, const char *fn, unsigned *src)
{
  char **v;
  size_t n;
  if(lua_getfield(L, idx, "ethtool") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushnil(L);  /* keep the stack shape */
    return NULL;
  }
  if(!lua_istable(L, -1))
    luaL_error(L, "%s: option 'ethtool' must be a list of interface names",
               fn);
  n = lua_rawlen(L, -1);
  v = lua_newuserdatauv(L, (n + 1) * sizeof(char *), 0);
  for(size_t i = 0; i < n; i++) {
    if(lua_rawgeti(L, -2, (lua_Integer)i + 1) != LUA_TSTRING)
      luaL_error(L, "%s: ethtool[%d] must be an interface name", fn,
                 (int)i + 1);
    v[i] = (char *)lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  v[n] = NULL;
  lua_remove(L, -2);
  *src |= CTR_SRC_ETHTOOL;
  return v;
}

/* --- Sample tables --------------------------------------------------- */

static void push_samples(lua_State *L, const struct prom_doc *d)
{
  lua_createtable(L, (int)d->n, 0);
  for(size_t i = 0; i < d->n; i++) {
    const struct prom_sample *s = &d->s[i];
    const struct prom_family *f = s->family >= 0 ? &d->fams[s->family]
                                                 : NULL;
    lua_createtable(L, 0, 6);
    strata_set_str(L, "name", s->name);
    lua_createtable(L, 0, (int)s->nlabels);
    for(size_t k = 0; k < s->nlabels; k++)
      strata_set_str(L, s->labels[k].name, s->labels[k].value);
    lua_setfield(L, -2, "labels");
    strata_set_num(L, "value", s->value);
    if(s->has_ts)
      strata_set_int(L, "timestamp", s->ts_ms);
    if(f && f->type)
      strata_set_str(L, "type", f->type);
    if(f && f->help)
      strata_set_str(L, "help", f->help);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static int l_prometheus_parse(lua_State *L)
{
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  struct prom_doc d;
  char err[300];
  if(prom_parse(text, len, &d, err, sizeof(err))) {
    prom_doc_free(&d);
    return luaL_error(L, "counters.prometheus_parse: %s", err);
  }
  push_samples(L, &d);
  prom_doc_free(&d);
  return 1;
}

/* The bearer token from the environment variable the caller names. */
static const char *opt_bearer(lua_State *L, int idx, const char *fn,
                              const char *what)
{
  const char *var = strata_opt_str(L, idx, fn, "bearer_env", NULL);
  const char *tok;
  if(!var)
    return NULL;
  tok = getenv(var);
  if(!tok || !*tok)
    luaL_error(L, "%s: %s: bearer_env names '%s', which is not set", fn,
               what, var);
  return tok;
}

static void http_opts(lua_State *L, int idx, const char *fn,
                      struct http_req *r, const char *url)
{
  r->url = url;
  r->timeout_s = strata_opt_num(L, idx, fn, "timeout", 10);
  if(!(r->timeout_s > 0))
    luaL_error(L, "%s: option 'timeout' must be > 0", fn);
  r->ca_bundle = strata_opt_str(L, idx, fn, "ca_bundle", NULL);
  r->max_bytes = (size_t)strata_opt_int(L, idx, fn, "max_bytes", 0);
}

static int fetch(lua_State *L, const char *fn, struct http_req *r,
                 char **body, size_t *len)
{
  char err[1024], safe[512];
  long status;
  if(http_get(r, body, len, &status, err, sizeof(err))) {
    http_safe_url(r->url, safe, sizeof(safe));
    return luaL_error(L, "%s: %s: %s", fn, safe, err);
  }
  return 0;
}

static int l_prometheus_scrape(lua_State *L)
{
  static const char *const keys[] = {
    "url", "timeout", "bearer_env", "ca_bundle", "max_bytes", NULL
  };
  const char *fn = "counters.prometheus_scrape";
  struct http_req r = { 0 };
  struct prom_doc d;
  char *body, err[300], safe[512];
  size_t len;
  const char *url;

  strata_check_keys(L, 1, fn, keys);
  url = strata_opt_str(L, 1, fn, "url", NULL);
  if(!url)
    return luaL_error(L, "%s: option 'url' is required", fn);
  http_opts(L, 1, fn, &r, url);
  r.bearer = opt_bearer(L, 1, fn, url);
  fetch(L, fn, &r, &body, &len);
  if(prom_parse(body, len, &d, err, sizeof(err))) {
    free(body);
    prom_doc_free(&d);
    http_safe_url(url, safe, sizeof(safe));
    return luaL_error(L, "%s: %s: parse: %s", fn, safe, err);
  }
  free(body);
  push_samples(L, &d);
  prom_doc_free(&d);
  return 1;
}

/* decode(body) with the built-in cjson; raises naming the URL. */
static void json_decode(lua_State *L, const char *fn, const char *safe,
                        const char *body, size_t len)
{
  lua_getglobal(L, "require");
  lua_pushliteral(L, "cjson");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "decode");
  lua_remove(L, -2);
  lua_pushlstring(L, body, len);
  if(lua_pcall(L, 1, 1, 0) != LUA_OK)
    luaL_error(L, "%s: %s: parse: not JSON (%s)", fn, safe,
               lua_tostring(L, -1));
  if(!lua_istable(L, -1))
    luaL_error(L, "%s: %s: parse: the answer is not a JSON object", fn,
               safe);
}

/* Push one {name=, labels=, value=, timestamp=} from a vector entry or
 * a scalar [ts, "v"] pair (at the top); pops it. */
static void push_query_sample(lua_State *L, const char *fn, const char *safe,
                              int metric)
{
  int pair = lua_gettop(L);
  lua_createtable(L, 0, 4);
  lua_createtable(L, 0, 4);
  if(metric) {
    lua_pushnil(L);
    while(lua_next(L, metric)) {
      if(lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
        if(!strcmp(lua_tostring(L, -2), "__name__"))
          lua_setfield(L, -4, "name");
        else {
          lua_pushvalue(L, -2);
          lua_insert(L, -2);
          lua_settable(L, -4);
        }
      }
      else
        lua_pop(L, 1);
    }
  }
  lua_setfield(L, -2, "labels");
  if(!lua_istable(L, pair) || lua_rawgeti(L, pair, 1) != LUA_TNUMBER)
    luaL_error(L, "%s: %s: parse: a sample value is not [time, \"value\"]",
               fn, safe);
  {
    lua_Number ts = lua_tonumber(L, -1) * 1000.0;
    lua_pop(L, 1);
    strata_set_num(L, "timestamp", ts);
  }
  lua_rawgeti(L, pair, 2);
  {
    const char *v = lua_tostring(L, -1);
    double x;
    if(!v)
      luaL_error(L, "%s: %s: parse: a sample value is not a string", fn,
                 safe);
    if(!strcmp(v, "NaN"))
      x = NAN;
    else if(!strcmp(v, "+Inf"))
      x = INFINITY;
    else if(!strcmp(v, "-Inf"))
      x = -INFINITY;
    else {
      char *e;
      x = strtod(v, &e);
      if(*e || e == v)
        luaL_error(L, "%s: %s: parse: bad sample value '%s'", fn, safe, v);
    }
    lua_pop(L, 1);
    strata_set_num(L, "value", x);
  }
}

static int l_prometheus_query(lua_State *L)
{
  static const char *const keys[] = {
    "url", "query", "time", "timeout", "bearer_env", "ca_bundle",
    "max_bytes", NULL
  };
  const char *fn = "counters.prometheus_query";
  struct http_req r = { 0 };
  const char *base, *query, *type;
  char *esc, *body, safe[512];
  double tm;
  size_t len;
  luaL_Buffer b;
  int res, out;

  strata_check_keys(L, 1, fn, keys);
  base = strata_opt_str(L, 1, fn, "url", NULL);
  query = strata_opt_str(L, 1, fn, "query", NULL);
  if(!base || !query)
    return luaL_error(L, "%s: options 'url' and 'query' are required", fn);
  tm = strata_opt_num(L, 1, fn, "time", -1);
  esc = curl_easy_escape(NULL, query, 0);
  if(!esc)
    return luaL_error(L, "%s: out of memory", fn);
  luaL_buffinit(L, &b);
  luaL_addstring(&b, base);
  while(luaL_bufflen(&b) && luaL_buffaddr(&b)[luaL_bufflen(&b) - 1] == '/')
    luaL_buffsub(&b, 1);
  luaL_addstring(&b, "/api/v1/query?query=");
  luaL_addstring(&b, esc);
  curl_free(esc);
  if(tm >= 0) {
    char t[48];
    snprintf(t, sizeof(t), "&time=%.3f", tm);
    luaL_addstring(&b, t);
  }
  luaL_pushresult(&b);
  http_opts(L, 1, fn, &r, lua_tostring(L, -1));
  r.bearer = opt_bearer(L, 1, fn, base);
  r.any_status = 1;  /* Prometheus explains a bad query in a JSON 400 */
  http_safe_url(base, safe, sizeof(safe));
  {
    char err[1024];
    long status;
    if(http_get(&r, &body, &len, &status, err, sizeof(err)))
      return luaL_error(L, "%s: %s: %s", fn, safe, err);
    lua_pushlstring(L, body, len);  /* so a raise cannot leak the body */
    free(body);
    if(status >= 400 && (len == 0 || lua_tostring(L, -1)[0] != '{'))
      return luaL_error(L, "%s: %s: status: HTTP %d", fn, safe, (int)status);
    json_decode(L, fn, safe, lua_tostring(L, -1), luaL_len(L, -1));
    res = lua_gettop(L);
    lua_getfield(L, res, "status");
    if(!lua_isstring(L, -1) || strcmp(lua_tostring(L, -1), "success")) {
      lua_getfield(L, res, "errorType");
      lua_getfield(L, res, "error");
      return luaL_error(L, "%s: %s: query '%s' failed: %s: %s (HTTP %d)", fn,
                        safe, query, luaL_optstring(L, -2, "?"),
                        luaL_optstring(L, -1, "no error text"), (int)status);
    }
  }
  lua_pop(L, 1);
  if(lua_getfield(L, res, "data") != LUA_TTABLE ||
     lua_getfield(L, -1, "resultType") != LUA_TSTRING)
    return luaL_error(L, "%s: %s: parse: no data.resultType", fn, safe);
  type = lua_tostring(L, -1);
  lua_getfield(L, -2, "result");
  lua_newtable(L);
  out = lua_gettop(L);
  if(!strcmp(type, "vector")) {
    for(lua_Integer i = 1; lua_rawgeti(L, out - 1, i) == LUA_TTABLE; i++) {
      int e = lua_gettop(L);
      lua_getfield(L, e, "metric");
      lua_getfield(L, e, "value");
      push_query_sample(L, fn, safe, lua_istable(L, e + 1) ? e + 1 : 0);
      lua_rawseti(L, out, i);
      lua_settop(L, e - 1);
    }
    lua_pop(L, 1);
  }
  else if(!strcmp(type, "scalar")) {
    lua_pushvalue(L, out - 1);
    push_query_sample(L, fn, safe, 0);
    lua_rawseti(L, out, 1);
    lua_pop(L, 1);
  }
  else
    return luaL_error(L, "%s: %s: query '%s' gave a %s; use an instant "
                      "vector or scalar expression", fn, safe, query, type);
  return 1;
}

/* --- Snapshots ------------------------------------------------------- */

static int l_snapshot(lua_State *L)
{
  static const char *const keys[] = {
    "sources", "per_cpu", "root", "ethtool", NULL
  };
  const char *fn = "counters.snapshot";
  struct ctr_set s;
  unsigned src = SRC_DEFAULT;
  int per_cpu = 0;
  const char *root = "";
  char err[600];
  char **ifaces = NULL;

  if(!lua_isnoneornil(L, 1)) {
    strata_check_keys(L, 1, fn, keys);
    src = opt_sources(L, 1, fn);
    per_cpu = strata_opt_bool(L, 1, fn, "per_cpu", 0);
    root = strata_opt_str(L, 1, fn, "root", "");
    ifaces = opt_ifaces(L, 1, fn, &src);
  }
  ctr_set_init(&s);
  if(ctr_snapshot(root, src, per_cpu, ifaces, &s, err, sizeof(err))) {
    ctr_set_free(&s);
    return luaL_error(L, "%s: %s", fn, err);
  }
  lua_createtable(L, 0, (int)s.n);
  for(size_t i = 0; i < s.n; i++)
    strata_set_num(L, s.names[i], s.vals[i]);
  ctr_set_free(&s);
  return 1;
}

static int l_delta(lua_State *L)
{
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_newtable(L);
  lua_pushnil(L);
  while(lua_next(L, 2)) {
    if(lua_type(L, -2) == LUA_TSTRING && lua_isnumber(L, -1)) {
      lua_pushvalue(L, -2);
      if(lua_gettable(L, 1) == LUA_TNUMBER) {
        double d = lua_tonumber(L, -2) - lua_tonumber(L, -1);
        lua_pop(L, 1);
        lua_pushvalue(L, -2);
        lua_pushnumber(L, d);
        lua_settable(L, -5);
      }
      else
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return 1;
}

/* --- The sampler ------------------------------------------------------ */

struct sampler_ud {
  struct ctr_sampler *s;
  int stopped;
};

/* Prometheus sources; their strings stay owned by the option table and
 * the pointer arrays by an anchor table left on the stack, both alive
 * until ctr_sampler_start has copied them. */
static void read_prom(lua_State *L, int idx, struct ctr_opts *o)
{
  static const char *const keys[] = {
    "name", "url", "match", "timeout", "bearer_env", "ca_bundle", NULL
  };
  const char *fn = "counters.start: prometheus";
  int anchor, list, na = 0;
  size_t n;
  lua_newtable(L);
  anchor = lua_gettop(L);
  if(lua_getfield(L, idx, "prometheus") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  luaL_checktype(L, -1, LUA_TTABLE);
  list = lua_gettop(L);
  n = lua_rawlen(L, list);
  o->prom = lua_newuserdatauv(L, (n ? n : 1) * sizeof(*o->prom), 0);
  memset(o->prom, 0, (n ? n : 1) * sizeof(*o->prom));
  lua_rawseti(L, anchor, ++na);
  o->nprom = n;
  for(size_t i = 0; i < n; i++) {
    struct ctr_prom_src *p = &o->prom[i];
    int e;
    if(lua_rawgeti(L, list, (lua_Integer)i + 1) != LUA_TTABLE)
      luaL_error(L, "%s[%d]: must be a table", fn, (int)i + 1);
    e = lua_gettop(L);
    strata_check_keys(L, e, fn, keys);
    p->name = (char *)strata_opt_str(L, e, fn, "name", NULL);
    p->url = (char *)strata_opt_str(L, e, fn, "url", NULL);
    if(!p->name || !p->url)
      luaL_error(L, "%s[%d]: 'name' and 'url' are required", fn, (int)i + 1);
    p->timeout_s = strata_opt_num(L, e, fn, "timeout", 2);
    if(!(p->timeout_s > 0))
      luaL_error(L, "%s[%d]: 'timeout' must be > 0", fn, (int)i + 1);
    p->ca_bundle = (char *)strata_opt_str(L, e, fn, "ca_bundle", NULL);
    p->bearer = (char *)opt_bearer(L, e, fn, p->name);
    lua_getfield(L, e, "match");
    if(lua_type(L, -1) == LUA_TSTRING) {
      p->match = lua_newuserdatauv(L, sizeof(char *), 0);
      p->match[0] = (char *)lua_tostring(L, -2);
      p->nmatch = 1;
      lua_rawseti(L, anchor, ++na);
    }
    else if(lua_istable(L, -1)) {
      size_t m = lua_rawlen(L, -1);
      p->match = lua_newuserdatauv(L, (m ? m : 1) * sizeof(char *), 0);
      for(size_t k = 0; k < m; k++) {
        if(lua_rawgeti(L, -2, (lua_Integer)k + 1) != LUA_TSTRING)
          luaL_error(L, "%s[%d]: match[%d] must be a string", fn,
                     (int)i + 1, (int)k + 1);
        p->match[k] = (char *)lua_tostring(L, -1);
        lua_pop(L, 1);
      }
      p->nmatch = m;
      lua_rawseti(L, anchor, ++na);
    }
    else if(!lua_isnil(L, -1))
      luaL_error(L, "%s[%d]: 'match' must be a pattern or a list", fn,
                 (int)i + 1);
    lua_settop(L, e - 1);
  }
  lua_settop(L, anchor);
}

static int l_start(lua_State *L)
{
  static const char *const keys[] = {
    "interval", "sources", "per_cpu", "root", "max_samples", "prometheus",
    "prom_interval", "intr_top", "intr_match", "ethtool", NULL
  };
  const char *fn = "counters.start";
  struct ctr_opts o;
  struct sampler_ud *u;
  char err[1200];
  memset(&o, 0, sizeof(o));
  if(lua_isnoneornil(L, 1)) {
    lua_settop(L, 0);
    lua_newtable(L);
  }
  strata_check_keys(L, 1, fn, keys);
  o.interval_s = strata_opt_num(L, 1, fn, "interval", 1.0);
  if(!(o.interval_s >= 0.01))
    return luaL_error(L, "%s: option 'interval' must be >= 0.01 s", fn);
  o.sources = opt_sources(L, 1, fn);
  o.per_cpu = strata_opt_bool(L, 1, fn, "per_cpu", 0);
  o.root = strata_opt_str(L, 1, fn, "root", "");
  o.max_samples = (size_t)strata_opt_int(L, 1, fn, "max_samples", 4096);
  o.prom_interval_s = strata_opt_num(L, 1, fn, "prom_interval", 0);
  o.intr_top = (int)strata_opt_int(L, 1, fn, "intr_top", 10);
  o.intr_match = strata_opt_str(L, 1, fn, "intr_match", NULL);
  o.ethtool = opt_ifaces(L, 1, fn, &o.sources);
  read_prom(L, 1, &o);
  u = lua_newuserdatauv(L, sizeof(*u), 0);
  memset(u, 0, sizeof(*u));
  u->stopped = 1;  /* created closed */
  luaL_setmetatable(L, SAMPLER_MT);
  if(ctr_sampler_start(&o, &u->s, err, sizeof(err)))
    return luaL_error(L, "%s: %s", fn, err);
  u->stopped = 0;
  return 1;
}

static struct sampler_ud *check_sampler(lua_State *L)
{
  return luaL_checkudata(L, 1, SAMPLER_MT);
}

static void push_result(lua_State *L, const struct ctr_result *r)
{
  lua_createtable(L, 0, 8);
  strata_set_num(L, "duration_s", r->duration_s);
  strata_set_int(L, "samples", (lua_Integer)r->ticks + 1);
  lua_newtable(L);
  for(size_t i = 0; i < r->n; i++)
    if(r->keep[i] && isfinite(r->delta[i]))
      strata_set_num(L, r->names[i], r->delta[i]);
  lua_setfield(L, -2, "deltas");
  lua_newtable(L);
  for(size_t i = 0; i < r->n; i++)
    if(r->keep[i] && r->kinds[i] == CTR_COUNTER && isfinite(r->rate[i]))
      strata_set_num(L, r->names[i], r->rate[i]);
  lua_setfield(L, -2, "rates");
  lua_newtable(L);
  for(size_t i = 0; i < r->n; i++) {
    if(!r->keep[i] || !isfinite(r->min[i]) || !isfinite(r->max[i]) ||
       !isfinite(r->mean[i]))
      continue;
    lua_createtable(L, 0, 3);
    strata_set_num(L, "min", r->min[i]);
    strata_set_num(L, "mean", r->mean[i]);
    strata_set_num(L, "max", r->max[i]);
    lua_setfield(L, -2, r->names[i]);
  }
  lua_setfield(L, -2, "stats");
  lua_createtable(L, 0, 2);
  lua_createtable(L, (int)r->nt, 0);
  for(size_t j = 0; j < r->nt; j++) {
    lua_pushnumber(L, r->t[j]);
    lua_rawseti(L, -2, (lua_Integer)j + 1);
  }
  lua_setfield(L, -2, "t");
  lua_newtable(L);
  for(size_t i = 0; i < r->n; i++) {
    if(!r->keep[i])
      continue;
    lua_createtable(L, (int)r->nt, 0);
    for(size_t j = 0; j < r->nt; j++) {
      double v = r->series[j * r->n + i];
      lua_pushnumber(L, isfinite(v) ? v : 0);
      lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_setfield(L, -2, r->names[i]);
  }
  lua_setfield(L, -2, "values");
  lua_setfield(L, -2, "series");
  lua_createtable(L, (int)r->nerrors, 0);
  for(size_t i = 0; i < r->nerrors; i++) {
    lua_pushstring(L, r->errors[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "errors");
}

static int l_stop(lua_State *L)
{
  struct sampler_ud *u = check_sampler(L);
  struct ctr_result r;
  if(u->stopped)
    return luaL_error(L, "counters.stop: the sampler is already stopped");
  u->stopped = 1;
  ctr_sampler_stop(u->s);
  ctr_sampler_result(u->s, &r);
  push_result(L, &r);
  ctr_sampler_free(&u->s);
  return 1;
}

static int l_close(lua_State *L)
{
  struct sampler_ud *u = check_sampler(L);
  u->stopped = 1;
  ctr_sampler_free(&u->s);
  return 0;
}

static int l_tostring(lua_State *L)
{
  struct sampler_ud *u = check_sampler(L);
  lua_pushfstring(L, "counters.sampler (%s)", u->stopped ? "stopped"
                                                          : "running");
  return 1;
}

static const luaL_Reg sampler_methods[] = {
  { "stop", l_stop },
  { NULL, NULL }
};

static const luaL_Reg sampler_meta[] = {
  { "__gc", l_close },
  { "__close", l_close },
  { "__tostring", l_tostring },
  { NULL, NULL }
};

static const luaL_Reg funcs[] = {
  { "start", l_start },
  { "snapshot", l_snapshot },
  { "delta", l_delta },
  { "prometheus_parse", l_prometheus_parse },
  { "prometheus_scrape", l_prometheus_scrape },
  { "prometheus_query", l_prometheus_query },
  { NULL, NULL }
};

int luaopen_strata_counters(lua_State *L)
{
  (void)curl_global_init(CURL_GLOBAL_DEFAULT);
  if(luaL_newmetatable(L, SAMPLER_MT)) {
    luaL_setfuncs(L, sampler_meta, 0);
    luaL_newlib(L, sampler_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}
