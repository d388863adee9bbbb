/*
 * s3rdma_lua.c - require "strata.s3rdma": S3 over RDMA for specs.
 *
 *   s3rdma.run{client, mode, op, ...}   the workload, all in C
 *   s3rdma.stage{client, shards, ...}   model staging by key (T4)
 *   (the server's RDMA byte counters: lua/strata/lib/s3rdma.lua over
 *   strata.prom)
 *   s3rdma.prove(r, before, after)      the three witnesses, judged
 *   s3rdma.single{client, op, ...}      one x-amz-rdma-token request
 *   s3rdma.token_encode{} / token_decode(hex)
 *   s3rdma.cuobj_token{...}             cuObject descriptor (or SKIP)
 * API by example: docs/s3-rdma.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "counters.h"
#include "cuobj.h"
#include "cuobj_desc.h"
#include "gpupath.h"
#include "s3_lua.h"
#include "single.h"
#include "stage.h"
#include "strata.h"
#include "token.h"
#include "wire.h"
#include "workload.h"

static int opt_enum(lua_State *L, const char *fn, const char *field,
                    const char *def, const char *const names[])
{
  const char *v = strata_opt_str(L, 1, fn, field, def);
  for(int i = 0; names[i]; i++)
    if(!strcmp(v, names[i]))
      return i;
  return luaL_error(L, "%s: option '%s' cannot be \"%s\"", fn, field, v);
}

static uint64_t opt_size(lua_State *L, const char *fn, const char *field,
                         lua_Integer def, lua_Integer min)
{
  lua_Integer v = strata_opt_int(L, 1, fn, field, def);
  if(v < min)
    luaL_error(L, "%s: option '%s' must be >= %d", fn, field, (int)min);
  return (uint64_t)v;
}

static const char *const run_modes[] = { "tcp", "rc", "cuobject", NULL };

/* s3rdma.run's table (at 1) into o, checked; raises on a bad option.
 * Returns the client. */
