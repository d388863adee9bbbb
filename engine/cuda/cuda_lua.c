/*
 * cuda_lua.c - "strata.cuda": the CUDA primitives and the NVML
 * inventory for specs.  Checks, converts and raises; the work is in
 * cuda.c, nvml.c and topo.c.  API by example: docs/gpu.md.
 *
 * A missing driver, GPU or build support raises SKIP with the reason.
 * CUDA starts lazily in the process that first needs it; cuda.available()
 * probes in a forked child and is safe in the runner's parent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"
#include "cuda.h"
#include "cufile.h"
#include "nvml.h"
#include "topo.h"

#define ERRLEN 512

/* Raise for a failed cuda_* call: SKIP when absent, error otherwise. */
static int raise_status(lua_State *L, int status, const char *fn,
                        const char *err)
{
  if(status == CUDA_ABSENT)
    return strata_skip(L, "%s", err);
  return luaL_error(L, "cuda.%s: %s", fn, err);
}

static int l_built(lua_State *L)
{
#ifdef STRATA_HAVE_CUDA
  lua_pushboolean(L, 1);
#else
  lua_pushboolean(L, 0);
#endif
  return 1;
}

/* cuda.available() -> true, count | false, reason (forked probe) */
static int l_available(lua_State *L)
{
  char err[ERRLEN];
  int n = 0, s = cuda_probe_forked(&n, err, sizeof(err));
  if(s == CUDA_OK) {
    lua_pushboolean(L, 1);
    lua_pushinteger(L, n);
  }
  else {
    lua_pushboolean(L, 0);
    lua_pushstring(L, err);
  }
  return 2;
}

static int l_count(lua_State *L)
{
  char err[ERRLEN];
  int n = 0, s = cuda_count(&n, err, sizeof(err));
  if(s != CUDA_OK)
    return raise_status(L, s, "count", err);
  lua_pushinteger(L, n);
  return 1;
}

static void push_device(lua_State *L, const struct cuda_device *d)
{
  char cc[16];
  lua_createtable(L, 0, 12);
  strata_set_int(L, "index", d->index);
  strata_set_str(L, "name", d->name);
  strata_set_str(L, "uuid", d->uuid);
  strata_set_str(L, "bus_id", d->bus_id);
  snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
  strata_set_str(L, "cc", cc);
  strata_set_int(L, "sms", d->sms);
  strata_set_int(L, "mem_total", d->mem_total);
  strata_set_int(L, "numa_node", d->numa_node);
  strata_set_bool(L, "dmabuf", d->dmabuf);
  strata_set_int(L, "driver_version", d->driver_version);
  strata_set_int(L, "runtime_version", d->runtime_version);
}

