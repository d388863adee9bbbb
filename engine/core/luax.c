/*
 * luax.c - small helpers over the Lua C API shared by every family's
 * binding: the SKIP error and option tables that reject unknown keys.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"

volatile int strata_stop_flag;

static int skip_tostring(lua_State *L)
{
  lua_getfield(L, 1, "skip");
  lua_pushfstring(L, "SKIP: %s", lua_tostring(L, -1));
  return 1;
}

int strata_skip(lua_State *L, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  lua_createtable(L, 0, 1);
  lua_pushstring(L, msg);
  lua_setfield(L, -2, "skip");
  if(luaL_newmetatable(L, "strata.skip")) {
    lua_pushcfunction(L, skip_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_setmetatable(L, -2);
  return lua_error(L);
}

int strata_traceback(lua_State *L)
{
  const char *msg = lua_tostring(L, 1);
  if(!msg) {
    if(luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

void strata_memo_call(lua_State *L, int memo, int fn, int idx)
{
  lua_pushvalue(L, idx);
  if(lua_rawget(L, memo) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushvalue(L, fn);
    lua_pushvalue(L, idx);
    lua_call(L, 1, 1);
  }
}

void strata_check_keys(lua_State *L, int idx, const char *fn,
                       const char *const allowed[])
{
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_pushnil(L);
  while(lua_next(L, idx)) {
    int known = 0;
    lua_pop(L, 1);
    if(lua_type(L, -1) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -1);
      for(int i = 0; allowed[i]; i++)
        if(!strcmp(k, allowed[i])) {
          known = 1;
          break;
        }
      if(!known)
        luaL_error(L, "%s: unknown option '%s'", fn, k);
    }
    else
      luaL_error(L, "%s: option keys must be names", fn);
  }
}

static int opt_field(lua_State *L, int idx, const char *field)
{
  if(lua_isnoneornil(L, idx))
    return LUA_TNIL;
  return lua_getfield(L, idx, field);
}

lua_Integer strata_opt_int(lua_State *L, int idx, const char *fn,
                           const char *field, lua_Integer def)
{
  idx = lua_absindex(L, idx);  /* the pushes below shift relative ones */
  int t = opt_field(L, idx, field);
  lua_Integer v = def;
  if(t == LUA_TNIL) {
    if(!lua_isnoneornil(L, idx))
      lua_pop(L, 1);
    return def;
  }
  if(!lua_isinteger(L, -1)) {
    lua_Number n = lua_tonumber(L, -1);
    if(t != LUA_TNUMBER || n != (lua_Number)(lua_Integer)n)
      luaL_error(L, "%s: option '%s' must be an integer, got %s", fn,
                 field, t == LUA_TNUMBER ? "a fraction" : lua_typename(L, t));
    v = (lua_Integer)n;
  }
  else
    v = lua_tointeger(L, -1);
  lua_pop(L, 1);
  return v;
}

lua_Number strata_opt_num(lua_State *L, int idx, const char *fn,
                          const char *field, lua_Number def)
{
  idx = lua_absindex(L, idx);  /* the pushes below shift relative ones */
  int t = opt_field(L, idx, field);
  lua_Number v = def;
  if(t == LUA_TNIL) {
    if(!lua_isnoneornil(L, idx))
      lua_pop(L, 1);
    return def;
  }
  if(t != LUA_TNUMBER)
    luaL_error(L, "%s: option '%s' must be a number, got %s", fn, field,
               lua_typename(L, t));
  v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

const char *strata_opt_str(lua_State *L, int idx, const char *fn,
                           const char *field, const char *def)
{
  idx = lua_absindex(L, idx);  /* the pushes below shift relative ones */
  int t = opt_field(L, idx, field);
  const char *v;
  if(t == LUA_TNIL) {
    if(!lua_isnoneornil(L, idx))
      lua_pop(L, 1);
    return def;
  }
  if(t != LUA_TSTRING)
    luaL_error(L, "%s: option '%s' must be a string, got %s", fn, field,
               lua_typename(L, t));
  /* The string stays alive: it is referenced by the options table. */
  v = lua_tostring(L, -1);
  lua_pop(L, 1);
  return v;
}

int strata_opt_bool(lua_State *L, int idx, const char *fn,
                    const char *field, int def)
{
  idx = lua_absindex(L, idx);  /* the pushes below shift relative ones */
  int t = opt_field(L, idx, field);
  int v;
  if(t == LUA_TNIL) {
    if(!lua_isnoneornil(L, idx))
      lua_pop(L, 1);
    return def;
  }
  if(t != LUA_TBOOLEAN)
    luaL_error(L, "%s: option '%s' must be a boolean, got %s", fn, field,
               lua_typename(L, t));
  v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

void strata_set_int(lua_State *L, const char *k, lua_Integer v)
{
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

void strata_set_num(lua_State *L, const char *k, lua_Number v)
{
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

void strata_set_str(lua_State *L, const char *k, const char *v)
{
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

void strata_set_bool(lua_State *L, const char *k, int v)
{
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}