static struct l_client *opt_run(lua_State *L, const char *fn,
                                struct s3rdma_run_opts *o)
{
  static const char *const keys[] = {
    "client", "mode", "op", "bucket", "prefix", "size", "range_offset",
    "range_length", "part_size", "objects", "concurrency", "requests",
    "seed", "verify", "readback", "http_fallback", "landing_grace",
    "timeout", "device", "port", "gid_index", "memory", "gpu", "put_grace",
    "token_contract", "control_host_port", NULL
  };
  static const char *const contracts[] = { "current", "suffix", NULL };
  static const char *const ops[] = { "get", "put", "multipart", NULL };
  static const char *const mems[] = { "host", "cuda", NULL };
  struct l_client *c;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  lua_getfield(L, 1, "client");
  if(lua_isnil(L, -1))
    luaL_error(L, "%s: option 'client' (an s3.client) is required", fn);
  c = s3l_check(L, -1, fn);
  lua_pop(L, 1);
  memset(o, 0, sizeof(*o));
  o->mode = (enum s3rdma_mode)opt_enum(L, fn, "mode", "rc", run_modes);
  o->op = (enum s3rdma_op)opt_enum(L, fn, "op", "get", ops);
  o->gpu_memory = opt_enum(L, fn, "memory", "host", mems) == 1;
  o->gpu_device = (int)strata_opt_int(L, 1, fn, "gpu", 0);
  o->bucket = strata_opt_str(L, 1, fn, "bucket", NULL);
  if(!o->bucket || !*o->bucket)
    luaL_error(L, "%s: option 'bucket' is required", fn);
  o->prefix = strata_opt_str(L, 1, fn, "prefix", "strata-s3rdma-");
  o->size = opt_size(L, fn, "size", 1 << 20, 1);
  o->range_off = opt_size(L, fn, "range_offset", 0, 0);
  o->range_len = opt_size(L, fn, "range_length", 0, 0);
  o->part_size = opt_size(L, fn, "part_size", 5 << 20, 1);
  o->objects = (int)opt_size(L, fn, "objects", 1, 1);
  o->concurrency = (int)opt_size(L, fn, "concurrency", 1, 1);
  o->requests = (int)opt_size(L, fn, "requests", o->concurrency, 1);
  o->seed = (uint64_t)strata_opt_int(L, 1, fn, "seed", 1);
  o->verify = strata_opt_bool(L, 1, fn, "verify", 1);
  o->readback = strata_opt_bool(L, 1, fn, "readback", 1);
  o->http_fallback = strata_opt_bool(L, 1, fn, "http_fallback", 0);
  o->landing_grace_s = strata_opt_num(L, 1, fn, "landing_grace", 2);
  o->put_grace_s = strata_opt_num(L, 1, fn, "put_grace", -1);
  o->ctrl_host_port = strata_opt_bool(L, 1, fn, "control_host_port", 0);
  o->contract = (enum s3rdma_token_contract)
                opt_enum(L, fn, "token_contract", "current", contracts);
  o->timeout_s = strata_opt_num(L, 1, fn, "timeout", 0);
  o->dev = strata_opt_str(L, 1, fn, "device", NULL);
  o->port = (int)strata_opt_int(L, 1, fn, "port", 1);
  o->gid_index = (int)strata_opt_int(L, 1, fn, "gid_index", -1);
  if(o->range_len && o->range_off + o->range_len > o->size)
    luaL_error(L, "%s: range %llu+%llu is past the object size %llu", fn,
               (unsigned long long)o->range_off,
               (unsigned long long)o->range_len,
               (unsigned long long)o->size);
  if(o->mode == S3RDMA_MODE_RC &&
     (o->size > S3RDMA_SIZE_MAX && o->op != S3RDMA_OP_MULTIPART))
    luaL_error(L, "%s: hipobj-rc-v2 moves at most 2^31-1 bytes a request; "
               "use op = \"multipart\"", fn);
  if(o->mode == S3RDMA_MODE_CUOBJ &&
     (o->op == S3RDMA_OP_MULTIPART ? o->part_size :
      o->range_len ? o->range_len : o->size) >= S3RDMA_CUOBJ_MAX_REG)
    luaL_error(L, "%s: cuObject registers at most 4 GiB - 1 in one buffer "
               "(kCuObjMaxMemoryRegSize; at 4 GiB libminiocpp segfaults): "
               "split the transfer (multipart parts or ranges of <= 2 GiB)",
               fn);
  if(o->op == S3RDMA_OP_MULTIPART)
    o->requests = o->objects;
  return c;
}

/* s3rdma.run's result table: counts, throughput, CPU, latency. */
static void push_run(lua_State *L, const struct s3rdma_run_opts *o,
                     const struct s3rdma_run_result *r,
                     const struct stats_summary *s)
{
  double secs = (double)r->duration_ns / 1e9;
  lua_createtable(L, 0, 32);
  strata_set_str(L, "mode", o->mode == S3RDMA_MODE_TCP ? "tcp" : "rdma");
  strata_set_str(L, "provider", run_modes[o->mode]);
  strata_set_int(L, "requests", (lua_Integer)r->requests);
  strata_set_int(L, "ok", (lua_Integer)r->ok);
  strata_set_int(L, "declined", (lua_Integer)r->declined);
  strata_set_int(L, "failed", (lua_Integer)r->failed);
  strata_set_int(L, "bytes", (lua_Integer)r->bytes);
  strata_set_int(L, "fallback_requests", (lua_Integer)r->fallback_requests);
  strata_set_int(L, "fallback_bytes", (lua_Integer)r->fallback_bytes);
  strata_set_int(L, "reply_ok", (lua_Integer)r->reply_ok);
  strata_set_int(L, "landed_ok", (lua_Integer)r->landed_ok);
  strata_set_int(L, "verified", (lua_Integer)r->verified);
  strata_set_int(L, "verify_errors", (lua_Integer)r->verify_errors);
  strata_set_int(L, "readback_ok", (lua_Integer)r->readback_ok);
  strata_set_int(L, "readback_errors", (lua_Integer)r->readback_errors);
  strata_set_int(L, "rdma_get_bytes", (lua_Integer)r->rdma_get_bytes);
  strata_set_int(L, "rdma_put_bytes", (lua_Integer)r->rdma_put_bytes);
  strata_set_str(L, "memory", o->gpu_memory ? "cuda" : "host");
  strata_set_int(L, "gpu_copy_errors", (lua_Integer)r->gpu_copy_errors);
  if(o->gpu_memory)
    strata_set_int(L, "cuda_threads_bound", r->cuda_threads_bound);
  strata_set_num(L, "duration_s", secs);
  strata_set_num(L, "throughput_mibps",
                 secs > 0 ? (double)(r->bytes + r->fallback_bytes) /
                            1048576.0 / secs : 0);
  strata_set_num(L, "throughput_gbps",
                 secs > 0 ? (double)(r->bytes + r->fallback_bytes) * 8 /
                            1e9 / secs : 0);
  strata_set_num(L, "cpu_s", r->cpu_s);
  strata_set_num(L, "cpu_core_pct", secs > 0 ? 100.0 * r->cpu_s / secs : 0);
  strata_set_num(L, "cpu_util_pct",
                 secs > 0 && r->ncpu > 0 ?
                   100.0 * r->cpu_s / secs / r->ncpu : 0);
  if(s->n) {
    strata_set_num(L, "lat_p50_ms", s->p50);
    strata_set_num(L, "lat_p95_ms", s->p95);
    strata_set_num(L, "lat_p99_ms", s->p99);
    strata_set_num(L, "lat_max_ms", s->max);
  }
  if(r->first_error[0])
    strata_set_str(L, "first_error", r->first_error);
  if(r->token_decoded[0])
    strata_set_str(L, "token_decoded", r->token_decoded);
}