/* cuda.devices() -> { {index=0, name=..., uuid=..., bus_id=...}, ... } */
static int l_devices(lua_State *L)
{
  char err[ERRLEN];
  int n = 0, s = cuda_count(&n, err, sizeof(err));
  if(s != CUDA_OK)
    return raise_status(L, s, "devices", err);
  lua_createtable(L, n, 0);
  for(int i = 0; i < n; i++) {
    struct cuda_device d;
    s = cuda_device_info(i, &d, err, sizeof(err));
    if(s != CUDA_OK)
      return raise_status(L, s, "devices", err);
    push_device(L, &d);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* --- buffers ----------------------------------------------------------- */
static struct cuda_buffer *checkbuf(lua_State *L, int idx)
{
  struct cuda_buffer *b = luaL_checkudata(L, idx, CUDA_BUFFER_META);
  if(!b->ptr)
    luaL_error(L, "cuda.buffer: used after close");
  return b;
}

static int buf_close(lua_State *L)
{
  struct cuda_buffer *b = luaL_checkudata(L, 1, CUDA_BUFFER_META);
  cuda_free(&b->ptr, (enum cuda_mem_kind)b->kind);
  return 0;
}

/* cuda.alloc{device=0, size=N, kind="device"|"pinned"} -> buffer */
static int l_alloc(lua_State *L)
{
  static const char *const keys[] = { "device", "size", "kind", NULL };
  static const char *const kinds[] = { "device", "pinned", NULL };
  char err[ERRLEN];
  struct cuda_buffer *b;
  const char *k;
  lua_Integer dev, size;
  int kind = -1, s;

  strata_check_keys(L, 1, "cuda.alloc", keys);
  dev = strata_opt_int(L, 1, "cuda.alloc", "device", 0);
  size = strata_opt_int(L, 1, "cuda.alloc", "size", 0);
  k = strata_opt_str(L, 1, "cuda.alloc", "kind", "device");
  for(int i = 0; kinds[i]; i++)
    if(!strcmp(k, kinds[i]))
      kind = i;
  if(kind < 0)
    return luaL_error(L, "cuda.alloc: kind must be 'device' or 'pinned', "
                      "not '%s'", k);
  if(size <= 0)
    return luaL_error(L, "cuda.alloc: size must be > 0");
  b = lua_newuserdatauv(L, sizeof(*b), 0);
  memset(b, 0, sizeof(*b));
  luaL_setmetatable(L, CUDA_BUFFER_META);
  s = cuda_alloc((int)dev, (size_t)size, (enum cuda_mem_kind)kind, &b->ptr,
                 err, sizeof(err));
  if(s != CUDA_OK)
    return raise_status(L, s, "alloc", err);
  b->size = (size_t)size;
  b->kind = kind;
  b->device = (int)dev;
  return 1;
}

static int buf_ptr(lua_State *L)
{
  lua_pushinteger(L, (lua_Integer)(uintptr_t)checkbuf(L, 1)->ptr);
  return 1;
}

static int buf_size(lua_State *L)
{
  lua_pushinteger(L, (lua_Integer)checkbuf(L, 1)->size);
  return 1;
}

static int buf_info(lua_State *L)
{
  struct cuda_buffer *b = checkbuf(L, 1);
  lua_createtable(L, 0, 4);
  strata_set_int(L, "ptr", (lua_Integer)(uintptr_t)b->ptr);
  strata_set_int(L, "size", (lua_Integer)b->size);
  strata_set_str(L, "kind", b->kind == CUDA_MEM_DEVICE ? "device" : "pinned");
  strata_set_int(L, "device", b->device);
  return 1;
}

static size_t check_range(lua_State *L, struct cuda_buffer *b, int oi,
                          lua_Integer n)
{
  lua_Integer off = luaL_checkinteger(L, oi);
  if(off < 0 || n < 0 || (size_t)off > b->size ||
     (size_t)n > b->size - (size_t)off)
    luaL_error(L, "cuda.buffer: range %I + %I outside %I bytes", off, n,
               (lua_Integer)b->size);
  return (size_t)off;
}

/* buf:write(offset, string): copy bytes into the buffer */
static int buf_write(lua_State *L)
{
  struct cuda_buffer *b = checkbuf(L, 1);
  size_t n;
  const char *s = luaL_checklstring(L, 3, &n);
  size_t off = check_range(L, b, 2, (lua_Integer)n);
  char err[ERRLEN];
  int st = cuda_copy((char *)b->ptr + off, s, n, err, sizeof(err));
  if(st != CUDA_OK)
    return raise_status(L, st, "buffer.write", err);
  return 0;
}

/* buf:read(offset, len) -> string */
static int buf_read(lua_State *L)
{
  struct cuda_buffer *b = checkbuf(L, 1);
  lua_Integer n = luaL_checkinteger(L, 3);
  size_t off = check_range(L, b, 2, n);
  char err[ERRLEN];
  luaL_Buffer lb;
  char *p = luaL_buffinitsize(L, &lb, (size_t)n);
  int st = cuda_copy(p, (char *)b->ptr + off, (size_t)n, err, sizeof(err));
  if(st != CUDA_OK)
    return raise_status(L, st, "buffer.read", err);
  luaL_pushresultsize(&lb, (size_t)n);
  return 1;
}

/* buf:fill(byte) */
static int buf_fill(lua_State *L)
{
  struct cuda_buffer *b = checkbuf(L, 1);
  int byte = (int)luaL_checkinteger(L, 2);
  char err[ERRLEN];
  int st = CUDA_OK;
  if(b->kind == CUDA_MEM_PINNED)
    memset(b->ptr, byte, b->size);
  else
    st = cuda_memset(b->device, b->ptr, byte, b->size, err, sizeof(err));
  if(st != CUDA_OK)
    return raise_status(L, st, "buffer.fill", err);
  return 0;
}

/* buf:dmabuf() -> {fd=, offset=, length=}; the caller closes fd */
static int buf_dmabuf(lua_State *L)
{
  struct cuda_buffer *b = checkbuf(L, 1);
  char err[ERRLEN];
  int fd = -1, st;
  uint64_t off = 0, len = 0;
  if(b->kind != CUDA_MEM_DEVICE)
    return luaL_error(L, "cuda.buffer.dmabuf: a pinned host buffer has no "
                      "dma-buf (register host memory directly)");
  st = cuda_dmabuf_export(b->ptr, b->size, &fd, &off, &len, err,
                          sizeof(err));
  if(st != CUDA_OK)
    return raise_status(L, st, "buffer.dmabuf", err);
  lua_createtable(L, 0, 3);
  strata_set_int(L, "fd", fd);
  strata_set_int(L, "offset", (lua_Integer)off);
  strata_set_int(L, "length", (lua_Integer)len);
  return 1;
}

/* --- measurements ------------------------------------------------------ */
/* cuda.copy_bw{dir=, device=, peer=, size=, warmup=, repeats=, verify=} */
static int l_copy_bw(lua_State *L)
{
  static const char *const keys[] = { "dir", "device", "peer", "size",
    "warmup", "repeats", "verify", NULL };
  static const char *const dirs[] = { "h2d", "d2h", "d2d", "p2p", NULL };
  struct cuda_copy_opts o;
  struct cuda_copy_result r;
  char err[ERRLEN];
  const char *d;
  int st;

  strata_check_keys(L, 1, "cuda.copy_bw", keys);
  memset(&o, 0, sizeof(o));
  d = strata_opt_str(L, 1, "cuda.copy_bw", "dir", NULL);
  o.dir = (enum cuda_copy_dir)-1;
  for(int i = 0; d && dirs[i]; i++)
    if(!strcmp(d, dirs[i]))
      o.dir = (enum cuda_copy_dir)i;
  if((int)o.dir < 0)
    return luaL_error(L, "cuda.copy_bw: dir must be h2d, d2h, d2d or p2p");
  o.device = (int)strata_opt_int(L, 1, "cuda.copy_bw", "device", 0);
  o.peer = (int)strata_opt_int(L, 1, "cuda.copy_bw", "peer", -1);
  o.size = (size_t)strata_opt_int(L, 1, "cuda.copy_bw", "size", 64 << 20);
  o.warmup = (int)strata_opt_int(L, 1, "cuda.copy_bw", "warmup", 3);
  o.repeats = (int)strata_opt_int(L, 1, "cuda.copy_bw", "repeats", 20);
  o.verify = strata_opt_bool(L, 1, "cuda.copy_bw", "verify", 1);
  if(o.dir == CUDA_COPY_P2P && o.peer < 0)
    return luaL_error(L, "cuda.copy_bw: dir 'p2p' needs peer");
  st = cuda_copy_bw(&o, &r, err, sizeof(err));
  if(st != CUDA_OK)
    return raise_status(L, st, "copy_bw", err);
  lua_createtable(L, 0, 9);
  strata_set_str(L, "dir", d);
  strata_set_int(L, "size", (lua_Integer)o.size);
  strata_set_num(L, "median_ms", r.median_ms);
  strata_set_num(L, "min_ms", r.min_ms);
  strata_set_num(L, "max_ms", r.max_ms);
  strata_set_num(L, "gbps", r.gbps);
  strata_set_num(L, "gbps_best", r.gbps_best);
  strata_set_bool(L, "verified", r.verified);
  if(o.dir == CUDA_COPY_P2P)
    strata_set_bool(L, "peer_access", r.peer_access);
  return 1;
}

/* cuda.cufile{path=, dir="read"|"write", size=, offset=0, device=0,
 * chunk=16 MiB, direct=true, verify=true}: cufile.h */
static int l_cufile(lua_State *L)
{
  static const char *const keys[] = { "path", "dir", "size", "offset",
    "device", "chunk", "direct", "verify", NULL };
  static const char *fn = "cuda.cufile";
  struct cufile_opts o;
  struct cufile_result r;
  char err[ERRLEN];
  const char *d;
  int st;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  memset(&o, 0, sizeof(o));
  o.path = strata_opt_str(L, 1, fn, "path", NULL);
  if(!o.path)
    return luaL_error(L, "%s: option 'path' is required", fn);
  d = strata_opt_str(L, 1, fn, "dir", "read");
  if(strcmp(d, "read") && strcmp(d, "write"))
    return luaL_error(L, "%s: option 'dir' must be \"read\" or \"write\", "
                      "got \"%s\"", fn, d);
  o.write = !strcmp(d, "write");
  if(strata_opt_int(L, 1, fn, "size", 0) <= 0)
    return luaL_error(L, "%s: option 'size' must be > 0 bytes", fn);
  o.size = (uint64_t)strata_opt_int(L, 1, fn, "size", 0);
  o.offset = (uint64_t)strata_opt_int(L, 1, fn, "offset", 0);
  o.device = (int)strata_opt_int(L, 1, fn, "device", 0);
  o.chunk = (size_t)strata_opt_int(L, 1, fn, "chunk", 16 << 20);
  if(o.chunk < 4096)
    return luaL_error(L, "%s: option 'chunk' must be >= 4096 bytes", fn);
  o.direct = strata_opt_bool(L, 1, fn, "direct", 1);
  o.verify = strata_opt_bool(L, 1, fn, "verify", 1);
  st = cufile_io(&o, &r, err, sizeof(err));
  if(st != CUDA_OK)
    return raise_status(L, st, "cufile", err);
  lua_createtable(L, 0, 12);
  strata_set_str(L, "dir", d);
  strata_set_int(L, "bytes", (lua_Integer)r.bytes);
  strata_set_num(L, "seconds", r.seconds);
  strata_set_num(L, "mibps", r.seconds > 0 ?
                 (double)r.bytes / r.seconds / (1024.0 * 1024.0) : 0);
  strata_set_num(L, "register_s", r.register_s);
  strata_set_str(L, "mode", r.mode);
  strata_set_int(L, "version", r.version);
  strata_set_bool(L, "buf_registered", r.buf_registered);
  strata_set_bool(L, "direct", r.direct);
  strata_set_bool(L, "verified", r.verified);
  strata_set_int(L, "verify_errors", (lua_Integer)r.verify_errors);
  if(r.verify_errors)
    strata_set_int(L, "first_bad_offset", (lua_Integer)r.first_bad);
  return 1;
}

/* cuda.kernel_check{device=0, n=, rounds=, seed=} */
static int l_kernel_check(lua_State *L)
{
  static const char *const keys[] = { "device", "n", "rounds", "seed",
    NULL };
  struct cuda_kernel_result r;
  char err[ERRLEN];
  int dev, st;
  lua_Integer n, rounds, seed;

  if(lua_isnoneornil(L, 1))
    lua_newtable(L);
  strata_check_keys(L, 1, "cuda.kernel_check", keys);
  dev = (int)strata_opt_int(L, 1, "cuda.kernel_check", "device", 0);
  n = strata_opt_int(L, 1, "cuda.kernel_check", "n", 1 << 22);
  rounds = strata_opt_int(L, 1, "cuda.kernel_check", "rounds", 16);
  seed = strata_opt_int(L, 1, "cuda.kernel_check", "seed",
                        (lua_Integer)getpid());
  if(n <= 0 || rounds <= 0)
    return luaL_error(L, "cuda.kernel_check: n and rounds must be > 0");
  st = cuda_kernel_check(dev, (size_t)n, (unsigned)rounds, (uint64_t)seed,
                         &r, err, sizeof(err));
  if(st != CUDA_OK)
    return raise_status(L, st, "kernel_check", err);
  lua_createtable(L, 0, 6);
  strata_set_int(L, "n", (lua_Integer)r.n);
  strata_set_int(L, "mismatches", (lua_Integer)r.mismatches);
  if(r.mismatches)
    strata_set_int(L, "first_bad", (lua_Integer)r.first_bad);
  strata_set_num(L, "kernel_ms", r.kernel_ms);
  strata_set_num(L, "gops", r.gops);
  strata_set_bool(L, "ok", r.mismatches == 0);
  return 1;
}

/* --- NVML -------------------------------------------------------------- */
static void set_ll(lua_State *L, const char *k, long long v)
{
  if(v >= 0)  /* unknown (-1) stays absent */
    strata_set_int(L, k, (lua_Integer)v);
}

static void push_gpu(lua_State *L, const struct nvml_gpu *g)
{
  lua_createtable(L, 0, 40);
  strata_set_int(L, "index", g->index);
  strata_set_str(L, "name", g->name);
  strata_set_str(L, "uuid", g->uuid);
  strata_set_str(L, "bus_id", g->bus_id);
  strata_set_int(L, "pci_device_id", g->pci_device_id);
  set_ll(L, "mem_total", g->mem_total);
  set_ll(L, "mem_used", g->mem_used);
  if(g->ecc_enabled >= 0)
    strata_set_bool(L, "ecc_enabled", g->ecc_enabled);
  set_ll(L, "ecc_corrected_volatile", g->ecc_corrected_volatile);
  set_ll(L, "ecc_uncorrected_volatile", g->ecc_uncorrected_volatile);
  set_ll(L, "ecc_corrected_aggregate", g->ecc_corrected_aggregate);
  set_ll(L, "ecc_uncorrected_aggregate", g->ecc_uncorrected_aggregate);
  set_ll(L, "retired_sbe", g->retired_sbe);
  set_ll(L, "retired_dbe", g->retired_dbe);
  set_ll(L, "retired_pending", g->retired_pending);
  set_ll(L, "remapped_corr", g->remapped_corr);
  set_ll(L, "remapped_unc", g->remapped_unc);
  set_ll(L, "remap_pending", g->remap_pending);
  set_ll(L, "remap_failure", g->remap_failure);
  set_ll(L, "sm_clock", g->sm_clock);
  set_ll(L, "mem_clock", g->mem_clock);
  set_ll(L, "sm_clock_max", g->sm_clock_max);
  set_ll(L, "mem_clock_max", g->mem_clock_max);
  set_ll(L, "sm_clock_app", g->sm_clock_app);
  set_ll(L, "mem_clock_app", g->mem_clock_app);
  if(g->persistence >= 0)
    strata_set_bool(L, "persistence", g->persistence);
  if(g->power_w >= 0)
    strata_set_num(L, "power_w", g->power_w);
  if(g->power_limit_w >= 0)
    strata_set_num(L, "power_limit_w", g->power_limit_w);
  set_ll(L, "temp_c", g->temp_c);
  set_ll(L, "pcie_gen", g->pcie_gen);
  set_ll(L, "pcie_width", g->pcie_width);
  set_ll(L, "pcie_gen_max", g->pcie_gen_max);
  set_ll(L, "pcie_width_max", g->pcie_width_max);
  set_ll(L, "pcie_gen_gpu_max", g->pcie_gen_gpu_max);
  set_ll(L, "pcie_replay", g->pcie_replay);
  if(g->pcie_gen_max > 0 && g->pcie_width_max > 0)
    strata_set_num(L, "pcie_max_gbps",
                   topo_pcie_gbps(g->pcie_gen_max, g->pcie_width_max));
  strata_set_int(L, "numa_node", g->numa_node);
  strata_set_str(L, "cpu_affinity", g->cpu_affinity);
  strata_set_int(L, "nvlinks", g->nvlinks);
  lua_createtable(L, g->nvlinks, 0);
  for(int l = 0, k = 0; l < NVML_LINK_MAX; l++) {
    if(!g->link_active[l])
      continue;
    lua_createtable(L, 0, 3);
    strata_set_int(L, "link", l);
    strata_set_str(L, "remote", g->link_remote[l]);
    strata_set_int(L, "remote_type", g->link_remote_type[l]);
    lua_rawseti(L, -2, ++k);
  }
  lua_setfield(L, -2, "links");
}

static void push_topology(lua_State *L, const struct nvml_inventory *inv)
{
  lua_createtable(L, 0, 2);
  lua_createtable(L, inv->count, 0);
  for(int i = 0; i < inv->count; i++) {
    lua_createtable(L, inv->count, 0);
    for(int j = 0; j < inv->count; j++) {
      char lab[TOPO_LABEL_LEN];
      topo_label(inv, i, j, lab, sizeof(lab));
      lua_pushstring(L, lab);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "labels");
  lua_createtable(L, inv->count, 0);
  for(int i = 0; i < inv->count; i++) {
    lua_createtable(L, inv->count, 0);
    for(int j = 0; j < inv->count; j++) {
      lua_pushinteger(L, inv->level[i][j]);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "levels");
}

/* cuda.nvml() -> { driver=, nvml_version=, cuda_driver=, count=,
 *                  gpus={...}, topology={labels=, levels=} } */
static int l_nvml(lua_State *L)
{
  char err[ERRLEN];
  struct nvml_inventory *inv = malloc(sizeof(*inv));
  int s;
  if(!inv)
    return luaL_error(L, "cuda.nvml: out of memory");
  s = nvml_inventory(inv, err, sizeof(err));
  if(s != NVML_OK) {
    free(inv);
    if(s == NVML_ABSENT)
      return strata_skip(L, "%s", err);
    return luaL_error(L, "cuda.nvml: %s", err);
  }
  lua_createtable(L, 0, 6);
  strata_set_str(L, "driver", inv->driver);
  strata_set_str(L, "nvml_version", inv->nvml_version);
  strata_set_int(L, "cuda_driver", inv->cuda_driver);
  strata_set_int(L, "count", inv->count);
  lua_createtable(L, inv->count, 0);
  for(int i = 0; i < inv->count; i++) {
    push_gpu(L, &inv->gpu[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "gpus");
  push_topology(L, inv);
  lua_setfield(L, -2, "topology");
  free(inv);
  return 1;
}

/* cuda.nvml_sample() -> { {index=0, gpu_util_pct=, ...}, ... }
 * Unknown values are absent.  For the counter sampler. */
static int l_nvml_sample(lua_State *L)
{
  struct nvml_sample s[NVML_GPU_MAX];
  char err[ERRLEN];
  int n = nvml_sample(s, NVML_GPU_MAX, err, sizeof(err));
  if(n == -NVML_ABSENT)
    return strata_skip(L, "%s", err);
  if(n < 0)
    return luaL_error(L, "cuda.nvml_sample: %s", err);
  lua_createtable(L, n, 0);
  for(int i = 0; i < n; i++) {
    lua_createtable(L, 0, 8);
    strata_set_int(L, "index", s[i].index);
#define SET(f) if(s[i].f >= 0) strata_set_num(L, #f, s[i].f)
    SET(gpu_util_pct);
    SET(mem_util_pct);
    SET(power_w);
    SET(sm_clock_mhz);
    SET(pcie_tx_mbps);
    SET(pcie_rx_mbps);
    SET(mem_used_bytes);
#undef SET
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* cuda.xids{wait_ms=0} -> { nvml_xids=, nvml_first=, kmsg_xids=,
 *   kmsg_last=, nvml_error=, kmsg_error= } (either source may be absent) */
static int l_xids(lua_State *L)
{
  static const char *const keys[] = { "wait_ms", NULL };
  char err[ERRLEN], last[256];
  int wait_ms = 0, xids = 0, s, k;
  long long first = -1;

  if(!lua_isnoneornil(L, 1)) {
    strata_check_keys(L, 1, "cuda.xids", keys);
    wait_ms = (int)strata_opt_int(L, 1, "cuda.xids", "wait_ms", 0);
  }
  lua_createtable(L, 0, 6);
  s = nvml_watch_xids(wait_ms, &xids, &first, err, sizeof(err));
  if(s == NVML_OK) {
    strata_set_int(L, "nvml_xids", xids);
    if(first >= 0)
      strata_set_int(L, "nvml_first", (lua_Integer)first);
  }
  else
    strata_set_str(L, "nvml_error", err);
  k = nvml_kmsg_xids(last, sizeof(last), err, sizeof(err));
  if(k >= 0) {
    strata_set_int(L, "kmsg_xids", k);
    if(k > 0)
      strata_set_str(L, "kmsg_last", last);
  }
  else
    strata_set_str(L, "kmsg_error", err);
  return 1;
}

/* --- topology logic on recorded data ------------------------------------ */
static int get_int_field(lua_State *L, int idx, const char *k, int def)
{
  int v = def;
  if(lua_getfield(L, idx, k) == LUA_TNUMBER)
    v = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

/* Fill inv from a table shaped like cuda.nvml()'s (gpus, topology.levels). */
static void inventory_from_table(lua_State *L, int idx,
                                 struct nvml_inventory *inv)
{
  int n, top = lua_gettop(L);
  luaL_checktype(L, idx, LUA_TTABLE);
  if(lua_getfield(L, idx, "gpus") != LUA_TTABLE)
    luaL_error(L, "cuda.topo_labels: inventory has no gpus list");
  n = (int)luaL_len(L, -1);
  if(n > NVML_GPU_MAX)
    luaL_error(L, "cuda.topo_labels: %d GPUs (max %d)", n, NVML_GPU_MAX);
  inv->count = n;
  for(int i = 0; i < n; i++) {
    struct nvml_gpu *g = &inv->gpu[i];
    lua_rawgeti(L, -1, i + 1);
    if(lua_getfield(L, -1, "bus_id") == LUA_TSTRING)
      snprintf(g->bus_id, sizeof(g->bus_id), "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    for(int l = 0; l < NVML_LINK_MAX; l++)
      g->link_remote_type[l] = -1;
    if(lua_getfield(L, -1, "links") == LUA_TTABLE) {
      int nl = (int)luaL_len(L, -1);
      for(int k = 1; k <= nl; k++) {
        int link;
        lua_rawgeti(L, -1, k);
        link = get_int_field(L, -1, "link", -1);
        if(link < 0 || link >= NVML_LINK_MAX)
          luaL_error(L, "cuda.topo_labels: gpu %d link %d out of range",
                     i, link);
        g->link_active[link] = 1;
        g->nvlinks++;
        g->link_remote_type[link] = get_int_field(L, -1, "remote_type", -1);
        if(lua_getfield(L, -1, "remote") == LUA_TSTRING)
          snprintf(g->link_remote[link], sizeof(g->link_remote[0]), "%s",
                   lua_tostring(L, -1));
        lua_pop(L, 2);
      }
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  for(int i = 0; i < n; i++)
    for(int j = 0; j < n; j++)
      inv->level[i][j] = i == j ? 0 : -1;
  if(lua_getfield(L, idx, "topology") == LUA_TTABLE &&
     lua_getfield(L, -1, "levels") == LUA_TTABLE) {
    for(int i = 0; i < n; i++) {
      lua_rawgeti(L, -1, i + 1);
      for(int j = 0; j < n && lua_istable(L, -1); j++) {
        lua_rawgeti(L, -1, j + 1);
        if(lua_isinteger(L, -1))
          inv->level[i][j] = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
}

/* cuda.topo_labels(inventory) -> {{"X","NV18"},...} from recorded data */
static int l_topo_labels(lua_State *L)
{
  struct nvml_inventory *inv;
  lua_settop(L, 1);
  /* A userdata, not malloc: a raise while reading must not leak it. */
  inv = lua_newuserdatauv(L, sizeof(*inv), 0);
  memset(inv, 0, sizeof(*inv));
  inventory_from_table(L, 1, inv);
  lua_createtable(L, inv->count, 0);
  for(int i = 0; i < inv->count; i++) {
    lua_createtable(L, inv->count, 0);
    for(int j = 0; j < inv->count; j++) {
      char lab[TOPO_LABEL_LEN];
      topo_label(inv, i, j, lab, sizeof(lab));
      lua_pushstring(L, lab);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

/* cuda.topo_parse(text) -> {n=, labels=, cpu_affinity=, numa_affinity=,
 *   nics=}; raises "cuda.topo_parse: line N: ..." on malformed text */
static int l_topo_parse(lua_State *L)
{
  const char *text = luaL_checkstring(L, 1);
  struct topo_table *t = lua_newuserdatauv(L, sizeof(*t), 0);
  char err[ERRLEN];
  if(topo_parse_smi(text, t, err, sizeof(err)) < 0)
    return luaL_error(L, "cuda.topo_parse: %s", err);
  lua_createtable(L, 0, 5);
  strata_set_int(L, "n", t->n);
  strata_set_int(L, "nics", t->nics);
  lua_createtable(L, t->n, 0);
  for(int i = 0; i < t->n; i++) {
    lua_createtable(L, t->n, 0);
    for(int j = 0; j < t->n; j++) {
      lua_pushstring(L, t->label[i][j]);
      lua_rawseti(L, -2, j + 1);
    }
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "labels");
  lua_createtable(L, t->n, 0);
  for(int i = 0; i < t->n; i++) {
    lua_pushstring(L, t->cpu_affinity[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "cpu_affinity");
  lua_createtable(L, t->n, 0);
  for(int i = 0; i < t->n; i++) {
    lua_pushstring(L, t->numa_affinity[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "numa_affinity");
  return 1;
}

/* cuda.pcie_gbps(gen, width) -> GB/s one direction */
static int l_pcie_gbps(lua_State *L)
{
  int gen = (int)luaL_checkinteger(L, 1);
  int width = (int)luaL_checkinteger(L, 2);
  lua_pushnumber(L, topo_pcie_gbps(gen, width));
  return 1;
}

static const luaL_Reg buf_methods[] = {
  { "ptr", buf_ptr }, { "size", buf_size }, { "info", buf_info },
  { "write", buf_write }, { "read", buf_read }, { "fill", buf_fill },
  { "dmabuf", buf_dmabuf }, { "close", buf_close }, { NULL, NULL }
};

static const luaL_Reg funcs[] = {
  { "built", l_built }, { "available", l_available }, { "count", l_count },
  { "devices", l_devices }, { "alloc", l_alloc }, { "copy_bw", l_copy_bw },
  { "kernel_check", l_kernel_check }, { "cufile", l_cufile },
  { "nvml", l_nvml },
  { "nvml_sample", l_nvml_sample }, { "xids", l_xids },
  { "topo_labels", l_topo_labels }, { "topo_parse", l_topo_parse },
  { "pcie_gbps", l_pcie_gbps }, { NULL, NULL }
};

int luaopen_strata_cuda(lua_State *L)
{
  if(luaL_newmetatable(L, CUDA_BUFFER_META)) {
    luaL_newlib(L, buf_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, buf_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, buf_close);
    lua_setfield(L, -2, "__close");
  }
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}
