/*
 * json_lua.c - core.denull(v): a table decoded by lua-cjson made the way
 * strata reads JSON (lua/strata/journal.lua): JSON null (cjson.null, a
 * NULL light userdata) removed, and whole numbers as integers (lua-cjson
 * reads every number as a float: a chart's column index 1 must stay 1, not
 * 1.0; a float with no integer of the same value stays a float).  In
 * place, nested tables too; returns v.  In C because `strata report`
 * reads every value of every journal record through it
 * (docs/performance.md, "Runner").
 */
#include <lua.h>
#include <lauxlib.h>

#include "strata.h"

static void denull(lua_State *L, int t)
{
  luaL_checkstack(L, 4, "core.denull: nested too deep");
  lua_pushnil(L);
  while(lua_next(L, t)) {
    int ty = lua_type(L, -1);
    if(ty == LUA_TLIGHTUSERDATA && !lua_touserdata(L, -1)) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, t);  /* clearing a field while traversing is allowed */
    }
    else if(ty == LUA_TNUMBER && !lua_isinteger(L, -1)) {
      int exact;
      lua_Integer i = lua_tointegerx(L, -1, &exact);  /* math.tointeger */
      lua_pop(L, 1);
      if(exact) {
        lua_pushvalue(L, -1);
        lua_pushinteger(L, i);
        lua_rawset(L, t);
      }
    }
    else {
      if(ty == LUA_TTABLE)
        denull(L, lua_gettop(L));
      lua_pop(L, 1);
    }
  }
}

int core_lua_denull(lua_State *L)
{
  lua_settop(L, 1);
  if(lua_type(L, 1) == LUA_TTABLE)
    denull(L, 1);
  return 1;
}
