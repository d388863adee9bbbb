/*
 * nccl_lua.c - "strata.nccl": NCCL collectives measured as nccl-tests
 * measures them, in this process (coll.c).  Checks options, converts and
 * raises; API by example in docs/nccl.md.
 *
 * A missing NCCL, CUDA driver, GPU or build support raises SKIP with the
 * reason.  nccl.available() and nccl.version() only open the library and
 * are safe in the runner's parent; nccl.run() starts CUDA in the calling
 * process (a cell's child).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"
#include "../cuda/cuda.h"  /* not the toolkit's cuda.h */
#include "coll.h"
#include "lib.h"
#include "value.h"

#define ERRLEN 512

static void push_version(lua_State *L, const struct nccl_api *api)
{
  char v[32];
  nccl_version_text(api->version, v, sizeof(v));
  lua_createtable(L, 0, 3);
  strata_set_int(L, "code", api->version);
  strata_set_str(L, "version", v);
  strata_set_str(L, "library", api->path);
}

/* nccl.available() -> true, "2.28.3" | false, reason */
static int l_available(lua_State *L)
{
  const struct nccl_api *api;
  char err[ERRLEN], v[32];
  if(nccl_load(&api, err, sizeof(err)) != CUDA_OK) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, err);
    return 2;
  }
  nccl_version_text(api->version, v, sizeof(v));
  lua_pushboolean(L, 1);
  lua_pushstring(L, v);
  return 2;
}

/* nccl.version() -> {code=22803, version="2.28.3", library=path} */
static int l_version(lua_State *L)
{
  const struct nccl_api *api;
  char err[ERRLEN];
  int s = nccl_load(&api, err, sizeof(err));
  if(s == CUDA_ABSENT)
    return strata_skip(L, "%s", err);
  if(s != CUDA_OK)
    return luaL_error(L, "nccl.version: %s", err);
  push_version(L, api);
  return 1;
}

/* A byte count: an integer, or nccl-tests' -b/-e form "8", "64K", "8G"
 * (parsesize: K, M, G are powers of 1024). */
static size_t opt_size(lua_State *L, int idx, const char *field, size_t def)
{
  size_t v = def;
  lua_getfield(L, idx, field);
  if(lua_isinteger(L, -1)) {
    lua_Integer i = lua_tointeger(L, -1);
    if(i < 0)
      luaL_error(L, "nccl.run: %s must be >= 0", field);
    v = (size_t)i;
  }
  else if(lua_type(L, -1) == LUA_TSTRING) {
    const char *s = lua_tostring(L, -1);
    double d;
    char u[2] = { 0, 0 }, extra;
    int n = sscanf(s, "%lf%1[KkMmGg]%c", &d, u, &extra);
    double mult = 1;
    if(n == 2)
      mult = (u[0] == 'G' || u[0] == 'g') ? 1073741824.0
           : (u[0] == 'M' || u[0] == 'm') ? 1048576.0 : 1024.0;
    if(n < 1 || n > 2 || d < 0 || (n == 1 && strspn(s, "0123456789.") !=
                                   strlen(s)))
      luaL_error(L, "nccl.run: %s: not a size: '%s' (bytes, or a number "
                 "with K, M or G)", field, s);
    v = (size_t)(d * mult);
  }
  else if(!lua_isnil(L, -1))
    luaL_error(L, "nccl.run: %s must be a byte count", field);
  lua_pop(L, 1);
  return v;
}

static int opt_enum(lua_State *L, const char *field, const char *def,
                    int (*fn)(const char *), const char *const *names,
                    int n)
{
  const char *s = strata_opt_str(L, 1, "nccl.run", field, def);
  int v = fn(s);
  if(v < 0) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for(int i = 0; i < n; i++) {
      luaL_addstring(&b, i ? ", " : "");
      luaL_addstring(&b, names[i]);
    }
    luaL_pushresult(&b);
    luaL_error(L, "nccl.run: unknown %s '%s' (one of %s)", field, s,
               lua_tostring(L, -1));
  }
  return v;
}

