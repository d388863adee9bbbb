/*
 * sys_lua.c - require "strata.sys": read, run, inventory, locality.
 * read and run are here; inventory and locality (tables built from sysfs)
 * are in inventory_lua.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"
#include "sys.h"
#include "sys_lua.h"

int sys_l_inventory(lua_State *L);
int sys_l_locality(lua_State *L);

extern char **environ;

/* The file onto the stack, or 0 with the reason there (raise = 0: then
 * the reason is "PATH: why", as io.open gives it). */
static int read_file(lua_State *L, const char *fn, int raise)
{
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = luaL_optinteger(L, 2, 0);
  char *buf;
  size_t len;
  if(max < 0)
    return luaL_argerror(L, 2, "max_bytes must be >= 0");
  if(sys_read_file(path, (size_t)max, &buf, &len)) {
    int e = errno;
    if(raise)
      lua_pushfstring(L, "%s: ", fn);
    if(e == EFBIG)
      lua_pushfstring(L, "%s: longer than %d bytes", path,
                      (int)(max ? max : 16 << 20));
    else
      lua_pushfstring(L, "%s: %s (%d)", path, strerror(e), e);
    if(raise) {
      lua_concat(L, 2);
      return lua_error(L);
    }
    return 0;
  }
  lua_pushlstring(L, buf, len);
  free(buf);
  return 1;
}

static int l_read(lua_State *L)
{
  return read_file(L, "sys.read", 1);
}

