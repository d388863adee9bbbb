/*
 * fleet_lua.c - require "strata.fleet": a group of child processes read
 * line by line as they write (fleet.h), for the fleet launcher.
 *
 *   local g <close> = fleet.group()
 *   local id = g:spawn{ cmd = {"srun", ...}, env = {NAME = "v"},
 *                       stdin = "bytes" }            -- 1, 2, ...
 *   local ev = g:next(timeout_s)   -- nil on timeout or when none is left
 *     -- { id = 1, stream = "stdout"|"stderr", line = "..." }
 *     -- { id = 1, exit = code, signal = n }   (once, after its output)
 *   g:kill(id, "TERM"|"KILL"|"INT"|"STOP"|"CONT")   g:running()  g:close()
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"
#include "fleet.h"
#include "sys_lua.h"

#define GROUP_MT "strata.fleet.group"

struct lgroup {
  struct fleet_group g;
  int closed;
};

static struct lgroup *check_open(lua_State *L)
{
  struct lgroup *u = luaL_checkudata(L, 1, GROUP_MT);
  if(u->closed)
    luaL_error(L, "fleet.group: used after close");
  return u;
}

static int l_group(lua_State *L)
{
  struct lgroup *u = lua_newuserdatauv(L, sizeof(*u), 0);
  memset(u, 0, sizeof(*u));
  luaL_setmetatable(L, GROUP_MT);
  return 1;
}

static int l_spawn(lua_State *L)
{
  static const char *const keys[] = { "cmd", "env", "stdin", NULL };
  const char *fn = "fleet.spawn";
  struct lgroup *u = check_open(L);
  char **argv, **envp;
  const char *in = NULL;
  size_t in_len = 0;
  int id;

  luaL_checktype(L, 2, LUA_TTABLE);
  strata_check_keys(L, 2, fn, keys);
  argv = sys_l_check_cmd(L, 2, fn);
  envp = sys_l_build_env(L, 2, fn);
  if(lua_getfield(L, 2, "stdin") == LUA_TSTRING)
    in = lua_tolstring(L, -1, &in_len);
  else if(!lua_isnil(L, -1))
    return luaL_error(L, "%s: option 'stdin' must be a string", fn);
  id = fleet_spawn(&u->g, argv, envp, in, in_len);
  if(id < 0)
    return luaL_error(L, "%s: %s: %s (%d)", fn, argv[0], strerror(errno),
                      errno);
  lua_pushinteger(L, id + 1);
  return 1;
}

static int l_next(lua_State *L)
{
  struct lgroup *u = check_open(L);
  lua_Number t = luaL_optnumber(L, 2, -1);
  struct fleet_event ev;
  int rc = fleet_next(&u->g, t < 0 ? -1 : (int)(t * 1000), &ev);
  if(rc < 0) {
    if(errno == EINTR) {
      lua_pushnil(L);
      return 1;              /* the caller looks at core.stopping() */
    }
    return luaL_error(L, "fleet.next: poll: %s (%d)", strerror(errno), errno);
  }
  if(rc == 0) {
    lua_pushnil(L);
    return 1;
  }
  lua_createtable(L, 0, 3);
  strata_set_int(L, "id", ev.proc + 1);
  if(ev.kind == FLEET_EV_LINE) {
    strata_set_str(L, "stream", ev.stream == 1 ? "stdout" : "stderr");
    lua_pushlstring(L, ev.line, ev.len);
    lua_setfield(L, -2, "line");
  } else {
    strata_set_int(L, "exit", ev.code);
    strata_set_int(L, "signal", ev.signal);
  }
  return 1;
}

static int l_kill(lua_State *L)
{
  static const char *const names[] = { "TERM", "KILL", "INT", "STOP", "CONT",
                                       NULL };
  static const int sigs[] = { SIGTERM, SIGKILL, SIGINT, SIGSTOP, SIGCONT };
  struct lgroup *u = check_open(L);
  lua_Integer id = luaL_checkinteger(L, 2);
  int s = luaL_checkoption(L, 3, "TERM", names);
  if(id < 1 || id > u->g.n)
    return luaL_argerror(L, 2, "no such child");
  fleet_kill(&u->g, (int)id - 1, sigs[s]);
  return 0;
}

static int l_running(lua_State *L)
{
  struct lgroup *u = check_open(L);
  lua_pushinteger(L, fleet_running(&u->g));
  return 1;
}

static int l_close(lua_State *L)
{
  struct lgroup *u = luaL_checkudata(L, 1, GROUP_MT);
  if(!u->closed) {
    fleet_free(&u->g);
    u->closed = 1;
  }
  return 0;
}

static const luaL_Reg methods[] = {
  { "spawn", l_spawn },
  { "next", l_next },
  { "kill", l_kill },
  { "running", l_running },
  { "close", l_close },
  { NULL, NULL }
};

static const luaL_Reg meta[] = {
  { "__gc", l_close },
  { "__close", l_close },
  { NULL, NULL }
};

static const luaL_Reg funcs[] = {
  { "group", l_group },
  { NULL, NULL }
};

int luaopen_strata_fleet(lua_State *L)
{
  luaL_newmetatable(L, GROUP_MT);
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}
