/*
 * xlsx_load_missing_test.c - a host without libxlsxwriter: the loader is
 * built here to open a SONAME no host has (CMakeLists.txt).  Nothing fails
 * before a workbook is wanted; then report.workbook (and report.version)
 * raise naming the library, its Debian package and the workbook that
 * needed it, and no file is made.
 */
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <xlsxwriter.h>

#include "check.h"
#include "xlsx_load.h"

int luaopen_strata_report(lua_State *L);

static const char *const SONAME = "libxlsxwriter.so.0-strata-absent";

int main(void)
{
  lua_State *L = luaL_newstate();
  lxw_workbook_options opt = { 0 };
  const char *msg;
  const char *want = "report.workbook: /tmp/xlsx_load_missing.xlsx: cannot "
                     "write the workbook: libxlsxwriter.so.0-strata-absent "
                     "could not be loaded: ";

  luaL_openlibs(L);
  luaL_requiref(L, "strata.report", luaopen_strata_report, 0);
  lua_setglobal(L, "xl");
  CHECK(!xlsx_loaded());

  /* xl.workbook(path) raises "report.workbook: <path>: cannot write the
   * workbook: <soname> could not be loaded: ... (Debian package ...)" */
  CHECK(luaL_dostring(L, "return select(2, pcall(xl.workbook, "
                         "'/tmp/xlsx_load_missing.xlsx'))") == LUA_OK);
  msg = lua_tostring(L, -1);
  CHECKF(msg && strncmp(msg, want, strlen(want)) == 0, "%s", msg);
  CHECKF(msg && strstr(msg, "(Debian package libxlsxwriter4)") != NULL, "%s",
         msg);
  lua_pop(L, 1);
  CHECK(access("/tmp/xlsx_load_missing.xlsx", F_OK) != 0);

  CHECK(luaL_dostring(L, "return select(2, pcall(xl.version))") == LUA_OK);
  msg = lua_tostring(L, -1);
  CHECKF(msg && strstr(msg, "report.version: ") == msg &&
         strstr(msg, SONAME) != NULL, "%s", msg);
  lua_pop(L, 1);

  /* the C calls fail as the library fails, and say why */
  CHECK(xlsx_load() == -1);
  CHECK(strstr(xlsx_load_error(), SONAME) != NULL);
  CHECK(workbook_new_opt("/tmp/xlsx_load_missing.xlsx", &opt) == NULL);
  CHECK(strcmp(lxw_strerror(LXW_NO_ERROR), xlsx_load_error()) == 0);
  CHECK(lxw_version() == NULL);
  CHECK(!xlsx_loaded());
  lua_close(L);
  return check_result("xlsx_load_missing_test");
}
