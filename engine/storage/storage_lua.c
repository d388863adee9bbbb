/*
 * storage_lua.c - require "strata.storage": storage.run{...}, one fio-like
 * job measured wholly in C (job.c), its options named as fio names them.
 * Only checks, converts and opens.  Block devices are refused unless the
 * caller says destructive = true, and always when mounted or held.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>

#include "storage.h"
#include "strata.h"

#define MAX_CPUS 4096
#define MAX_IODEPTH 1024

/* fio's default clat percentile list (options.c, percentile_list) */
static const double fio_pcts[] = {
  1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99
};

/* fio spells sizes "4k", "1M", "1g" (powers of 1024, kb_base=1024). */
static uint64_t opt_size(lua_State *L, const char *fn, const char *field,
                         uint64_t def)
{
  int t = lua_getfield(L, 1, field);
  uint64_t v = def;
  if(t == LUA_TNUMBER) {
    lua_Integer n = lua_tointeger(L, -1);
    if(!lua_isinteger(L, -1) || n < 0)
      luaL_error(L, "%s: option '%s' must be a whole number of bytes", fn,
                 field);
    v = (uint64_t)n;
  } else if(t == LUA_TSTRING) {
    const char *s = lua_tostring(L, -1);
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    int sh = 0;
    switch(*end) {
    case 'k': case 'K': sh = 10; end++; break;
    case 'm': case 'M': sh = 20; end++; break;
    case 'g': case 'G': sh = 30; end++; break;
    case 't': case 'T': sh = 40; end++; break;
    default: break;
    }
    if((*end == 'i' || *end == 'I') && sh)
      end++;
    if((*end == 'b' || *end == 'B') && sh)
      end++;
    if(end == s || *end)
      luaL_error(L, "%s: option '%s': '%s' is not a size (4k, 1M, 2g)", fn,
                 field, s);
    v = (uint64_t)n << sh;
  } else if(t != LUA_TNIL)
    luaL_error(L, "%s: option '%s' must be a size (number or '1M')", fn,
               field);
  lua_pop(L, 1);
  return v;
}