static void push_half(lua_State *L, const struct nccl_half *h)
{
  lua_createtable(L, 0, 6);
  strata_set_num(L, "time_us", h->time_us);
  strata_set_num(L, "host_us", h->host_us);
  strata_set_num(L, "event_us", h->event_us);
  strata_set_num(L, "algbw", h->algbw);
  strata_set_num(L, "busbw", h->busbw);
  if(h->wrong >= 0)
    strata_set_int(L, "wrong", h->wrong);
}

/* devices={...} or gpus=N of nccl.run's table into o->devs. */
static void opt_devices(lua_State *L, struct nccl_opts *o)
{
  lua_getfield(L, 1, "devices");
  if(lua_istable(L, -1)) {
    o->ndev = (int)luaL_len(L, -1);
    if(o->ndev < 1 || o->ndev > NCCL_MAX_DEVS)
      luaL_error(L, "nccl.run: devices: 1 to %d GPUs", NCCL_MAX_DEVS);
    for(int i = 0; i < o->ndev; i++) {
      lua_rawgeti(L, -1, i + 1);
      if(!lua_isinteger(L, -1))
        luaL_error(L, "nccl.run: devices[%d] is not a GPU index", i + 1);
      o->devs[i] = (int)lua_tointeger(L, -1);
      for(int j = 0; j < i; j++)
        if(o->devs[j] == o->devs[i])
          luaL_error(L, "nccl.run: devices: GPU %d twice "
                     "(one communicator rank per GPU)", o->devs[i]);
      lua_pop(L, 1);
    }
  }
  else if(!lua_isnil(L, -1))
    luaL_error(L, "nccl.run: devices must be a list of GPU indexes");
  lua_pop(L, 1);
  if(!o->ndev) {
    o->ndev = (int)strata_opt_int(L, 1, "nccl.run", "gpus", 1);
    if(o->ndev < 1 || o->ndev > NCCL_MAX_DEVS)
      luaL_error(L, "nccl.run: gpus: 1 to %d", NCCL_MAX_DEVS);
    for(int i = 0; i < o->ndev; i++)
      o->devs[i] = i;
  }
}

/* nccl.run's table (at 1) into o; raises on a bad option.  Returns
 * whether the timer is CUDA events (else the host clock). */