/*
 * s3rdma.run{client = s3.client{...}, mode = "rc"|"tcp",
 *            op = "get"|"put"|"multipart", bucket, prefix, size,
 *            range_offset, range_length, part_size, objects, concurrency,
 *            requests, seed, verify, readback, http_fallback,
 *            landing_grace, put_grace, timeout, device, port, gid_index,
 *            memory = "host"|"cuda"}
 */
static int l_run(lua_State *L)
{
  static const char *fn = "s3rdma.run";
  struct s3rdma_run_opts o;
  struct s3rdma_run_result r;
  struct s3_config ctrl;
  struct stats_summary s;
  struct l_client *c = opt_run(L, fn, &o);

  ctrl = c->cfg;
  ctrl.service = S3RDMA_SIGN_SERVICE;
  o.data_cfg = &c->cfg;
  o.ctrl_cfg = &ctrl;
  if(s3rdma_run(&o, &r)) {
    char e[400];
    snprintf(e, sizeof(e), "%s", r.setup_error);
    stats_free(&r.lat_ms);
    if(r.setup_skip)
      return strata_skip(L, "%s%s", o.mode == S3RDMA_MODE_RC &&
                         !o.gpu_memory ? "no usable RDMA device: " : "", e);
    return luaL_error(L, "%s: %s", fn, e);
  }
  stats_summarize(&r.lat_ms, &s);
  stats_free(&r.lat_ms);
  push_run(L, &o, &r, &s);
  return 1;
}

/*
 * s3rdma.stage{client, mode = "rc"|"cuobject", bucket,
 *              shards = {{key, size}, ...}, concurrency, piece,
 *              memory = "host"|"cuda", gpu, verify, device, port,
 *              gid_index, landing_grace, control_host_port,
 *              token_contract}: the T4 model staging (stage.h)
 */
