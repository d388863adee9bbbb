/*
 * prom_lua.h - engine/prom's Lua functions, for a family that offers
 * them under its own names too (strata.counters' prometheus_*).
 */
#ifndef STRATA_PROM_LUA_H
#define STRATA_PROM_LUA_H

#include <lua.h>

/* Set <prefix>parse, <prefix>scrape and <prefix>query in the table at
 * the top; their messages start with "<module>.<prefix><fn>:". */
void prom_lua_register(lua_State *L, const char *module, const char *prefix);

/* Option 'bearer_env' of the table at idx: the token from the variable
 * it names (NULL when unset); raises "<fn>: <what>: ..." when the
 * variable is empty or missing. */
const char *prom_lua_bearer(lua_State *L, int idx, const char *fn,
                            const char *what);

int luaopen_strata_prom(lua_State *L);

#endif
