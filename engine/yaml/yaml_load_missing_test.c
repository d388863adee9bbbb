/*
 * yaml_load_missing_test.c - a host without libyaml: the loader is built
 * here to open a SONAME no host has (CMakeLists.txt).  Nothing fails
 * before YAML is read; then yaml.load raises naming the file that needed
 * it, the library and its Debian package.
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
  yaml_parser_t p;
  const char *msg;
  const char *want = "site.yaml: cannot initialise the YAML parser: "
                     "libyaml-0.so.0-strata-absent could not be loaded: ";

  luaL_openlibs(L);
  luaL_requiref(L, "strata.yaml", luaopen_strata_yaml, 0);
  lua_setglobal(L, "yaml");
  CHECK(!yaml_loaded());
  CHECK(luaL_dostring(L, "return select(2, pcall(yaml.load, 'a: 1\\n', "
                         "'site.yaml'))") == LUA_OK);
  msg = lua_tostring(L, -1);
  CHECKF(msg && strncmp(msg, want, strlen(want)) == 0, "%s", msg);
  CHECKF(msg && strstr(msg, "(Debian package libyaml-0-2)") != NULL, "%s",
         msg);
  lua_pop(L, 1);

  /* the C calls fail as libyaml fails, and say why */
  CHECK(yaml_load() == -1);
  CHECK(strstr(yaml_load_error(), "libyaml-0.so.0-strata-absent") != NULL);
  memset(&p, 0, sizeof(p));
  CHECK(yaml_parser_initialize(&p) == 0);
  CHECK(yaml_get_version_string() == NULL);
  CHECK(!yaml_loaded());
  lua_close(L);
  return check_result("yaml_load_missing_test");
}
