/*
 * verbs_lua.c - require "strata.verbs": bw, lat, counters, serve (and the
 * inventory from inventory_lua.c).  Checks options, runs everything in C,
 * returns plain tables.  Missing prerequisites raise SKIP.
 */
#include <string.h>
#include <stdlib.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"
#include "dc.h"
#include "run.h"
#include "serve.h"

int verbs_l_devices(lua_State *L);
int verbs_l_inventory(lua_State *L);
int verbs_l_incast(lua_State *L);     /* incast_lua.c */

/* Raise for rc: SKIP for an absent prerequisite, an error otherwise. */
static int raise_code(lua_State *L, const char *fn, enum verbs_code rc)
{
  if(rc == VERBS_ENODEV || rc == VERBS_EUNSUPPORTED)
    return strata_skip(L, "%s", verbs_errmsg());
  return luaL_error(L, "%s: %s (%s)", fn, verbs_errmsg(),
                    verbs_strerror(rc));
}

static const char *const run_keys[] = {
  "op", "size", "qps", "tx_depth", "rx_depth", "cq_mod", "iters",
  "duration", "bidir", "validate", "inline", "timeout", "memory",
  "hugepages", "numa", "dmabuf", "max_buffer", "device", "port",
  "gid_index", "peer", "qp_timeout", "retry_cnt", NULL
};
static const char *const peer_keys[] = {
  "host", "port", "token", "device", "ib_port", "gid_index", "timeout",
  NULL
};

/* Option qp_timeout of the table at 1 (verbs.bw, verbs.lat, verbs.incast):
 * ibv_qp_attr.timeout, 4.096 us x 2^n before a retransmission. */
int verbs_opt_qp_timeout(lua_State *L, const char *fn)
{
  lua_Integer v = strata_opt_int(L, 1, fn, "qp_timeout", VERBS_QP_TIMEOUT);
  if(v < 1 || v > 31)
    luaL_error(L, "%s: option 'qp_timeout' must be 1 .. 31 (an ACK timeout "
               "of 4.096 us x 2^n), got %I", fn, v);
  return (int)v;
}

/* Option retry_cnt (the same three): ibv_qp_attr.retry_cnt, retransmissions
 * after ACK timeouts before IBV_WC_RETRY_EXC_ERR. */
int verbs_opt_retry_cnt(lua_State *L, const char *fn)
{
  lua_Integer v = strata_opt_int(L, 1, fn, "retry_cnt", VERBS_RETRY_CNT);
  if(v < 1 || v > 7)
    luaL_error(L, "%s: option 'retry_cnt' must be 1 .. 7 (retransmissions "
               "before a retry-exceeded error), got %I", fn, v);
  return (int)v;
}

/* Is the cuda family built with CUDA?  require("strata.cuda").built() */
static int have_cuda(lua_State *L)
{
  int ok;
  lua_getglobal(L, "require");
  lua_pushliteral(L, "strata.cuda");
  if(lua_pcall(L, 1, 1, 0) != LUA_OK) {
    lua_pop(L, 1);
    return 0;
  }
  lua_getfield(L, -1, "built");
  ok = lua_isfunction(L, -1) && lua_pcall(L, 0, 1, 0) == LUA_OK &&
       lua_toboolean(L, -1);
  lua_pop(L, 2);
  return ok;
}

static void get_memory(lua_State *L, const char *fn, struct verbs_test *t)
{
  const char *mem = strata_opt_str(L, 1, fn, "memory", "host");
  t->dmabuf_fd = -1;
  if(!strcmp(mem, "host")) {
    t->mem = VERBS_MEM_HOST;
    return;
  }
  if(strcmp(mem, "cuda"))
    luaL_error(L, "%s: option 'memory' must be \"host\" or \"cuda\", got "
               "\"%s\"", fn, mem);
  t->mem = VERBS_MEM_CUDA;
  if(!have_cuda(L))
    strata_skip(L, "GPU memory: built without CUDA (no strata.cuda "
                "family), so no dma-buf export to register");
  if(lua_getfield(L, 1, "dmabuf") != LUA_TTABLE)
    strata_skip(L, "GPU memory: no dma-buf export: pass dmabuf = {fd=, "
                "offset=} from the cuda family's export");
  t->dmabuf_fd = (int)strata_opt_int(L, lua_gettop(L), fn, "fd", -1);
  t->dmabuf_off = (uint64_t)strata_opt_int(L, lua_gettop(L), fn, "offset",
                                           0);
  lua_pop(L, 1);
  if(t->dmabuf_fd < 0)
    luaL_error(L, "%s: dmabuf.fd must be an open file descriptor", fn);
}