static int l_stage(lua_State *L)
{
  static const char *const keys[] = {
    "client", "mode", "bucket", "shards", "concurrency", "piece", "memory",
    "gpu", "verify", "device", "port", "gid_index", "landing_grace",
    "control_host_port", "token_contract", NULL
  };
  static const char *const modes[] = { "rc", "cuobject", NULL };
  static const char *const mems[] = { "host", "cuda", NULL };
  static const char *const contracts[] = { "current", "suffix", NULL };
  static const char *fn = "s3rdma.stage";
  struct s3rdma_stage_opts o;
  struct s3rdma_stage_result r;
  struct s3_config ctrl;
  struct l_client *c;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  lua_getfield(L, 1, "client");
  if(lua_isnil(L, -1))
    return luaL_error(L, "%s: option 'client' (an s3.client) is required",
                      fn);
  c = s3l_check(L, -1, fn);
  lua_pop(L, 1);
  memset(&o, 0, sizeof(o));
  o.mode = opt_enum(L, fn, "mode", "rc", modes) ? S3RDMA_MODE_CUOBJ :
           S3RDMA_MODE_RC;
  o.bucket = strata_opt_str(L, 1, fn, "bucket", NULL);
  if(!o.bucket || !*o.bucket)
    return luaL_error(L, "%s: option 'bucket' is required", fn);
  o.concurrency = (int)opt_size(L, fn, "concurrency", 8, 1);
  o.piece = opt_size(L, fn, "piece", 1 << 30, 4096);
  if(o.piece > S3RDMA_SIZE_MAX ||
     (o.mode == S3RDMA_MODE_CUOBJ && o.piece >= S3RDMA_CUOBJ_MAX_REG))
    return luaL_error(L, "%s: option 'piece' must be <= 2^31-1 bytes (one "
                      "hipobj-rc-v2 transfer)", fn);
  o.gpu_memory = opt_enum(L, fn, "memory", "host", mems) == 1;
  o.gpu_device = (int)strata_opt_int(L, 1, fn, "gpu", 0);
  o.verify = strata_opt_bool(L, 1, fn, "verify", 0);
  o.dev = strata_opt_str(L, 1, fn, "device", NULL);
  o.port = (int)strata_opt_int(L, 1, fn, "port", 1);
  o.gid_index = (int)strata_opt_int(L, 1, fn, "gid_index", -1);
  o.landing_grace_s = strata_opt_num(L, 1, fn, "landing_grace", 2);
  o.ctrl_host_port = strata_opt_bool(L, 1, fn, "control_host_port", 0);
  o.contract = (enum s3rdma_token_contract)
               opt_enum(L, fn, "token_contract", "current", contracts);
  o.shards = s3l_check_objects(L, fn, "shards", &o.n);
  ctrl = c->cfg;
  ctrl.service = S3RDMA_SIGN_SERVICE;
  o.data_cfg = &c->cfg;
  o.ctrl_cfg = &ctrl;
  if(s3rdma_stage(&o, &r)) {
    if(r.setup_skip)
      return strata_skip(L, "%s", r.error);
    return luaL_error(L, "%s: %s", fn, r.error);
  }
  lua_createtable(L, 0, 16);
  strata_set_str(L, "provider", modes[o.mode == S3RDMA_MODE_CUOBJ]);
  strata_set_str(L, "memory", mems[o.gpu_memory]);
  strata_set_int(L, "shards", (lua_Integer)o.n);
  strata_set_int(L, "failed", (lua_Integer)r.failed);
  strata_set_int(L, "bytes", (lua_Integer)r.bytes);
  strata_set_int(L, "transfers", (lua_Integer)r.transfers);
  strata_set_int(L, "reply_ok", (lua_Integer)r.reply_ok);
  strata_set_int(L, "landed_ok", (lua_Integer)r.landed_ok);
  strata_set_int(L, "declined", (lua_Integer)r.declined);
  strata_set_num(L, "seconds", r.seconds);
  strata_set_num(L, "first_byte_s", r.first_byte_s);
  strata_set_num(L, "gbps", r.seconds > 0 ? (double)r.bytes * 8 / 1e9 /
                                            r.seconds : 0);
  strata_set_num(L, "cpu_s", r.cpu_s);
  if(o.verify) {
    strata_set_int(L, "verified", (lua_Integer)r.verified);
    strata_set_int(L, "verify_errors", (lua_Integer)r.verify_errors);
  }
  if(r.error[0])
    strata_set_str(L, "error", r.error);
  return 1;
}

/* Field k of the table at idx as an integer (0 when absent). */
static double fnum(lua_State *L, int idx, const char *k)
{
  double v;
  lua_getfield(L, idx, k);
  v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : 0;
  lua_pop(L, 1);
  return v;
}