/* cpus_allowed = "0-3" or {0, 1}; numa_cpu_nodes = 0 (one node). */
static size_t opt_cpus(lua_State *L, const char *fn, int *cpus)
{
  size_t n = 0;
  int t = lua_getfield(L, 1, "cpus_allowed");
  if(t == LUA_TSTRING) {
    if(stg_cpulist_parse(lua_tostring(L, -1), cpus, MAX_CPUS, &n))
      luaL_error(L, "%s: option 'cpus_allowed': '%s' is not a CPU list "
                 "(0-3,8)", fn, lua_tostring(L, -1));
  } else if(t == LUA_TTABLE) {
    for(lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
      if(!lua_isinteger(L, -1) || n >= MAX_CPUS)
        luaL_error(L, "%s: cpus_allowed[%d] must be a CPU number", fn,
                   (int)i);
      cpus[n++] = (int)lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  } else if(t != LUA_TNIL)
    luaL_error(L, "%s: option 'cpus_allowed' must be a CPU list", fn);
  lua_pop(L, 1);
  t = lua_getfield(L, 1, "numa_cpu_nodes");
  if(t != LUA_TNIL) {
    if(n)
      luaL_error(L, "%s: give cpus_allowed or numa_cpu_nodes, not both", fn);
    if(!lua_isinteger(L, -1))
      luaL_error(L, "%s: option 'numa_cpu_nodes' must be a node number", fn);
    int node = (int)lua_tointeger(L, -1);
    if(stg_node_cpus("", node, cpus, MAX_CPUS, &n))
      strata_skip(L, "NUMA node %d: no CPUs listed in /sys/devices/system/"
                  "node/node%d/cpulist (%s)", node, node, strerror(errno));
  }
  lua_pop(L, 1);
  return n;
}

/* fio's iodepth_batch_submit, iodepth_batch_complete_min and _max, whole
 * numbers 0..MAX_IODEPTH with fio's defaults (stg_opts_defaults); fio
 * clamps them against iodepth (stg_opts_fixup), as strata does. */
static void opt_batch(lua_State *L, const char *fn, struct stg_opts *o)
{
  static const char *const names[] = { "iodepth_batch_submit",
    "iodepth_batch_complete_min", "iodepth_batch_complete_max" };
  unsigned *dst[] = { &o->batch_submit, &o->batch_complete_min,
                      &o->batch_complete_max };
  for(int i = 0; i < 3; i++) {
    lua_Integer v = strata_opt_int(L, 1, fn, names[i], *dst[i]);
    if(v < 0 || v > MAX_IODEPTH)
      luaL_error(L, "%s: option '%s' must be 0..%d, got %d", fn, names[i],
                 MAX_IODEPTH, (int)v);
    *dst[i] = (unsigned)v;
  }
}

/* fio's latency object: {min, max, mean, stddev, N, percentile = {...}}
 * in ns, plus flat <pre>_{mean,p50,p95,p99,p999,max}_us for criteria. */
static void set_lat(lua_State *L, const char *pre, struct stats_samples *s,
                    int with_pcts)
{
  static const struct { const char *k; double p; } flat[] = {
    { "p50", 50 }, { "p90", 90 }, { "p95", 95 }, { "p99", 99 },
    { "p999", 99.9 }, { "max", 100 }, { "min", 0 } };
  struct stats_summary sum;
  char k[64];
  if(!s->n)
    return;
  stats_summarize(s, &sum);
  lua_createtable(L, 0, 6);
  strata_set_num(L, "min", sum.min);
  strata_set_num(L, "max", sum.max);
  strata_set_num(L, "mean", sum.mean);
  strata_set_num(L, "stddev", sum.stdev);
  strata_set_int(L, "N", (lua_Integer)sum.n);
  if(with_pcts) {
    lua_createtable(L, 0, sizeof(fio_pcts) / sizeof(fio_pcts[0]));
    for(size_t i = 0; i < sizeof(fio_pcts) / sizeof(fio_pcts[0]); i++) {
      snprintf(k, sizeof(k), "%f", fio_pcts[i]);
      strata_set_num(L, k, stats_percentile(s, fio_pcts[i]));
    }
    lua_setfield(L, -2, "percentile");
  }
  snprintf(k, sizeof(k), "%s_ns", pre);
  lua_setfield(L, -2, k);
  snprintf(k, sizeof(k), "%s_mean_us", pre);
  strata_set_num(L, k, sum.mean / 1e3);
  for(size_t i = 0; i < sizeof(flat) / sizeof(flat[0]); i++) {
    snprintf(k, sizeof(k), "%s_%s_us", pre, flat[i].k);
    strata_set_num(L, k, stats_percentile(s, flat[i].p) / 1e3);
  }
}

static void push_result(lua_State *L, const struct stg_opts *o,
                        struct stg_result *r)
{
  double rt = (double)r->runtime_ns / 1e9;
  double el = rt > 0 ? rt : NAN;
  lua_newtable(L);
  strata_set_str(L, "rw", stg_rw_name(o->rw));
  strata_set_int(L, "bs", (lua_Integer)o->bs);
  strata_set_int(L, "iodepth", o->iodepth);
  strata_set_int(L, "numjobs", o->numjobs);
  strata_set_int(L, "io_bytes", (lua_Integer)r->bytes);
  strata_set_int(L, "total_ios", (lua_Integer)r->ios);
  strata_set_int(L, "runtime_ns", (lua_Integer)r->runtime_ns);
  strata_set_num(L, "runtime_s", rt);
  strata_set_num(L, "bw_bytes", (double)r->bytes / el);
  strata_set_num(L, "bw_mibps", (double)r->bytes / el / 1048576.0);
  strata_set_num(L, "iops", (double)r->ios / el);
  strata_set_num(L, "usr_cpu", r->usr_pct);
  strata_set_num(L, "sys_cpu", r->sys_pct);
  strata_set_int(L, "ctx", r->ctx);
  strata_set_num(L, "cpu_s", r->usr_s + r->sys_s);
  strata_set_num(L, "cpu_us_per_io",
                 r->ios ? (r->usr_s + r->sys_s) * 1e6 / (double)r->ios : NAN);
  strata_set_int(L, "verify_bytes", (lua_Integer)r->verify_bytes);
  strata_set_int(L, "verify_errors", (lua_Integer)r->verify_errors);
  if(r->verify_errors)
    strata_set_int(L, "first_bad_offset", (lua_Integer)r->first_bad_offset);
  strata_set_bool(L, "laid_out", r->laid_out);
  strata_set_bool(L, "direct", o->direct);
  strata_set_bool(L, "verify", o->verify);
  /* the batching in force, as fio clamps it (job.c), and the system
   * calls it made: one io_uring_enter per I/O at fio's defaults */
  strata_set_int(L, "iodepth_batch_submit", o->batch_submit);
  strata_set_int(L, "iodepth_batch_complete_min", o->batch_complete_min);
  strata_set_int(L, "iodepth_batch_complete_max", o->batch_complete_max);
  strata_set_int(L, "io_uring_enter_submit", (lua_Integer)r->enter_submit);
  strata_set_int(L, "io_uring_enter_wait", (lua_Integer)r->enter_wait);
  strata_set_num(L, "ios_per_submit", r->enter_submit
                 ? (double)r->ios / (double)r->enter_submit : NAN);
  set_lat(L, "slat", &r->slat, 0);
  set_lat(L, "clat", &r->clat, 1);
  set_lat(L, "lat", &r->lat, 1);
}

/* storage.run{filename=, rw=, bs=, iodepth=, numjobs=, size=, ...} */
static int l_run(lua_State *L)
{
  static const char *const keys[] = {
    "filename", "rw", "bs", "iodepth", "numjobs", "size", "offset", "ios",
    "runtime", "time_based", "direct", "verify", "end_fsync", "randseed",
    "cpus_allowed", "numa_cpu_nodes", "destructive", "iodepth_batch_submit",
    "iodepth_batch_complete_min", "iodepth_batch_complete_max", NULL
  };
  const char *fn = "storage.run";
  struct stg_opts o;
  struct stg_result r;
  struct stat st;
  char err[512], why[512];
  int *cpus;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  stg_opts_defaults(&o);
  o.filename = strata_opt_str(L, 1, fn, "filename", NULL);
  if(!o.filename)
    return luaL_error(L, "%s: option 'filename' is required", fn);
  const char *rw = strata_opt_str(L, 1, fn, "rw", "read");
  o.rw = stg_rw_parse(rw);
  if(o.rw < 0)
    return luaL_error(L, "%s: option 'rw': '%s' is not one of read, write, "
                      "randread, randwrite", fn, rw);
  o.bs = (size_t)opt_size(L, fn, "bs", 4096);
  if(!o.bs || o.bs % STG_SECTOR || o.bs > (64u << 20))
    return luaL_error(L, "%s: option 'bs': %zu is not a multiple of 512 up "
                      "to 64M", fn, o.bs);
  lua_Integer qd = strata_opt_int(L, 1, fn, "iodepth", 1);
  lua_Integer nj = strata_opt_int(L, 1, fn, "numjobs", 1);
  if(qd < 1 || qd > MAX_IODEPTH)
    return luaL_error(L, "%s: option 'iodepth' must be 1..%d", fn,
                      MAX_IODEPTH);
  if(nj < 1 || nj > 256)
    return luaL_error(L, "%s: option 'numjobs' must be 1..256", fn);
  o.iodepth = (unsigned)qd;
  o.numjobs = (unsigned)nj;
  opt_batch(L, fn, &o);
  stg_opts_fixup(&o);
  o.size = opt_size(L, fn, "size", 0);
  o.offset = opt_size(L, fn, "offset", 0);
  if(o.offset % STG_SECTOR)
    return luaL_error(L, "%s: option 'offset' must be a multiple of 512",
                      fn);
  o.ios = (uint64_t)strata_opt_int(L, 1, fn, "ios", 0);
  o.runtime_s = strata_opt_num(L, 1, fn, "runtime", 0);
  o.time_based = strata_opt_bool(L, 1, fn, "time_based", 0);
  if(o.time_based && !(o.runtime_s > 0))
    return luaL_error(L, "%s: time_based needs a runtime", fn);
  o.direct = strata_opt_bool(L, 1, fn, "direct", 1);
  o.verify = strata_opt_bool(L, 1, fn, "verify", 0);
  o.fsync_end = strata_opt_bool(L, 1, fn, "end_fsync", 0);
  o.seed = (uint64_t)strata_opt_int(L, 1, fn, "randseed", 0);
  cpus = lua_newuserdatauv(L, MAX_CPUS * sizeof(int), 0);
  o.ncpus = opt_cpus(L, fn, cpus);
  o.cpus = cpus;

  if(!stat(o.filename, &st) && S_ISBLK(st.st_mode)) {
    if(!strata_opt_bool(L, 1, fn, "destructive", 0))
      return luaL_error(L, "%s: %s is a block device: raw device tests run "
                        "only with destructive = true (the site's "
                        "storage.raw_device and storage.destructive)", fn,
                        o.filename);
    if(stg_device_in_use("", o.filename, why, sizeof(why)))
      return luaL_error(L, "%s: refusing raw I/O: %s", fn, why);
  }
  if(stg_run(&o, &r, err, sizeof(err))) {
    stg_result_free(&r);
    if(!strncmp(err, "open: ", 6) && strstr(err, "Invalid argument") &&
       o.direct)
      return luaL_error(L, "%s: %s (the filesystem may not support "
                        "O_DIRECT; direct = false is buffered)", fn, err);
    return luaL_error(L, "%s: %s", fn, err);
  }
  push_result(L, &o, &r);
  stg_result_free(&r);
  return 1;
}

/* storage.io_uring() -> true when this kernel lets us set up a ring (a
 * probe: seccomp and io_uring_disabled sysctl block it on some hosts). */
static int l_io_uring(lua_State *L)
{
  char err[256];
  int ok = !stg_probe_ring(err, sizeof(err));
  lua_pushboolean(L, ok);
  if(ok)
    return 1;
  lua_pushstring(L, err);
  return 2;
}

static const luaL_Reg storage_funcs[] = {
  { "run", l_run },
  { "io_uring", l_io_uring },
  { NULL, NULL }
};

int luaopen_strata_storage(lua_State *L)
{
  luaL_newlib(L, storage_funcs);
  return 1;
}