static int opt_run(lua_State *L, struct nccl_opts *o)
{
  static const char *const keys[] = {
    "op", "gpus", "devices", "min_bytes", "max_bytes", "factor", "step",
    "dtype", "redop", "root", "warmup", "iters", "check", "timer", "nvls",
    "alltoall", NULL
  };
  const char *timer, *a;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, "nccl.run", keys);
  memset(o, 0, sizeof(*o));
  o->coll = opt_enum(L, "op", "all_reduce", nccl_coll_find, nccl_coll_names,
                     NC_COLLS);
  o->dtype = opt_enum(L, "dtype", "float", nccl_dtype_find,
                      nccl_dtype_names, NV_DTYPES);
  o->op = opt_enum(L, "redop", "sum", nccl_op_find, nccl_op_names, NV_OPS);
  o->root = (int)strata_opt_int(L, 1, "nccl.run", "root", 0);
  o->warmup = (int)strata_opt_int(L, 1, "nccl.run", "warmup", 5);
  o->iters = (int)strata_opt_int(L, 1, "nccl.run", "iters", 20);
  o->check = strata_opt_bool(L, 1, "nccl.run", "check", 1);
  o->nvls = strata_opt_bool(L, 1, "nccl.run", "nvls", 0);
  o->min_bytes = opt_size(L, 1, "min_bytes", 8);
  o->max_bytes = opt_size(L, 1, "max_bytes", 128u << 20);
  o->factor = (size_t)strata_opt_int(L, 1, "nccl.run", "factor", 2);
  o->step = opt_size(L, 1, "step", 1u << 20);
  a = strata_opt_str(L, 1, "nccl.run", "alltoall", "auto");
  if(strcmp(a, "auto") && strcmp(a, "sendrecv"))
    luaL_error(L, "nccl.run: unknown alltoall '%s' (auto: ncclAlltoAll "
               "where NCCL has it; sendrecv: grouped ncclSend/ncclRecv)", a);
  o->alltoall_grouped = !strcmp(a, "sendrecv");
  timer = strata_opt_str(L, 1, "nccl.run", "timer", "events");
  if(strcmp(timer, "events") && strcmp(timer, "host"))
    luaL_error(L, "nccl.run: unknown timer '%s' (events or host)", timer);
  if(o->iters < 1 || o->warmup < 0)
    luaL_error(L, "nccl.run: iters must be >= 1, warmup >= 0");
  if(o->min_bytes > o->max_bytes)
    luaL_error(L, "nccl.run: min_bytes %I > max_bytes %I",
               (lua_Integer)o->min_bytes, (lua_Integer)o->max_bytes);
  if(nccl_sweep_sizes(o->min_bytes, o->max_bytes, o->factor, o->step, NULL,
                      0) > NCCL_MAX_SIZES)
    luaL_error(L, "nccl.run: more than %d sizes in the sweep",
               NCCL_MAX_SIZES);
  opt_devices(L, o);
  if(nccl_coll_rooted(o->coll) && (o->root < 0 || o->root >= o->ndev))
    luaL_error(L, "nccl.run: root %d is not a rank (0..%d)", o->root,
               o->ndev - 1);
  if(!nccl_coll_rooted(o->coll))
    o->root = 0;
  return !strcmp(timer, "events");
}

/* rows={...}: one row a message size, both halves (out of place, in
 * place); *bw and *nbw sum busbw, *wrong the wrong elements. */
static void push_rows(lua_State *L, const struct nccl_opts *o,
                      const struct nccl_result *r, double *bw, int *nbw,
                      long long *wrong)
{
  lua_createtable(L, r->nrows, 0);
  for(int i = 0; i < r->nrows; i++) {
    const struct nccl_row *w = &r->rows[i];
    lua_createtable(L, 0, 7);
    strata_set_int(L, "size", (lua_Integer)w->size);
    strata_set_int(L, "count", (lua_Integer)w->count);
    strata_set_str(L, "type", nccl_dtype_names[o->dtype]);
    strata_set_str(L, "redop", nccl_coll_reduces(o->coll)
                               ? nccl_op_names[o->op] : "none");
    strata_set_int(L, "root", nccl_coll_rooted(o->coll) ? o->root : -1);
    push_half(L, &w->oop);
    lua_setfield(L, -2, "oop");
    push_half(L, &w->ip);
    lua_setfield(L, -2, "ip");
    lua_rawseti(L, -2, i + 1);
    *bw += w->oop.busbw + w->ip.busbw;
    *nbw += 2;
    *wrong += (w->oop.wrong > 0 ? w->oop.wrong : 0)
              + (w->ip.wrong > 0 ? w->ip.wrong : 0);
  }
  lua_setfield(L, -2, "rows");
}