/*
 * s3rdma.prove(r, before, after [, {nic = {state, why}}])
 *   -> {verdict = "PROVEN"|"DECLINED"|"NOT PROVEN", reason,
 *       delta_read, delta_write, counter_gap, reply, landed, counters, nic,
 *       nic_why, witnesses}
 * nic is the fourth witness, judged in lua/strata/lib/s3nic.lua: "agree",
 * "mismatch" (NOT PROVEN) or "absent" (reported, not held against it).
 * r is what s3rdma.run returned (mode rdma); before/after come from
 * lib/s3rdma.lua counters().  The counter witness is "absent" (verdict NOT PROVEN,
 * with why) when they are nil (the site has no counter source) or say
 * absent (the endpoint answered 404).  AIStor's direction: GET bytes must
 * show in read_bytes, PUT / UploadPart bytes in write_bytes.  This
 * measures how far the counters are from the bytes moved (counter_gap,
 * relative: the larger of |read delta - GET bytes| / GET bytes and
 * |write delta - PUT bytes| / PUT bytes, a zero byte count dividing by 1)
 * and does not judge it: the criterion "<phase>.counter_gap" in
 * specs/thresholds.yaml does (issue 26: no rule outside the criteria).
 * counters says "match" (gap 0), "gap" or "absent".
 */
