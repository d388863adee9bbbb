/*
 * incast_lua.c - verbs.incast{...} (incast.c): checks the options, runs
 * the whole incast in C, returns a plain table.
 */
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"
#include "incast.h"

int verbs_l_incast(lua_State *L);
int verbs_opt_qp_timeout(lua_State *L, const char *fn);   /* verbs_lua.c */
int verbs_opt_retry_cnt(lua_State *L, const char *fn);    /* verbs_lua.c */

static const char *const incast_keys[] = {
  "senders", "receiver", "op", "size", "qps", "iters", "duration",
  "tx_depth", "cq_mod", "validate", "timeout", "deadline", "device", "port",
  "gid_index", "max_buffer", "qp_timeout", "retry_cnt", NULL
};
static const char *const peer_keys[] = {
  "name", "host", "port", "token", "device", "ib_port", "gid_index",
  "timeout", NULL
};

/* The peer table at absolute index idx into p (strings stay referenced
 * by the options table). */
static void get_peer(lua_State *L, int idx, const char *what,
                     struct incast_peer *p)
{
  const char *fn = "verbs.incast";
  if(!lua_istable(L, idx))
    luaL_error(L, "%s: %s must be a table {host=, port=, token=}", fn, what);
  strata_check_keys(L, idx, fn, peer_keys);
  p->name = strata_opt_str(L, idx, fn, "name", NULL);
  p->host = strata_opt_str(L, idx, fn, "host", NULL);
  p->port = (int)strata_opt_int(L, idx, fn, "port", 18515);
  p->token = strata_opt_str(L, idx, fn, "token", NULL);
  p->device = strata_opt_str(L, idx, fn, "device", NULL);
  p->ib_port = (int)strata_opt_int(L, idx, fn, "ib_port", 1);
  p->gid_index = (int)strata_opt_int(L, idx, fn, "gid_index", -1);
  p->timeout_s = strata_opt_num(L, idx, fn, "timeout", 0);
  if(p->timeout_s < 0)
    luaL_error(L, "%s: %s.timeout must be > 0", fn, what);
  if(!p->host)
    luaL_error(L, "%s: %s.host is required", fn, what);
  if(!p->token || !*p->token)
    luaL_error(L, "%s: %s.token is required (the agent refuses "
               "connections without it)", fn, what);
  if(!p->name)
    p->name = p->host;
}

static void get_opts(lua_State *L, struct incast_opts *o)
{
  const char *fn = "verbs.incast";
  struct verbs_test *t = &o->t;
  lua_Integer v;
  int n;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, incast_keys);
  memset(o, 0, sizeof(*o));
  t->kind = VERBS_KIND_BW;
  t->op = VERBS_OP_WRITE;
  if(strcmp(strata_opt_str(L, 1, fn, "op", "write"), "write"))
    luaL_error(L, "%s: option 'op' must be \"write\" (incast measures RDMA "
               "WRITE)", fn);
  t->dmabuf_fd = -1;
  t->mem = VERBS_MEM_HOST;
  v = strata_opt_int(L, 1, fn, "size", 65536);
  if(v < 1 || v > (1ll << 31))
    luaL_error(L, "%s: option 'size' must be 1 .. 2^31, got %I", fn, v);
  t->size = (uint64_t)v;
  v = strata_opt_int(L, 1, fn, "qps", 1);
  if(v < 1 || v > VERBS_MAX_QPS)
    luaL_error(L, "%s: option 'qps' (per sender) must be 1 .. %d, got %I",
               fn, VERBS_MAX_QPS, v);
  t->qps = (int)v;
  t->tx_depth = (int)strata_opt_int(L, 1, fn, "tx_depth", 128);
  t->cq_mod = (int)strata_opt_int(L, 1, fn, "cq_mod",
                                  verbs_default_cq_mod(t->size, t->qps));
  if(t->tx_depth < 1 || t->tx_depth > 16384 || t->cq_mod < 1)
    luaL_error(L, "%s: tx_depth 1..16384, cq_mod >= 1", fn);
  v = strata_opt_int(L, 1, fn, "iters", 0);
  t->duration_s = strata_opt_num(L, 1, fn, "duration", 0);
  if(v < 0 || t->duration_s < 0)
    luaL_error(L, "%s: iters and duration must be >= 0", fn);
  if(v == 0 && t->duration_s == 0)
    v = 5000;
  t->iters = (uint64_t)v;
  t->validate = strata_opt_bool(L, 1, fn, "validate", 0);
  t->timeout_s = strata_opt_num(L, 1, fn, "timeout", 10);
  if(t->timeout_s <= 0)
    luaL_error(L, "%s: timeout must be > 0", fn);
  t->qp_timeout = verbs_opt_qp_timeout(L, fn);
  t->retry_cnt = verbs_opt_retry_cnt(L, fn);
  v = strata_opt_int(L, 1, fn, "max_buffer", 0);
  if(v < 0)
    luaL_error(L, "%s: max_buffer must be >= 0", fn);
  t->max_buffer = (uint64_t)v;
  o->device = strata_opt_str(L, 1, fn, "device", NULL);
  o->port = (int)strata_opt_int(L, 1, fn, "port", 1);
  o->gid_index = (int)strata_opt_int(L, 1, fn, "gid_index", -1);
  o->ctl_timeout_s = 10;
  o->deadline_s = strata_opt_num(L, 1, fn, "deadline",
                                 t->iters ? 120 : t->duration_s + 60);
  if(o->deadline_s <= 0)
    luaL_error(L, "%s: deadline must be > 0", fn);

  if(lua_getfield(L, 1, "senders") != LUA_TTABLE)
    luaL_error(L, "%s: option 'senders' must be a list of peer tables", fn);
  n = (int)luaL_len(L, -1);
  if(n < 1 || n > INCAST_MAX_SENDERS)
    luaL_error(L, "%s: senders: 1 .. %d peers, got %d", fn,
               INCAST_MAX_SENDERS, n);
  o->nsenders = n;
  for(int i = 0; i < n; i++) {
    char what[32];
    snprintf(what, sizeof(what), "senders[%d]", i + 1);
    lua_geti(L, -1, i + 1);
    get_peer(L, lua_gettop(L), what, &o->senders[i]);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if(lua_getfield(L, 1, "receiver") != LUA_TNIL) {
    get_peer(L, lua_gettop(L), "receiver", &o->receiver);
    o->remote_receiver = 1;
  }
  lua_pop(L, 1);
}

