/*
 * verbs_lua.c - require "strata.verbs" (binding; grows with the engines).
 */
#include <lua.h>
#include <lauxlib.h>

#include "strata.h"
#include "verbs.h"

static const luaL_Reg verbs_funcs[] = {
  {NULL, NULL}
};

int luaopen_strata_verbs(lua_State *L)
{
  luaL_newlib(L, verbs_funcs);
  return 1;
}