/* sys.try_read(path [, max]) -> text | nil, why (as io.open answers) */
static int l_try_read(lua_State *L)
{
  if(read_file(L, NULL, 0))
    return 1;
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

/* argv from the 'cmd' list, as a NULL-ended array in a userdata
 * (sys_lua.h: also used by the fleet family's spawn). */
char **sys_l_check_cmd(lua_State *L, int idx, const char *fn)
{
  char **argv;
  size_t n;
  if(lua_getfield(L, idx, "cmd") != LUA_TTABLE)
    luaL_error(L, "%s: option 'cmd' must be a list like {\"prog\", "
               "\"arg\"} (no shell)", fn);
  n = lua_rawlen(L, -1);
  if(n == 0)
    luaL_error(L, "%s: option 'cmd' is empty", fn);
  argv = lua_newuserdatauv(L, (n + 1) * sizeof(char *), 1);
  lua_createtable(L, (int)n, 0);  /* pins the strings */
  for(size_t i = 0; i < n; i++) {
    int t = lua_rawgeti(L, -3, (lua_Integer)i + 1);
    if(t != LUA_TSTRING && t != LUA_TNUMBER)
      luaL_error(L, "%s: cmd[%d] must be a string", fn, (int)i + 1);
    argv[i] = (char *)lua_tostring(L, -1);  /* numbers converted here */
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  argv[n] = NULL;
  lua_setiuservalue(L, -2, 1);
  lua_remove(L, -2);
  return argv;  /* the userdata stays on the stack */
}

/* The inherited environment with 'env' applied (false removes a name). */
char **sys_l_build_env(lua_State *L, int idx, const char *fn)
{
  size_t n = 0, k = 0;
  char **envp;
  int tbl;
  if(lua_getfield(L, idx, "env") == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  if(!lua_istable(L, -1))
    luaL_error(L, "%s: option 'env' must be a table of NAME = value", fn);
  tbl = lua_gettop(L);
  while(environ[n])
    n++;
  lua_pushnil(L);
  while(lua_next(L, tbl)) {
    n++;
    lua_pop(L, 1);
  }
  envp = lua_newuserdatauv(L, (n + 1) * sizeof(char *), 1);
  lua_newtable(L);  /* strings made here, pinned by the userdata */
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, -3, 1);
  for(size_t i = 0; environ[i]; i++) {
    size_t nl = strcspn(environ[i], "=");
    lua_pushlstring(L, environ[i], nl);
    if(lua_gettable(L, tbl) == LUA_TNIL)
      envp[k++] = environ[i];
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while(lua_next(L, tbl)) {
    if(lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "%s: env keys must be names", fn);
    if(lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
      lua_pushfstring(L, "%s=%s", lua_tostring(L, -2),
                      lua_tostring(L, -1));
      envp[k++] = (char *)lua_tostring(L, -1);
      lua_rawseti(L, -4, (lua_Integer)k);
    }
    else if(!(lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)))
      luaL_error(L, "%s: env.%s must be a string, or false to remove it",
                 fn, lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  envp[k] = NULL;
  lua_pop(L, 1);           /* the pin table */
  lua_remove(L, tbl);      /* the env table; the userdata stays */
  return envp;
}

static int l_run(lua_State *L)
{
  static const char *const keys[] = {
    "cmd", "timeout", "env", "stdin", "cwd", "max_output", "need", "check",
    NULL
  };
  const char *fn = "sys.run";
  struct sys_run_opts o;
  struct sys_run_result r;
  int need, check;

  memset(&o, 0, sizeof(o));
  strata_check_keys(L, 1, fn, keys);
  o.argv = sys_l_check_cmd(L, 1, fn);
  o.envp = sys_l_build_env(L, 1, fn);
  o.timeout_s = strata_opt_num(L, 1, fn, "timeout", 60);
  o.cwd = strata_opt_str(L, 1, fn, "cwd", NULL);
  o.max_output = (size_t)strata_opt_int(L, 1, fn, "max_output", 0);
  need = strata_opt_bool(L, 1, fn, "need", 0);
  check = strata_opt_bool(L, 1, fn, "check", 0);
  if(lua_getfield(L, 1, "stdin") == LUA_TSTRING)
    o.in = lua_tolstring(L, -1, &o.in_len);
  else if(!lua_isnil(L, -1))
    return luaL_error(L, "%s: option 'stdin' must be a string", fn);
  lua_pop(L, 1);
  if(sys_run(&o, &r))
    return luaL_error(L, "%s: %s: %s (%d)", fn, o.argv[0], strerror(errno),
                      errno);
  if(r.exec_errno && need) {
    int e = r.exec_errno;
    sys_run_free(&r);
    if(e == ENOENT)
      return strata_skip(L, "'%s' is not installed (not found on PATH)",
                         o.argv[0]);
    return strata_skip(L, "'%s' cannot be executed: %s", o.argv[0],
                       strerror(e));
  }
  if(check && (r.code != 0 || r.timed_out)) {
    const char *tail = r.err_len > 300 ? r.err + r.err_len - 300 : r.err;
    lua_pushfstring(L, "%s: '%s' %s", fn, o.argv[0],
                    r.timed_out ? "timed out" : "failed");
    if(r.timed_out)
      lua_pushfstring(L, " after %f s", o.timeout_s);
    else
      lua_pushfstring(L, " with exit code %d", r.code);
    lua_pushfstring(L, ": %s", tail);
    sys_run_free(&r);
    lua_concat(L, 3);
    return lua_error(L);
  }
  lua_createtable(L, 0, 9);
  strata_set_int(L, "code", r.code);
  strata_set_int(L, "signal", r.signal);
  lua_pushlstring(L, r.out, r.out_len);
  lua_setfield(L, -2, "stdout");
  lua_pushlstring(L, r.err, r.err_len);
  lua_setfield(L, -2, "stderr");
  strata_set_bool(L, "timed_out", r.timed_out);
  strata_set_bool(L, "interrupted", r.interrupted);
  strata_set_bool(L, "truncated", r.out_truncated || r.err_truncated);
  strata_set_num(L, "duration_s", r.duration_s);
  if(r.exec_errno)
    strata_set_str(L, "exec_error", strerror(r.exec_errno));
  sys_run_free(&r);
  return 1;
}

static int l_spin(lua_State *L)
{
  lua_Number sec = luaL_checknumber(L, 1);
  if(!(sec >= 0 && sec <= 3600))
    return luaL_argerror(L, 1, "seconds must be in [0, 3600]");
  double cpu_s = 0;
  lua_pushinteger(L, (lua_Integer)sys_spin(sec, &cpu_s));
  lua_pushnumber(L, cpu_s);
  return 2;
}

static int l_tcp_loopback(lua_State *L)
{
  static const char *const keys[] = { "bytes", "timeout", NULL };
  const char *fn = "sys.tcp_loopback";
  struct sys_loopback r;
  lua_Integer bytes;
  double timeout;
  char err[300];
  strata_check_keys(L, 1, fn, keys);
  bytes = strata_opt_int(L, 1, fn, "bytes", 64 << 20);
  timeout = strata_opt_num(L, 1, fn, "timeout", 30);
  if(bytes <= 0)
    return luaL_error(L, "%s: option 'bytes' must be > 0", fn);
  if(sys_tcp_loopback((uint64_t)bytes, timeout, &r, err, sizeof(err)))
    return luaL_error(L, "%s: %s", fn, err);
  lua_createtable(L, 0, 4);
  strata_set_int(L, "bytes", (lua_Integer)r.bytes);
  strata_set_int(L, "corrupt", (lua_Integer)r.corrupt);
  strata_set_num(L, "duration_s", r.duration_s);
  strata_set_num(L, "gbps", r.gbps);
  return 1;
}

static const luaL_Reg funcs[] = {
  { "spin", l_spin },
  { "tcp_loopback", l_tcp_loopback },
  { "read", l_read },
  { "try_read", l_try_read },
  { "run", l_run },
  { "inventory", sys_l_inventory },
  { "locality", sys_l_locality },
  { NULL, NULL }
};

int luaopen_strata_sys(lua_State *L)
{
  luaL_newlib(L, funcs);
  return 1;
}