static void get_peer(lua_State *L, const char *fn, struct verbs_run_opts *o)
{
  int t = lua_getfield(L, 1, "peer");
  if(t == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if(t != LUA_TTABLE)
    luaL_error(L, "%s: option 'peer' must be a table {host=, port=, "
               "token=}", fn);
  /* absolute index: the strata_opt_* helpers leave a nil on the stack
   * for an absent field when given a relative one */
  t = lua_gettop(L);
  strata_check_keys(L, t, fn, peer_keys);
  o->peer_host = strata_opt_str(L, t, fn, "host", NULL);
  o->peer_port = (int)strata_opt_int(L, t, fn, "port", 18515);
  o->peer_token = strata_opt_str(L, t, fn, "token", NULL);
  o->peer_device = strata_opt_str(L, t, fn, "device", NULL);
  o->peer_port_num = (int)strata_opt_int(L, t, fn, "ib_port", 1);
  o->peer_gid_index = (int)strata_opt_int(L, t, fn, "gid_index", -1);
  o->ctl_timeout_s = strata_opt_num(L, t, fn, "timeout", 10);
  if(!o->peer_host)
    luaL_error(L, "%s: peer.host is required", fn);
  if(!o->peer_token || !*o->peer_token)
    luaL_error(L, "%s: peer.token is required (the agent refuses "
               "connections without it)", fn);
  /* the strings stay referenced by the options table (argument 1) */
  lua_pop(L, 1);
}

static void get_opts(lua_State *L, const char *fn, enum verbs_kind kind,
                     struct verbs_run_opts *o)
{
  struct verbs_test *t = &o->t;
  const char *op;
  lua_Integer v;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, run_keys);
  memset(o, 0, sizeof(*o));
  t->kind = kind;
  op = strata_opt_str(L, 1, fn, "op", "write");
  if(ctl_op_parse(op, &t->op))
    luaL_error(L, "%s: option 'op' must be write, read or send, got \"%s\"",
               fn, op);
  v = strata_opt_int(L, 1, fn, "size", kind == VERBS_KIND_LAT ? 2 : 65536);
  if(v < 1 || v > (1ll << 31))
    luaL_error(L, "%s: option 'size' must be 1 .. 2^31, got %I", fn, v);
  t->size = (uint64_t)v;
  v = strata_opt_int(L, 1, fn, "qps", 1);
  if(v < 1 || v > VERBS_MAX_QPS || (kind == VERBS_KIND_LAT && v != 1))
    luaL_error(L, "%s: option 'qps' must be 1 .. %d (1 for latency), got "
               "%I", fn, VERBS_MAX_QPS, v);
  t->qps = (int)v;
  t->tx_depth = (int)strata_opt_int(L, 1, fn, "tx_depth",
                                    kind == VERBS_KIND_LAT ? 2 : 128);
  t->rx_depth = (int)strata_opt_int(L, 1, fn, "rx_depth",
                                    t->op == VERBS_OP_SEND ? 512 : 0);
  t->cq_mod = (int)strata_opt_int(L, 1, fn, "cq_mod",
                                  verbs_default_cq_mod(t->size, t->qps));
  if(t->tx_depth < 1 || t->tx_depth > 16384 || t->rx_depth < 0 ||
     t->rx_depth > 16384 || t->cq_mod < 1)
    luaL_error(L, "%s: tx_depth 1..16384, rx_depth 0..16384, cq_mod >= 1",
               fn);
  if(t->op == VERBS_OP_SEND && t->rx_depth < 1)
    luaL_error(L, "%s: op send needs rx_depth >= 1", fn);
  v = strata_opt_int(L, 1, fn, "iters", 0);
  t->duration_s = strata_opt_num(L, 1, fn, "duration", 0);
  if(v < 0 || t->duration_s < 0 || (v == 0 && t->duration_s == 0))
    v = kind == VERBS_KIND_LAT ? 1000 : 5000;
  if(kind == VERBS_KIND_LAT && v == 0)
    luaL_error(L, "%s: latency needs iters", fn);
  t->iters = (uint64_t)v;
  t->bidir = strata_opt_bool(L, 1, fn, "bidir", 0);
  t->validate = strata_opt_bool(L, 1, fn, "validate", 0);
  t->inline_size = (int)strata_opt_int(L, 1, fn, "inline",
                                       kind == VERBS_KIND_LAT ? 220 : 0);
  t->timeout_s = strata_opt_num(L, 1, fn, "timeout", 10);
  t->qp_timeout = verbs_opt_qp_timeout(L, fn);
  t->retry_cnt = verbs_opt_retry_cnt(L, fn);
  t->hugepages = strata_opt_bool(L, 1, fn, "hugepages", 0);
  t->numa = (int)strata_opt_int(L, 1, fn, "numa", -1);
  if(t->timeout_s <= 0 || t->inline_size < 0)
    luaL_error(L, "%s: timeout must be > 0 and inline >= 0", fn);
  v = strata_opt_int(L, 1, fn, "max_buffer", 0);
  if(v < 0)
    luaL_error(L, "%s: max_buffer must be >= 0", fn);
  t->max_buffer = (uint64_t)v;
  get_memory(L, fn, t);
  if(t->mem == VERBS_MEM_CUDA && t->validate)
    luaL_error(L, "%s: validate needs host memory (GPU memory is not "
               "readable by the CPU here)", fn);
  o->device = strata_opt_str(L, 1, fn, "device", NULL);
  o->port = (int)strata_opt_int(L, 1, fn, "port", 1);
  o->gid_index = (int)strata_opt_int(L, 1, fn, "gid_index", -1);
  o->ctl_timeout_s = 10;
  get_peer(L, fn, o);
}

