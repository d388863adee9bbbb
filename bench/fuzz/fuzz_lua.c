/*
 * fuzz_lua.c - libFuzzer harness for the parsers written in Lua: the
 * input goes to one function of a strata Lua module through the same
 * embedded interpreter (Lua 5.4 + lua-cjson + strata.yaml) strata runs.
 *
 * Built once per target with -DFUZZ_TARGET=<name> (CMakeLists.txt):
 *   journal   strata.journal.read(<file holding the bytes>)
 *   perftest  strata.lib.perftest.parse_bw / parse_lat / parse_devinfo
 *   nccl      strata.lib.nccl.parse (+ summary)
 *   vllm      strata.lib.vllm.parse
 *
 * What counts as a finding: a sanitizer report, a hang, or a Lua error
 * raised by the VM (its message starts "<file>.lua:<line>:": indexing
 * nil, arithmetic on a string...).  A parser's own error(msg, 0) on bytes
 * it does not accept is its documented answer, not a finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

int luaopen_cjson(lua_State *L);
int luaopen_strata_yaml(lua_State *L);
int core_lua_denull(lua_State *L);      /* engine/core/walk_lua.c */
int core_lua_clean_copy(lua_State *L);

/* The part of "strata.core" the Lua parsers use (the journal's reader):
 * the table walks, without the rest of the core (fork, files). */
static int open_core_walks(lua_State *L)
{
  lua_newtable(L);
  lua_pushcfunction(L, core_lua_denull);
  lua_setfield(L, -2, "denull");
  lua_pushcfunction(L, core_lua_clean_copy);
  lua_setfield(L, -2, "clean_copy");
  return 1;
}

static lua_State *L;
static char journal_path[64];

/* Calls the target with the input string (upvalue-free chunk). */
static const char *DRIVER =
  "local data = ...\n"
#if defined(FUZZ_journal)
  "local j = require 'strata.journal'\n"
  "local f = assert(io.open(JOURNAL, 'wb')) f:write(data) f:close()\n"
  "local recs = j.read(JOURNAL)\n"
  "for _, r in ipairs(recs) do assert(type(r) == 'table') end\n"
#elif defined(FUZZ_perftest)
  "local p = require 'strata.lib.perftest'\n"
  "local which = data:byte(1) or 0\n"
  "local text = data:sub(2)\n"
  "if which % 3 == 0 then\n"
  "  for _, row in ipairs(p.parse_bw(text)) do pcall(p.gbps, row) end\n"
  "elseif which % 3 == 1 then p.parse_lat(text)\n"
  "else p.parse_devinfo(text) end\n"
#elif defined(FUZZ_nccl)
  "local n = require 'strata.lib.nccl'\n"
  "n.summary(n.parse(data))\n"
#elif defined(FUZZ_vllm)
  "local v = require 'strata.lib.vllm'\n"
  "local m = v.parse(data)\n"
  "v.gains(m, m)\n"
#else
#error "FUZZ_<target> not defined"
#endif
  ;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  L = luaL_newstate();
  luaL_openlibs(L);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_cjson);
  lua_setfield(L, -2, "cjson");
  lua_pushcfunction(L, luaopen_strata_yaml);
  lua_setfield(L, -2, "strata.yaml");
  lua_pushcfunction(L, open_core_walks);
  lua_setfield(L, -2, "strata.core");
  lua_pop(L, 1);
  /* modules from the source tree; stderr notes (skipped lines) muted */
  if(luaL_dostring(L, "package.path = '" STRATA_LUA_DIR "/?.lua;' .. package.path\n"
                      "io.stderr = { write = function(self) return self end }")) {
    fprintf(stderr, "fuzz_lua: %s\n", lua_tostring(L, -1));
    abort();
  }
  snprintf(journal_path, sizeof(journal_path), "/tmp/strata-fuzz-journal.%d",
           (int)getpid());
  lua_pushstring(L, journal_path);
  lua_setglobal(L, "JOURNAL");
  if(luaL_loadstring(L, DRIVER)) {
    fprintf(stderr, "fuzz_lua: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_setglobal(L, "DRIVER");
  return 0;
}

/*
 * "<chunk>.lua:12: attempt to ...": an error the VM (or an assert in the
 * driver) raised, not the parser: the message starts with a Lua source
 * position.  error(msg, 0) messages start with the parser's own words.
 */
static int vm_error(const char *msg)
{
  const char *p = msg;
  while(*p && *p != ' ' && *p != ':')
    p++;
  if(p - msg < 4 || strncmp(p - 4, ".lua", 4) || *p != ':')
    return 0;
  p++;
  if(*p < '0' || *p > '9')
    return 0;
  while(*p >= '0' && *p <= '9')
    p++;
  return *p == ':';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  lua_getglobal(L, "DRIVER");
  lua_pushlstring(L, (const char *)data, size);
  if(lua_pcall(L, 1, 0, 0) != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    if(!msg || vm_error(msg)) {
      fprintf(stderr, "fuzz_lua: Lua raised: %s\n", msg ? msg : "(non-string)");
      abort();
    }
    lua_pop(L, 1);
  }
  lua_settop(L, 0);
  lua_gc(L, LUA_GCSTEP, 0);
  return 0;
}
