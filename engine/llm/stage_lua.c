/*
 * stage_lua.c - llm.stage{client, bucket, shards = {{key, size}, ...},
 * concurrency, memory = "host"|"cuda", device, chunk}: model staging time
 * on the s3 family's client (the s3.client userdata; stage.h).
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "s3_lua.h"
#include "stage.h"
#include "strata.h"

int llm_l_stage(lua_State *L)
{
  static const char *const keys[] = { "client", "bucket", "shards",
    "concurrency", "memory", "device", "chunk", NULL };
  static const char *fn = "llm.stage";
  struct llm_stage_opts o;
  struct llm_stage_result r;
  struct l_client *c;
  const char *mem;
  int rc;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  memset(&o, 0, sizeof(o));
  lua_getfield(L, 1, "client");
  c = s3l_check(L, -1, fn);
  lua_pop(L, 1);
  o.cfg = &c->cfg;
  o.bucket = strata_opt_str(L, 1, fn, "bucket", NULL);
  if(!o.bucket)
    return luaL_error(L, "%s: option 'bucket' is required", fn);
  o.concurrency = (int)strata_opt_int(L, 1, fn, "concurrency", 8);
  if(o.concurrency < 1 || o.concurrency > 1024)
    return luaL_error(L, "%s: option 'concurrency' must be 1..1024", fn);
  mem = strata_opt_str(L, 1, fn, "memory", "cuda");
  if(strcmp(mem, "host") && strcmp(mem, "cuda"))
    return luaL_error(L, "%s: option 'memory' must be \"host\" or "
                      "\"cuda\", got \"%s\"", fn, mem);
  o.gpu = !strcmp(mem, "cuda");
  o.device = (int)strata_opt_int(L, 1, fn, "device", 0);
  o.chunk = (size_t)strata_opt_int(L, 1, fn, "chunk", 8 << 20);
  if(o.chunk < 4096)
    return luaL_error(L, "%s: option 'chunk' must be >= 4096 bytes", fn);
  o.shards = s3l_check_objects(L, fn, "shards", &o.n);
  rc = llm_stage(&o, &r);
  if(rc == -2)
    return strata_skip(L, "memory = \"cuda\": %s", r.error);
  if(rc)
    return luaL_error(L, "%s: %s", fn, r.error);
  lua_createtable(L, 0, 8);
  strata_set_int(L, "shards", (lua_Integer)o.n);
  strata_set_int(L, "failed", (lua_Integer)r.failed);
  strata_set_int(L, "bytes", (lua_Integer)r.bytes);
  strata_set_num(L, "seconds", r.seconds);
  strata_set_num(L, "first_byte_s", r.first_byte_s);
  strata_set_num(L, "gbps", r.seconds > 0 ? (double)r.bytes * 8 / 1e9 /
                                            r.seconds : 0);
  strata_set_num(L, "copy_s", r.copy_s);
  strata_set_str(L, "memory", mem);
  if(r.error[0])
    strata_set_str(L, "error", r.error);
  return 1;
}