static int l_prove(lua_State *L)
{
  double ok, fb, reply, landed, verr, rberr, getb, putb, dr = 0, dw = 0;
  double gap = 0, declined, failed;
  const char *verdict = "PROVEN", *creason = "absent";
  char reason[1900] = "", absent[400] = "no counter source";
  char nic[16] = "absent", nicwhy[300] = "not read", wit[200];
  int have_counters = lua_istable(L, 2) && lua_istable(L, 3);
  int w1, w2, w3 = 0, w4;

  luaL_checktype(L, 1, LUA_TTABLE);
  for(int i = 2; have_counters && i <= 3; i++) {
    lua_getfield(L, i, "absent");
    if(lua_isstring(L, -1)) {
      snprintf(absent, sizeof(absent), "%s", lua_tostring(L, -1));
      have_counters = 0;
    }
    lua_pop(L, 1);
  }
  if(lua_istable(L, 4)) {
    if(lua_getfield(L, 4, "nic") == LUA_TTABLE) {
      lua_getfield(L, -1, "state");
      if(lua_isstring(L, -1))
        snprintf(nic, sizeof(nic), "%s", lua_tostring(L, -1));
      lua_getfield(L, -2, "why");
      if(lua_isstring(L, -1))
        snprintf(nicwhy, sizeof(nicwhy), "%s", lua_tostring(L, -1));
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
  }
  w4 = strcmp(nic, "mismatch") != 0;
  ok = fnum(L, 1, "ok");
  fb = fnum(L, 1, "fallback_requests");
  declined = fnum(L, 1, "declined");
  failed = fnum(L, 1, "failed");
  reply = fnum(L, 1, "reply_ok");
  landed = fnum(L, 1, "landed_ok");
  verr = fnum(L, 1, "verify_errors");
  rberr = fnum(L, 1, "readback_errors");
  getb = fnum(L, 1, "rdma_get_bytes");
  putb = fnum(L, 1, "rdma_put_bytes");
  ok -= fb;                                   /* RDMA successes only */
  w1 = ok > 0 && reply >= ok;
  w2 = ok > 0 && landed >= ok && verr == 0 && rberr == 0;
  if(have_counters) {
    dr = fnum(L, 3, "read_bytes") - fnum(L, 2, "read_bytes");
    dw = fnum(L, 3, "write_bytes") - fnum(L, 2, "write_bytes");
    gap = fmax(fabs(dr - getb) / (getb > 0 ? getb : 1),
               fabs(dw - putb) / (putb > 0 ? putb : 1));
    w3 = 1;                       /* read: how close is the criterion's */
    creason = gap == 0 ? "match" : "gap";
  }
  if(ok <= 0 && declined > 0 && failed == 0) {
    verdict = "DECLINED";
    snprintf(reason, sizeof(reason), "the server declined RDMA (501) for "
             "%.0f request(s)%s", declined, fb > 0 ?
             "; they were retried over HTTP (counted as fallback)" : "");
  }
  else if(!w1 || !w2 || !w3 || !w4 || failed > 0) {
    char first[420] = "", cw[600];
    lua_getfield(L, 1, "first_error");
    if(lua_isstring(L, -1))
      snprintf(first, sizeof(first), "; first error: %s",
               lua_tostring(L, -1));
    lua_pop(L, 1);
    if(have_counters)
      snprintf(cw, sizeof(cw), "%s (read +%.0f for %.0f GET bytes, write "
               "+%.0f for %.0f PUT bytes, gap %.6g)", creason, dr, getb, dw,
               putb, gap);
    else
      snprintf(cw, sizeof(cw), "absent: %s", absent);
    verdict = "NOT PROVEN";
    snprintf(reason, sizeof(reason), "RDMA not proven: %.0f of %.0f "
             "request(s) failed%s; of %.0f moved: reply header %s (%.0f), "
             "bytes landed %s (%.0f, %.0f wrong, %.0f read-back errors), "
             "server counters %s, NIC counters %s (%s)", failed,
             fnum(L, 1, "requests"), first, ok, w1 ? "ok" : "WRONG", reply,
             w2 ? "ok" : "WRONG", landed, verr, rberr, cw, nic, nicwhy);
  }
  snprintf(wit, sizeof(wit), "reply %s, bytes landed %s, server counters "
           "%s, NIC counters %s", w1 ? "agree" : "disagree",
           w2 ? "agree" : "disagree", creason, nic);
  lua_createtable(L, 0, 8);
  strata_set_str(L, "verdict", verdict);
  strata_set_str(L, "reason", reason);
  strata_set_num(L, "delta_read", dr);
  strata_set_num(L, "delta_write", dw);
  if(have_counters)
    strata_set_num(L, "counter_gap", gap);
  strata_set_bool(L, "reply", w1);
  strata_set_bool(L, "landed", w2);
  strata_set_str(L, "counters", creason);
  strata_set_str(L, "nic", nic);
  strata_set_str(L, "nic_why", nicwhy);
  strata_set_str(L, "witnesses", wit);
  if(!have_counters)
    strata_set_str(L, "counters_absent", absent);
  return 1;
}

/*
 * s3rdma.single{client, op = "get"|"put", bucket, key, size, offset,
 *               ranged, part, upload_id, token}
 *   -> {status = "ok"|"declined"|"failed", http, rdma_reply,
 *       bytes_reported, error}
 */
static int l_single(lua_State *L)
{
  static const char *const keys[] = {
    "client", "op", "bucket", "key", "size", "offset", "ranged", "part",
    "upload_id", "token", NULL
  };
  static const char *const ops[] = { "get", "put", NULL };
  static const char *const st[] = { "ok", "declined", "failed" };
  static const char *fn = "s3rdma.single";
  struct s3rdma_single q;
  struct s3rdma_outcome o;
  struct l_client *c;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  lua_getfield(L, 1, "client");
  c = s3l_check(L, -1, fn);
  lua_pop(L, 1);
  memset(&q, 0, sizeof(q));
  q.put = opt_enum(L, fn, "op", "get", ops);
  q.bucket = strata_opt_str(L, 1, fn, "bucket", NULL);
  q.key = strata_opt_str(L, 1, fn, "key", NULL);
  q.token = strata_opt_str(L, 1, fn, "token", NULL);
  if(!q.bucket || !q.key || !q.token)
    return luaL_error(L, "%s: bucket, key and token are required", fn);
  q.size = opt_size(L, fn, "size", 1, 1);
  q.offset = opt_size(L, fn, "offset", 0, 0);
  q.ranged = strata_opt_bool(L, 1, fn, "ranged", 0);
  q.part = (int)strata_opt_int(L, 1, fn, "part", 0);
  q.upload_id = strata_opt_str(L, 1, fn, "upload_id", NULL);
  s3rdma_single_transfer(c->conn, &q, &o);
  lua_createtable(L, 0, 6);
  strata_set_str(L, "status", st[o.status]);
  strata_set_int(L, "http", o.ready_status);
  strata_set_int(L, "rdma_reply", o.rdma_reply);
  strata_set_int(L, "bytes_reported", (lua_Integer)o.bytes_reported);
  strata_set_str(L, "error", o.error);
  return 1;
}

static void set_hex(lua_State *L, const char *k, const uint8_t *b, int n)
{
  char h[64];
  for(int i = 0; i < n; i++)
    snprintf(h + 2 * i, 3, "%02x", b[i]);
  strata_set_str(L, k, h);
}

/* s3rdma.token_decode(hex) -> {transport, qpn, gid, rkey, addr, len,
 * port, lid}; a malformed token raises. */
static int l_token_decode(lua_State *L)
{
  size_t n;
  const char *hex = luaL_checklstring(L, 1, &n), *why = "";
  struct s3rdma_token t;
  if(s3rdma_token_decode(hex, n, &t, &why))
    return luaL_error(L, "s3rdma.token_decode: bad token (%s)", why);
  lua_createtable(L, 0, 8);
  strata_set_int(L, "transport", t.transport);
  strata_set_int(L, "qpn", t.qpn);
  set_hex(L, "gid", t.gid, 16);
  strata_set_int(L, "rkey", t.rkey);
  strata_set_int(L, "addr", (lua_Integer)t.addr);
  strata_set_int(L, "len", (lua_Integer)t.len);
  strata_set_int(L, "port", t.port);
  strata_set_int(L, "lid", t.lid);
  return 1;
}

/* s3rdma.token_encode{transport, qpn, gid (32 hex), rkey, addr, len,
 * port, lid} -> 88 hex */
static int l_token_encode(lua_State *L)
{
  static const char *const keys[] = {
    "transport", "qpn", "gid", "rkey", "addr", "len", "port", "lid", NULL
  };
  static const char *fn = "s3rdma.token_encode";
  struct s3rdma_token t;
  const char *gid;
  char out[89];
  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  memset(&t, 0, sizeof(t));
  t.transport = (uint8_t)strata_opt_int(L, 1, fn, "transport", 1);
  t.qpn = (uint32_t)strata_opt_int(L, 1, fn, "qpn", 0);
  t.rkey = (uint32_t)strata_opt_int(L, 1, fn, "rkey", 0);
  t.addr = (uint64_t)strata_opt_int(L, 1, fn, "addr", 0);
  t.len = (uint64_t)strata_opt_int(L, 1, fn, "len", 0);
  t.port = (uint8_t)strata_opt_int(L, 1, fn, "port", 1);
  t.lid = (uint16_t)strata_opt_int(L, 1, fn, "lid", 0);
  gid = strata_opt_str(L, 1, fn, "gid", "");
  if(*gid) {
    if(strlen(gid) != 32)
      return luaL_error(L, "%s: gid must be 32 hex digits", fn);
    for(int i = 0; i < 16; i++) {
      unsigned b;
      if(sscanf(gid + 2 * i, "%2x", &b) != 1)
        return luaL_error(L, "%s: gid must be 32 hex digits", fn);
      t.gid[i] = (uint8_t)b;
    }
  }
  s3rdma_token_encode(&t, out);
  lua_pushstring(L, out);
  return 1;
}

/*
 * s3rdma.cuobj_desc(s [, {contract = "current"|"suffix", buf, size}])
 *   -> {addr, size, rkey, lid, qp, gid_present, gid, text, token}
 * Decode an 81-char cuObject descriptor (a malformed one raises, naming
 * the field); token is what would be sent under the contract.
 */
static int l_cuobj_desc(lua_State *L)
{
  static const char *const keys[] = { "contract", "buf", "size", NULL };
  static const char *const contracts[] = { "current", "suffix", NULL };
  static const char *fn = "s3rdma.cuobj_desc";
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  struct s3rdma_cuobj_desc d;
  enum s3rdma_token_contract c = S3RDMA_CONTRACT_CURRENT;
  uint64_t buf = 0, size = 0;
  char why[160], text[160], form[S3RDMA_CUOBJ_DESC_LEN + 40];
  if(lua_istable(L, 2)) {
    const char *cs;
    strata_check_keys(L, 2, fn, keys);
    lua_getfield(L, 2, "contract");
    cs = lua_isnil(L, -1) ? "current" : luaL_checkstring(L, -1);
    c = !strcmp(cs, contracts[1]) ? S3RDMA_CONTRACT_SUFFIX :
        !strcmp(cs, contracts[0]) ? S3RDMA_CONTRACT_CURRENT :
        (enum s3rdma_token_contract)luaL_error(L, "%s: contract cannot be "
                                               "\"%s\"", fn, cs);
    lua_pop(L, 1);
    lua_getfield(L, 2, "buf");
    buf = (uint64_t)luaL_optinteger(L, -1, 0);
    lua_getfield(L, 2, "size");
    size = (uint64_t)luaL_optinteger(L, -1, 0);
    lua_pop(L, 2);
  }
  if(s3rdma_cuobj_desc_parse(s, n, &d, why, sizeof(why)) ||
     s3rdma_cuobj_token_form(s, c, buf, size, form, sizeof(form), why,
                             sizeof(why)))
    return luaL_error(L, "%s: not a cuObject descriptor: %s", fn, why);
  s3rdma_cuobj_desc_describe(&d, text, sizeof(text));
  lua_createtable(L, 0, 9);
  strata_set_int(L, "addr", (lua_Integer)d.addr);
  strata_set_int(L, "size", d.size);
  strata_set_int(L, "rkey", d.rkey);
  strata_set_int(L, "lid", d.lid);
  strata_set_int(L, "qp", d.qpn);
  strata_set_bool(L, "gid_present", d.gid_present);
  set_hex(L, "gid", d.gid, 16);
  strata_set_str(L, "text", text);
  strata_set_str(L, "token", form);
  return 1;
}

/*
 * s3rdma.gpu_path_facts() -> {memlock (bytes, -1 unlimited), peermem,
 *   cufile_loaded, cufile_path, cufile_version, cufile_desc_str,
 *   cufile_why}: read-only facts for the preflight (gpupath.h).
 */
static int l_gpu_path_facts(lua_State *L)
{
  struct s3rdma_gpupath g;
  s3rdma_gpupath_facts(&g);
  lua_createtable(L, 0, 7);
  strata_set_int(L, "memlock", (lua_Integer)g.memlock);
  strata_set_bool(L, "peermem", g.peermem);
  strata_set_bool(L, "cufile_loaded", g.cufile_loaded);
  if(g.cufile_path[0])
    strata_set_str(L, "cufile_path", g.cufile_path);
  strata_set_int(L, "cufile_version", g.cufile_version);
  strata_set_bool(L, "cufile_desc_str", g.cufile_desc_str);
  if(g.cufile_why[0])
    strata_set_str(L, "cufile_why", g.cufile_why);
  strata_set_str(L, "cufile_symbol", S3RDMA_CUFILE_DESC_SYM);
  return 1;
}

/* s3rdma.cuobj_probe() -> true | false, reason */
static int l_cuobj_probe(lua_State *L)
{
  char why[300];
  struct s3rdma_cuobj *c = s3rdma_cuobj_open(why, sizeof(why));
  if(!c) {
    lua_pushboolean(L, 0);
    lua_pushstring(L, why);
    return 2;
  }
  s3rdma_cuobj_close(&c);
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg funcs[] = {
  {"run", l_run},
  {"stage", l_stage},
  {"prove", l_prove},
  {"single", l_single},
  {"token_encode", l_token_encode},
  {"token_decode", l_token_decode},
  {"cuobj_probe", l_cuobj_probe},
  {"cuobj_desc", l_cuobj_desc},
  {"gpu_path_facts", l_gpu_path_facts},
  {NULL, NULL}
};

int luaopen_strata_s3rdma(lua_State *L)
{
  luaL_newlib(L, funcs);
  lua_pushstring(L, S3RDMA_PROTOCOL);
  lua_setfield(L, -2, "protocol");
  return 1;
}
