/*
 * fuzz_yaml.c - libFuzzer harness for strata.yaml.load (engine/yaml): the
 * loader every site, thresholds and spec-data file goes through.  Any
 * error it raises must be a "<file>:<line>:<col>: ..." message; the walk
 * after a load must end (aliases may share tables, never loop).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

int luaopen_strata_yaml(lua_State *L);

static lua_State *L;

static const char *DRIVER =
  "local yaml, data = require 'strata.yaml', ...\n"
  "local ok, doc, lines = pcall(yaml.load, data, 'fuzz.yaml')\n"
  "if not ok then\n"
  "  if type(doc) ~= 'string' or not doc:match('^fuzz%.yaml:%d+') then\n"
  "    error('bad error: ' .. tostring(doc), 0)\n"
  "  end\n"
  "  return\n"
  "end\n"
  "assert(type(doc) == 'table' and type(lines) == 'table')\n"
  "local seen, n = {}, 0\n"
  "local function walk(t)\n"
  "  if seen[t] then return end\n"
  "  seen[t] = true\n"
  "  for k, v in pairs(t) do\n"
  "    n = n + 1\n"
  "    if type(v) == 'table' then walk(v) end\n"
  "  end\n"
  "end\n"
  "walk(doc)\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "strata.yaml", luaopen_strata_yaml, 0);
  lua_pop(L, 1);
  if(luaL_loadstring(L, DRIVER))
    abort();
  lua_setglobal(L, "DRIVER");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  lua_getglobal(L, "DRIVER");
  lua_pushlstring(L, (const char *)data, size);
  if(lua_pcall(L, 1, 0, 0) != LUA_OK) {
    fprintf(stderr, "fuzz_yaml: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_settop(L, 0);
  lua_gc(L, LUA_GCSTEP, 0);
  return 0;
}
