/*
 * report_lua.h - what the two halves of the "strata.report" binding share:
 * the handle structs and metatable names, argument checks and the error
 * helper.  report_lua.c: module, workbook, formats; report_sheet_lua.c:
 * worksheets and charts.  Private to engine/report.
 */
#ifndef STRATA_REPORT_LUA_H
#define STRATA_REPORT_LUA_H

#include <lua.h>
#include <lauxlib.h>
#include <xlsxwriter.h>

#define BOOK_MT "strata.report.workbook"
#define SHEET_MT "strata.report.worksheet"
#define FORMAT_MT "strata.report.format"
#define CHART_MT "strata.report.chart"

struct book {
  lxw_workbook *wb;  /* NULL: closed (or not yet opened) */
};

/* Worksheets, formats and charts: a library pointer owned by the book. */
struct child {
  void *p;
  struct book *book;  /* kept alive by user value 1 */
};

/* Raise "report.<fn>: <what>: <lxw_strerror> (<code>)". */
int report_raise(lua_State *L, const char *fn, const char *what,
                 lxw_error err);

/* Push a child handle of metatable mt for p; the workbook is at index 1. */
void *report_new_child(lua_State *L, const char *mt, void *p);

/* The library pointer of the child at idx; raises once its book closed. */
void *report_check_child(lua_State *L, int idx, const char *mt);

/* Option readers: "#RRGGBB" or 0xRRGGBB (*set = present), a name from
 * names (its index; def when absent); both raise naming fn and field. */
lxw_color_t report_opt_color(lua_State *L, int idx, const char *fn,
                             const char *field, int *set);
int report_opt_enum(lua_State *L, int idx, const char *fn, const char *field,
                    const char *const names[], int def);

/* Row and column arguments, counted from 0, range-checked. */
lxw_row_t report_check_row(lua_State *L, int idx);
lxw_col_t report_check_col(lua_State *L, int idx);

/* A worksheet handle (report_layout_lua.c: it also counts what its writes
 * lay out) for ws; the workbook is at index 1.  __gc: report_sheet_gc. */
void *report_new_sheet(lua_State *L, lxw_worksheet *ws);
int report_sheet_gc(lua_State *L);

/* xl.json (report_json_lua.c): run.json's text of a value. */
int report_json_lua(lua_State *L);

extern const luaL_Reg report_sheet_methods[];
extern const luaL_Reg report_layout_methods[];
extern const luaL_Reg report_chart_methods[];

#endif