/* t.counters = { name = after - before } for names present in both. */
static void push_deltas(lua_State *L, const struct verbs_run_result *r)
{
  lua_createtable(L, 0, (int)r->c1.n);
  for(size_t i = 0; i < r->c1.n; i++)
    for(size_t j = 0; j < r->c0.n; j++)
      if(!strcmp(r->c1.name[i], r->c0.name[j])) {
        lua_pushinteger(L, (lua_Integer)(r->c1.value[i] - r->c0.value[j]));
        lua_setfield(L, -2, r->c1.name[i]);
        break;
      }
}

static void push_common(lua_State *L, const struct verbs_run_opts *o,
                        const struct verbs_run_result *r)
{
  const struct verbs_test *t = &o->t;
  lua_newtable(L);
  strata_set_str(L, "op", ctl_op_name(t->op));
  strata_set_int(L, "size", (lua_Integer)t->size);
  strata_set_int(L, "qps", t->qps);
  strata_set_str(L, "memory", t->mem == VERBS_MEM_CUDA ? "cuda" : "host");
  strata_set_str(L, "device", r->device);
  strata_set_int(L, "port", r->port);
  strata_set_int(L, "gid_index", r->gid_index);
  strata_set_int(L, "mtu", r->mtu_bytes);
  strata_set_str(L, "peer", r->peer[0] ? r->peer : "loopback");
  if(r->peer_device[0])
    strata_set_str(L, "peer_device", r->peer_device);
  strata_set_num(L, "duration_s", r->duration_s);
  if(r->qp_timeout >= 0)
    strata_set_int(L, "qp_timeout", r->qp_timeout);
  strata_set_num(L, "cpu_pct", r->cpu_pct);
  strata_set_num(L, "peer_cpu_pct", r->peer_cpu_pct);
  push_deltas(L, r);
  lua_setfield(L, -2, "counters");
}

