/*
 * main.c - strata's entry point: make a Lua state, register every
 * primitive family as require "strata.<family>", find the Lua side
 * (lua/strata/...), and hand the command line to strata.cli.main.
 *
 * Everything after start-up is the runner's (lua/strata/runner.lua); C
 * keeps only what must not run in Lua: the primitives' hot loops.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "strata.h"
#include "version.h"

int luaopen_strata_core(lua_State *L);
int luaopen_cjson(lua_State *L);
#define STRATA_FAMILY(name) int luaopen_strata_##name(lua_State *L);
#include "families.h"
#undef STRATA_FAMILY

static void preload(lua_State *L, const char *name, lua_CFunction open)
{
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, open);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

static int is_dir_with(const char *dir, const char *file)
{
  char p[PATH_MAX];
  int n = snprintf(p, sizeof(p), "%s/%s", dir, file);
  if(n < 0 || (size_t)n >= sizeof(p))
    return 0;
  return access(p, R_OK) == 0;
}

/*
 * The strata home holds lua/ (and, by default, specs/): $STRATA_HOME,
 * else the binary's folder or its parent (bundle, build tree), else the
 * source tree the binary was built from.
 */
static int find_home(char *out, size_t len)
{
  const char *env = getenv("STRATA_HOME");
  char exe[PATH_MAX];
  ssize_t n;

  if(env && *env) {
    snprintf(out, len, "%s", env);
    return is_dir_with(out, "lua/strata/cli.lua");
  }
  n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if(n > 0) {
    char *slash;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if(slash)
      *slash = '\0';
    snprintf(out, len, "%s", exe);
    if(is_dir_with(out, "lua/strata/cli.lua"))
      return 1;
    if((size_t)snprintf(out, len, "%s/..", exe) < len &&
       is_dir_with(out, "lua/strata/cli.lua"))
      return 1;
  }
  snprintf(out, len, "%s", STRATA_SOURCE_DIR);
  return is_dir_with(out, "lua/strata/cli.lua");
}

/* Runs in protected mode: everything that can raise goes here. */
static int pmain(lua_State *L)
{
  int argc = (int)lua_tointeger(L, 1);
  char **argv = lua_touserdata(L, 2);
  char home[PATH_MAX];
  char real[PATH_MAX];

  luaL_openlibs(L);
  preload(L, "strata.core", luaopen_strata_core);
  preload(L, "cjson", luaopen_cjson);
#define STRATA_FAMILY(name) preload(L, "strata." #name, luaopen_strata_##name);
#include "families.h"
#undef STRATA_FAMILY

  if(!find_home(home, sizeof(home)))
    return luaL_error(L, "cannot find lua/strata/cli.lua (set STRATA_HOME)");
  if(realpath(home, real))
    snprintf(home, sizeof(home), "%s", real);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua", home, home);
  lua_setfield(L, -2, "path");
  lua_pushliteral(L, "");
  lua_setfield(L, -2, "cpath");  /* every C module is built in */
  lua_pop(L, 1);
  lua_pushstring(L, home);
  lua_setglobal(L, "STRATA_HOME");
  lua_pushliteral(L, STRATA_VERSION);
  lua_setglobal(L, "STRATA_VERSION");

  lua_getglobal(L, "require");
  lua_pushliteral(L, "strata.cli");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_createtable(L, argc, 0);
  for(int i = 1; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_call(L, 1, 1);
  return 1;
}

int main(int argc, char **argv)
{
  lua_State *L = luaL_newstate();
  int code = 1;

  if(!L) {
    fprintf(stderr, "strata: cannot create a Lua state\n");
    return 1;
  }
  lua_pushcfunction(L, strata_traceback);
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  if(lua_pcall(L, 2, 1, 1) != LUA_OK)
    fprintf(stderr, "strata: %s\n", lua_tostring(L, -1));
  else
    code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
  lua_close(L);
  return code;
}
