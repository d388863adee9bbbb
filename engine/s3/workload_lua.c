/*
 * workload_lua.c - cl:run{...} and s3.scrape (work in progress).
 */
#include <lua.h>
#include <lauxlib.h>

#include "s3_lua.h"

int s3l_run(lua_State *L)
{
  return luaL_error(L, "s3.run: not written yet");
}

int s3l_scrape(lua_State *L)
{
  return luaL_error(L, "s3.scrape: not written yet");
}