/* nccl.run's result table from r. */
static void push_run(lua_State *L, const struct nccl_opts *o,
                     const struct nccl_result *r, int use_events)
{
  char v[32];
  double bw = 0;
  long long wrong = 0;
  int nbw = 0;
  lua_createtable(L, 0, 9);
  push_rows(L, o, r, &bw, &nbw, &wrong);
  strata_set_int(L, "nranks", r->nranks);
  nccl_version_text(r->version, v, sizeof(v));
  strata_set_str(L, "version", v);
  strata_set_int(L, "nccl_library", r->version);
  strata_set_str(L, "library", r->library);
  strata_set_num(L, "avg_busbw", nbw ? bw / nbw : 0);
  strata_set_int(L, "wrong", wrong);
  strata_set_str(L, "test", nccl_coll_names[o->coll]);
  strata_set_str(L, "timer", use_events ? "events" : "host");
  if(o->coll == NC_ALLTOALL)
    strata_set_str(L, "alltoall", r->alltoall_grouped ? "sendrecv"
                                                      : "ncclAlltoAll");
  lua_createtable(L, o->ndev, 0);
  for(int i = 0; i < o->ndev; i++) {
    lua_createtable(L, 0, 2);
    strata_set_int(L, "rank", i);
    strata_set_int(L, "device", o->devs[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "devices");
}

/* nccl.run{op=, gpus=N | devices={...}, min_bytes=, max_bytes=, factor=,
 * step=, dtype=, redop=, root=, warmup=, iters=, check=, timer=, nvls=}
 * -> {rows={ {size, count, type, redop, root, oop={...}, ip={...}} },
 *     nranks, version, library, avg_busbw, wrong, test, timer} */
static int l_run(lua_State *L)
{
  struct nccl_opts o;
  struct nccl_result *r;
  char err[ERRLEN];
  int use_events = opt_run(L, &o), s;

  r = malloc(sizeof(*r));
  if(!r)
    return luaL_error(L, "nccl.run: out of memory");
  s = nccl_run(&o, use_events, r, err, sizeof(err));
  if(s != CUDA_OK) {
    free(r);
    if(s == CUDA_ABSENT)
      return strata_skip(L, "%s", err);
    return luaL_error(L, "nccl.run %s: %s", nccl_coll_names[o.coll], err);
  }
  push_run(L, &o, r, use_events);
  free(r);
  return 1;
}

static int check_coll(lua_State *L, int idx)
{
  const char *name = luaL_checkstring(L, idx);
  int c = nccl_coll_find(name);
  if(c < 0)
    return luaL_error(L, "nccl: unknown collective '%s'", name);
  return c;
}

/* nccl.bus_factor("all_reduce", 8) -> 1.75 */
static int l_bus_factor(lua_State *L)
{
  int c = check_coll(L, 1);
  lua_pushnumber(L, nccl_bus_factor(c, (int)luaL_checkinteger(L, 2)));
  return 1;
}

/* nccl.counts("all_gather", bytes, "float", nranks) -> {send, recv,
 * param, send_inplace_off, recv_inplace_off} (elements) */
static int l_counts(lua_State *L)
{
  int c = check_coll(L, 1), d;
  lua_Integer bytes = luaL_checkinteger(L, 2);
  const char *dt = luaL_optstring(L, 3, "float");
  struct nccl_counts k;
  if((d = nccl_dtype_find(dt)) < 0)
    return luaL_error(L, "nccl.counts: unknown dtype '%s'", dt);
  nccl_coll_counts(c, (size_t)bytes / nv_size(d), nv_size(d),
                   (int)luaL_optinteger(L, 4, 1), &k);
  lua_createtable(L, 0, 5);
  strata_set_int(L, "send", (lua_Integer)k.send);
  strata_set_int(L, "recv", (lua_Integer)k.recv);
  strata_set_int(L, "param", (lua_Integer)k.param);
  strata_set_int(L, "send_inplace_off", (lua_Integer)k.send_inplace_off);
  strata_set_int(L, "recv_inplace_off", (lua_Integer)k.recv_inplace_off);
  return 1;
}

static const luaL_Reg funcs[] = {
  { "available", l_available }, { "version", l_version }, { "run", l_run },
  { "bus_factor", l_bus_factor }, { "counts", l_counts }, { NULL, NULL }
};

int luaopen_strata_nccl(lua_State *L)
{
  luaL_newlib(L, funcs);
  lua_createtable(L, NC_COLLS, 0);
  for(int i = 0; i < NC_COLLS; i++) {
    lua_pushstring(L, nccl_coll_names[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "collectives");
  return 1;
}
