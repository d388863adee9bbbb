/*
 * sys_lua.h - the argument helpers of sys.run that other families'
 * bindings share (fleet's group:spawn): one reading of {cmd=, env=}.
 */
#ifndef STRATA_SYS_LUA_H
#define STRATA_SYS_LUA_H

#include <lua.h>

/* argv from the table at idx's 'cmd' list (NULL ended).  Leaves a
 * userdata owning it on the stack; raises naming fn on a bad list. */
char **sys_l_check_cmd(lua_State *L, int idx, const char *fn);

/* The inherited environment with the table at idx's 'env' applied (a
 * string sets a name, false removes it), or NULL without 'env'.  Leaves
 * a userdata owning it on the stack when not NULL. */
char **sys_l_build_env(lua_State *L, int idx, const char *fn);

#endif