static int l_bw(lua_State *L)
{
  struct verbs_run_opts o;
  struct verbs_run_result r;
  enum verbs_code rc;

  get_opts(L, "verbs.bw", VERBS_KIND_BW, &o);
  rc = verbs_run(&o, &r);
  if(rc) {
    verbs_run_free(&r);
    return raise_code(L, "verbs.bw", rc);
  }
  push_common(L, &o, &r);
  strata_set_int(L, "tx_depth", o.t.tx_depth);
  strata_set_int(L, "cq_mod", o.t.cq_mod);
  strata_set_bool(L, "bidir", o.t.bidir);
  strata_set_int(L, "iters", (lua_Integer)(r.a.msgs / (uint64_t)o.t.qps));
  strata_set_int(L, "msgs", (lua_Integer)r.a.msgs);
  strata_set_int(L, "bytes", (lua_Integer)r.a.bytes);
  strata_set_num(L, "bw_gbps", r.gbps);
  strata_set_num(L, "peak_gbps", r.peak_gbps);
  strata_set_num(L, "msg_rate_mpps", r.mpps);
  if(o.t.bidir)
    strata_set_num(L, "bw_gbps_peer", r.gbps_peer);
  if(o.t.op == VERBS_OP_SEND)
    strata_set_int(L, "recvs", (lua_Integer)r.b.recvs);
  if(o.t.validate) {
    strata_set_bool(L, "validated", r.validated);
    if(r.mismatch_at >= 0) {
      strata_set_int(L, "mismatch_at", r.mismatch_at);
      strata_set_str(L, "mismatch_where", r.mismatch_where);
    }
  }
  verbs_run_free(&r);
  return 1;
}

static int l_lat(lua_State *L)
{
  struct verbs_run_opts o;
  struct verbs_run_result r;
  struct stats_summary s;
  enum verbs_code rc;

  get_opts(L, "verbs.lat", VERBS_KIND_LAT, &o);
  if(o.t.bidir)
    luaL_error(L, "verbs.lat: option 'bidir' is for verbs.bw");
  rc = verbs_run(&o, &r);
  if(rc) {
    verbs_run_free(&r);
    return raise_code(L, "verbs.lat", rc);
  }
  stats_summarize(&r.a.lat_us, &s);
  push_common(L, &o, &r);
  strata_set_int(L, "iters", (lua_Integer)s.n);
  strata_set_bool(L, "inline", o.t.size <= r.max_inline &&
                  o.t.op != VERBS_OP_READ);
  strata_set_num(L, "min_us", s.min);
  strata_set_num(L, "median_us", s.p50);
  strata_set_num(L, "mean_us", s.mean);
  strata_set_num(L, "stdev_us", s.stdev);
  strata_set_num(L, "p90_us", s.p90);
  strata_set_num(L, "p99_us", s.p99);
  strata_set_num(L, "p999_us", s.p999);
  strata_set_num(L, "max_us", s.max);
  verbs_run_free(&r);
  return 1;
}

/* verbs.counters{device=, port=} -> { name = value } (sysfs). */
static int l_counters(lua_State *L)
{
  static const char *const keys[] = {"device", "port", NULL};
  struct verbs_counters c;
  const char *dev;
  int port;
  enum verbs_code rc;

  if(lua_isnoneornil(L, 1))
    lua_newtable(L);
  strata_check_keys(L, 1, "verbs.counters", keys);
  dev = strata_opt_str(L, 1, "verbs.counters", "device", NULL);
  port = (int)strata_opt_int(L, 1, "verbs.counters", "port", 1);
  if(!dev)
    luaL_error(L, "verbs.counters: option 'device' is required");
  rc = verbs_counters_read(dev, port, &c);
  if(rc)
    return raise_code(L, "verbs.counters", rc);
  lua_createtable(L, 0, (int)c.n);
  for(size_t i = 0; i < c.n; i++) {
    lua_pushinteger(L, (lua_Integer)c.value[i]);
    lua_setfield(L, -2, c.name[i]);
  }
  verbs_counters_free(&c);
  return 1;
}

/* verbs.serve{listen=, port=, token=, device=, ...}: blocks until
 * SIGINT/SIGTERM (or max_sessions). */
