/*
 * yaml_load_test.c - libyaml is not mapped until the engine first reads
 * YAML, and calls through the loader reach the real library: a document
 * is loaded by yaml.load with the line of each key, and the version is
 * libyaml 0.x.
 */
#include <string.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <yaml.h>

#include "check.h"
#include "yaml_load.h"

int luaopen_strata_yaml(lua_State *L);

int main(void)
{
  lua_State *L = luaL_newstate();
  const char *got;

  luaL_openlibs(L);
  luaL_requiref(L, "strata.yaml", luaopen_strata_yaml, 0);
  lua_setglobal(L, "yaml");
  CHECK(!yaml_loaded());                    /* requiring it loads nothing */
  CHECK(luaL_dostring(L,
        "local d, l = yaml.load('site:\\n  name: lab\\n  nodes: [a, b]\\n"
        "rate: 2.5\\n', 'site.yaml')\n"
        "return d.site.name .. ' ' .. d.site.nodes[2] .. ' ' .. d.rate .."
        " ' ' .. l[d.site].nodes .. ' ' .. l[d].rate") == LUA_OK);
  got = lua_tostring(L, -1);
  CHECKF(got && strcmp(got, "lab b 2.5 3 4") == 0, "%s", got);
  lua_pop(L, 1);
  CHECK(yaml_loaded());
  CHECK(yaml_load() == 0);
  CHECKF(strcmp(yaml_load_error(), "") == 0, "%s", yaml_load_error());
  got = yaml_get_version_string();
  /* yaml.h has no version macro: libyaml 0.x (Debian 0.2.5-1 here) */
  CHECKF(got && strncmp(got, "0.", 2) == 0, "%s", got);
  lua_close(L);
  return check_result("yaml_load_test");
}
