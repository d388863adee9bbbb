/*
 * counters_lua.c - require "strata.counters": the sampler handle
 * (start / stop / __close) and one-shot snapshots; the work is in
 * reader.c and sampler.c.  counters.prometheus_parse / _scrape / _query
 * are engine/prom's functions (prom_lua.h), kept under these names so
 * specs need not change.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>
#include "counters.h"
#include "prom_lua.h"
#include "strata.h"

#define SAMPLER_MT "strata.counters.sampler"

static unsigned opt_sources(lua_State *L, int idx, const char *fn)
{
  unsigned bits = 0;
  int t = lua_getfield(L, idx, "sources");
  if(t == LUA_TNIL) {
    lua_pop(L, 1);
    return ctr_source_default();
  }
  if(t != LUA_TTABLE)
    luaL_error(L, "%s: option 'sources' must be a list of names", fn);
  for(lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
    const char *nm = lua_tostring(L, -1);
    unsigned bit = ctr_source_bit(nm);
    if(!bit) {
      char names[256];
      ctr_source_names(names, sizeof(names));
      luaL_error(L, "%s: sources[%d]: unknown source '%s' (%s)", fn, (int)i,
                 nm ? nm : luaL_typename(L, -1), names);
    }
    bits |= bit;
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

/* --- Snapshots ------------------------------------------------------- */

static int l_snapshot(lua_State *L)
{
  static const char *const keys[] = {
    "sources", "per_cpu", "root", "ethtool", NULL
  };
  const char *fn = "counters.snapshot";
  struct ctr_set s;
  unsigned src = ctr_source_default();
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
    p->bearer = (char *)prom_lua_bearer(L, e, fn, p->name);
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
  strata_set_num(L, "cpu_s", r->cpu_s);
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
  { NULL, NULL }
};

int luaopen_strata_counters(lua_State *L)
{
  if(luaL_newmetatable(L, SAMPLER_MT)) {
    luaL_setfuncs(L, sampler_meta, 0);
    luaL_newlib(L, sampler_methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  prom_lua_register(L, "counters", "prometheus_");
  return 1;
}