static int l_serve(lua_State *L)
{
  static const char *const keys[] = {
    "listen", "port", "token", "device", "ib_port", "gid_index",
    "idle_timeout", "session_timeout", "max_sessions", "ready_fd", "quiet",
    NULL
  };
  struct verbs_serve_opts o;
  enum verbs_code rc;
  const char *fn = "verbs.serve";

  strata_check_keys(L, 1, fn, keys);
  memset(&o, 0, sizeof(o));
  o.listen = strata_opt_str(L, 1, fn, "listen", NULL);
  o.listen_port = (int)strata_opt_int(L, 1, fn, "port", 18515);
  o.token = strata_opt_str(L, 1, fn, "token", NULL);
  o.device = strata_opt_str(L, 1, fn, "device", NULL);
  o.port_num = (int)strata_opt_int(L, 1, fn, "ib_port", 1);
  o.gid_index = (int)strata_opt_int(L, 1, fn, "gid_index", -1);
  o.idle_timeout_s = strata_opt_num(L, 1, fn, "idle_timeout", 60);
  o.session_timeout_s = strata_opt_num(L, 1, fn, "session_timeout", 3600);
  o.max_sessions = (int)strata_opt_int(L, 1, fn, "max_sessions", 0);
  o.ready_fd = (int)strata_opt_int(L, 1, fn, "ready_fd", -1);
  o.quiet = strata_opt_bool(L, 1, fn, "quiet", 0);
  if(o.listen_port < 1 || o.listen_port > 65535)
    luaL_error(L, "%s: port must be 1..65535", fn);
  if(o.idle_timeout_s <= 0 || o.session_timeout_s < 1)
    luaL_error(L, "%s: timeouts must be positive", fn);
  rc = verbs_serve(&o);
  if(rc)
    return luaL_error(L, "%s: %s (%s)", fn, verbs_errmsg(),
                      verbs_strerror(rc));
  return 0;
}

/* verbs.buffer_bytes{size=, qps=, max_buffer=} -> bytes one side
 * registers (what a GPU buffer for memory = "cuda" must hold). */
static int l_buffer_bytes(lua_State *L)
{
  static const char *const keys[] = {"size", "qps", "max_buffer", NULL};
  struct verbs_test t;
  const char *fn = "verbs.buffer_bytes";
  uint64_t slot;

  strata_check_keys(L, 1, fn, keys);
  memset(&t, 0, sizeof(t));
  t.size = (uint64_t)strata_opt_int(L, 1, fn, "size", 65536);
  t.qps = (int)strata_opt_int(L, 1, fn, "qps", 1);
  t.max_buffer = (uint64_t)strata_opt_int(L, 1, fn, "max_buffer", 0);
  if(t.size < 1 || t.qps < 1)
    luaL_error(L, "%s: size and qps must be >= 1", fn);
  slot = (t.size + 63) / 64 * 64;
  lua_pushinteger(L, (lua_Integer)(slot * 2 * (uint64_t)side_nslots(&t)));
  return 1;
}

/*
 * verbs.dc_probe([device]) -> {dc = bool, why}: the DC transport
 * (cuObject's CUOBJ_PROTO_RDMA_DC_V1 needs it; dc.h).  No device: SKIP.
 */
static int l_dc_probe(lua_State *L)
{
  char why[300];
  int rc = verbs_dc_probe(luaL_optstring(L, 1, NULL), why, sizeof(why));
  if(rc < 0)
    return strata_skip(L, "%s", why);
  lua_createtable(L, 0, 2);
  strata_set_bool(L, "dc", rc == 1);
  strata_set_str(L, "why", why);
  return 1;
}

static const luaL_Reg verbs_funcs[] = {
  {"dc_probe", l_dc_probe},
  {"buffer_bytes", l_buffer_bytes},
  {"devices", verbs_l_devices},
  {"inventory", verbs_l_inventory},
  {"bw", l_bw},
  {"lat", l_lat},
  {"counters", l_counters},
  {"serve", l_serve},
  {"incast", verbs_l_incast},
  {NULL, NULL}
};

int luaopen_strata_verbs(lua_State *L)
{
  luaL_newlib(L, verbs_funcs);
  return 1;
}
