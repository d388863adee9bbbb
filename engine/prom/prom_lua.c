/*
 * prom_lua.c - require "strata.prom": parse(text), scrape{url=...},
 * query{url=, query=} (docs/prom.md).  The same functions are also
 * strata.counters' prometheus_parse / _scrape / _query (prom_lua.h).
 * Only checks and converts; the work is in prom.c, fetch.c and
 * engine/http.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "prom.h"
#include "prom_lua.h"
#include "strata.h"

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
    return luaL_error(L, "%s: %s", lua_tostring(L, lua_upvalueindex(1)),
                      err);
  }
  push_samples(L, &d);
  prom_doc_free(&d);
  return 1;
}

const char *prom_lua_bearer(lua_State *L, int idx, const char *fn,
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
                 char **body, size_t *len, long *status)
{
  char err[1024], safe[512];
  if(http_get(r, body, len, status, err, sizeof(err))) {
    http_safe_url(r->url, safe, sizeof(safe));
    return luaL_error(L, "%s: %s: %s", fn, safe, err);
  }
  return 0;
}

static int l_prometheus_scrape(lua_State *L)
{
  static const char *const keys[] = {
    "url", "timeout", "bearer_env", "ca_bundle", "max_bytes", "absent_ok",
    NULL
  };
  const char *fn = lua_tostring(L, lua_upvalueindex(1));
  struct http_req r = { 0 };
  struct prom_doc d;
  char *body, err[300], safe[512];
  size_t len;
  long status = 200;
  const char *url;

  strata_check_keys(L, 1, fn, keys);
  url = strata_opt_str(L, 1, fn, "url", NULL);
  if(!url)
    return luaL_error(L, "%s: option 'url' is required", fn);
  http_opts(L, 1, fn, &r, url);
  r.bearer = prom_lua_bearer(L, 1, fn, url);
  /* A page that is not there is an answer for a witness (the server has
   * no such counters), not a failure of the request. */
  r.any_status = strata_opt_bool(L, 1, fn, "absent_ok", 0);
  fetch(L, fn, &r, &body, &len, &status);
  if(status != 200 && r.any_status) {
    free(body);
    http_safe_url(url, safe, sizeof(safe));
    if(status == 404) {
      lua_pushnil(L);
      lua_pushfstring(L, "%s answers 404", safe);
      return 2;
    }
    return luaL_error(L, "%s: %s: HTTP %d", fn, safe, (int)status);
  }
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
  const char *fn = lua_tostring(L, lua_upvalueindex(1));
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
  r.bearer = prom_lua_bearer(L, 1, fn, base);
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

/* --- Registration ---------------------------------------------------- */

static const struct {
  const char *name;
  lua_CFunction fn;
} fns[] = {
  { "parse", l_prometheus_parse },
  { "scrape", l_prometheus_scrape },
  { "query", l_prometheus_query },
};

void prom_lua_register(lua_State *L, const char *module, const char *prefix)
{
  for(size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
    char key[64], full[128];
    snprintf(key, sizeof(key), "%s%s", prefix, fns[i].name);
    snprintf(full, sizeof(full), "%s.%s", module, key);
    lua_pushstring(L, full);      /* the name messages start with */
    lua_pushcclosure(L, fns[i].fn, 1);
    lua_setfield(L, -2, key);
  }
}

int luaopen_strata_prom(lua_State *L)
{
  lua_newtable(L);
  prom_lua_register(L, "prom", "");
  return 1;
}