static void push_sender(lua_State *L, const struct incast_opts *o,
                        const struct incast_sender *s, int i)
{
  lua_createtable(L, 0, 12);
  strata_set_str(L, "name", o->senders[i].name);
  strata_set_str(L, "agent", s->agent);
  strata_set_str(L, "device", s->device);
  strata_set_num(L, "bw_gbps", s->gbps);
  strata_set_int(L, "bytes", (lua_Integer)s->bytes);
  strata_set_int(L, "msgs", (lua_Integer)s->msgs);
  strata_set_num(L, "duration_s",
                 (double)(s->t_last_ns - s->t_first_ns) / 1e9);
  strata_set_num(L, "cpu_s", s->cpu_s);
  strata_set_num(L, "clock_err_us", s->clock_err_us);
  if(o->t.validate) {
    strata_set_bool(L, "validated", s->validated);
    if(s->mismatch_at >= 0)
      strata_set_int(L, "mismatch_at", (lua_Integer)s->mismatch_at);
  }
  if(s->error[0])
    strata_set_str(L, "error", s->error);
}

int verbs_l_incast(lua_State *L)
{
  struct incast_opts o;
  struct incast_result *r;
  enum verbs_code rc;

  get_opts(L, &o);
  r = lua_newuserdatauv(L, sizeof(*r), 0);   /* big: not on the stack */
  rc = verbs_incast(&o, r);
  if(rc) {
    verbs_incast_free(r);
    if(rc == VERBS_ENODEV || rc == VERBS_EUNSUPPORTED)
      return strata_skip(L, "%s", verbs_errmsg());
    return luaL_error(L, "verbs.incast: %s (%s)", verbs_errmsg(),
                      verbs_strerror(rc));
  }
  lua_newtable(L);
  strata_set_str(L, "op", "write");
  strata_set_int(L, "size", (lua_Integer)o.t.size);
  strata_set_int(L, "qps", o.t.qps);
  strata_set_int(L, "senders", o.nsenders);
  strata_set_str(L, "receiver", o.remote_receiver ? o.receiver.name
                                                  : "local");
  strata_set_str(L, "rx_device", r->rx_device);
  if(r->mtu_bytes)
    strata_set_int(L, "mtu", r->mtu_bytes);
  strata_set_num(L, "bw_gbps", r->gbps);
  strata_set_num(L, "min_gbps", r->min_gbps);
  strata_set_num(L, "max_gbps", r->max_gbps);
  strata_set_num(L, "fairness", r->fairness);
  strata_set_int(L, "bytes", (lua_Integer)r->bytes);
  strata_set_num(L, "window_s", r->window_s);
  strata_set_num(L, "start_skew_ms", r->start_skew_ms);
  strata_set_num(L, "clock_err_us", r->clock_err_us);
  strata_set_int(L, "errors", r->errors);
  if(o.t.validate) {
    int all = 1;
    for(int i = 0; i < o.nsenders; i++)
      all = all && r->s[i].validated;
    strata_set_bool(L, "validated", all);
  }
  lua_createtable(L, o.nsenders, 0);
  for(int i = 0; i < o.nsenders; i++) {
    push_sender(L, &o, &r->s[i], i);
    lua_seti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "per_sender");
  if(!o.remote_receiver) {   /* the receiving port's counters */
    lua_createtable(L, 0, (int)r->c1.n);
    for(size_t i = 0; i < r->c1.n; i++)
      for(size_t j = 0; j < r->c0.n; j++)
        if(!strcmp(r->c1.name[i], r->c0.name[j])) {
          lua_pushinteger(L, (lua_Integer)(r->c1.value[i] -
                                           r->c0.value[j]));
          lua_setfield(L, -2, r->c1.name[i]);
          break;
        }
    lua_setfield(L, -2, "counters");
  }
  verbs_incast_free(r);
  return 1;
}
