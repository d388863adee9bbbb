/*
 * report_lua.c - "strata.report": a thin binding over libxlsxwriter.  The
 * layout of strata's workbook lives in lua/strata/report/workbook.lua; this
 * file only checks arguments, converts and calls the library.
 *
 *   local xl = require "strata.report"
 *   local wb <close> = xl.workbook("out.xlsx")
 *   local bold = wb:format{ bold = true, bg_color = "#C6EFCE" }
 *   local ws = wb:worksheet("Summary")
 *   ws:write(0, 0, "bandwidth", bold)      -- rows and columns from 0
 *   ws:write(1, 0, 92.5)                   -- number; NaN/nil -> blank
 *   local ch = wb:chart("scatter_straight_with_markers")
 *   ch:series{ values = { ws, 1, 0, 9, 0 }, categories = { ws, 1, 1, 9, 1 } }
 *   ws:insert_chart(0, 3, ch)
 *   wb:close()                             -- writes the file or raises
 *
 * Handles (STYLE.md, For strata 6): the workbook is created closed and
 * opened once libxlsxwriter gave it; close() writes it, __gc/__close
 * discard an unwritten workbook (a raise half-way leaves no half file);
 * worksheets, formats and charts pin their workbook (user value 1) and
 * raise once it is closed.  Errors: "report.<fn>: <what>: <lxw_strerror>
 * (<code>)".
 */
#include <errno.h>
#include <string.h>

#include "report_lua.h"
#include "strata.h"
#include "report.h"
#include "xlsx_load.h"

/* --- workbook ---------------------------------------------------------- */

static struct book *check_book(lua_State *L, int idx)
{
  struct book *b = luaL_checkudata(L, idx, BOOK_MT);
  if(!b->wb)
    luaL_error(L, "report: workbook is closed");
  return b;
}

int report_raise(lua_State *L, const char *fn, const char *what,
                     lxw_error err)
{
  return luaL_error(L, "report.%s: %s: %s (%d)", fn, what,
                    lxw_strerror(err), (int)err);
}

/* xl.workbook(path [, {constant_memory=, tmpdir=}]) -> workbook */
static int l_workbook(lua_State *L)
{
  static const char *const keys[] = { "constant_memory", "tmpdir", NULL };
  const char *path = luaL_checkstring(L, 1);
  lxw_workbook_options opt = { 0 };
  struct book *b;

  if(!lua_isnoneornil(L, 2))
    strata_check_keys(L, 2, "report.workbook", keys);
  opt.constant_memory = (uint8_t)strata_opt_bool(L, 2, "report.workbook",
                                                 "constant_memory", 0);
  opt.tmpdir = (char *)strata_opt_str(L, 2, "report.workbook", "tmpdir",
                                      NULL);
  opt.use_zip64 = 1;
  b = lua_newuserdatauv(L, sizeof(*b), 0);
  b->wb = NULL;
  luaL_setmetatable(L, BOOK_MT);
  b->wb = workbook_new_opt(path, &opt);
  if(!b->wb && xlsx_load() != 0)  /* loaded on first use: xlsx_load.c */
    return luaL_error(L, "report.workbook: %s: cannot write the workbook: "
                      "%s", path, xlsx_load_error());
  if(!b->wb)
    return luaL_error(L, "report.workbook: %s: cannot create the workbook "
                      "(out of memory or bad tmpdir)", path);
  return 1;
}

/* Idempotent discard for __gc and __close: nothing is written. */
static int l_book_gc(lua_State *L)
{
  struct book *b = luaL_checkudata(L, 1, BOOK_MT);
  if(b->wb) {
    lxw_workbook_free(b->wb);
    b->wb = NULL;
  }
  return 0;
}

/* wb:close(): write the file; raises with lxw_strerror's text. */
static int l_book_close(lua_State *L)
{
  struct book *b = check_book(L, 1);
  char path[4096];
  lxw_error err;

  snprintf(path, sizeof(path), "%s", b->wb->filename ? b->wb->filename : "");
  errno = 0;
  err = workbook_close(b->wb);  /* frees the workbook whatever happens */
  b->wb = NULL;
  if(err == LXW_ERROR_CREATING_XLSX_FILE && errno)
    return luaL_error(L, "report.close: %s: %s (%d; %s)", path,
                      lxw_strerror(err), (int)err, strerror(errno));
  if(err)
    return report_raise(L, "close", path, err);
  return 0;
}

void *report_new_child(lua_State *L, const char *mt, void *p)
{
  struct child *c = lua_newuserdatauv(L, sizeof(*c), 1);
  c->p = p;
  c->book = lua_touserdata(L, 1);
  luaL_setmetatable(L, mt);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);  /* the child pins its workbook */
  return c;
}

void *report_check_child(lua_State *L, int idx, const char *mt)
{
  struct child *c = luaL_checkudata(L, idx, mt);
  if(!c->book->wb)
    luaL_error(L, "report: workbook is closed");
  return c->p;
}

/* wb:worksheet(name): the name must be valid (see xl.sheet_name). */
static int l_book_worksheet(lua_State *L)
{
  struct book *b = check_book(L, 1);
  const char *name = luaL_checkstring(L, 2);
  lxw_error err = workbook_validate_sheet_name(b->wb, name);
  lxw_worksheet *ws;

  if(err)
    return report_raise(L, "worksheet", name, err);
  ws = workbook_add_worksheet(b->wb, name);
  if(!ws)
    return luaL_error(L, "report.worksheet: %s: cannot add", name);
  report_new_sheet(L, ws);
  return 1;
}

lxw_color_t report_opt_color(lua_State *L, int idx, const char *fn,
                             const char *field, int *set)
{
  int t = lua_getfield(L, idx, field);
  uint32_t rgb = 0;

  *set = t != LUA_TNIL;
  if(t == LUA_TNUMBER && lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0 &&
     lua_tointeger(L, -1) <= 0xffffff)
    rgb = (uint32_t)lua_tointeger(L, -1);
  else if(t == LUA_TSTRING) {
    if(report_parse_color(lua_tostring(L, -1), &rgb))
      luaL_error(L, "%s: option '%s' must be \"#RRGGBB\", got \"%s\"", fn,
                 field, lua_tostring(L, -1));
  }
  else if(t != LUA_TNIL)
    luaL_error(L, "%s: option '%s' must be \"#RRGGBB\" or 0xRRGGBB", fn,
               field);
  lua_pop(L, 1);
  return rgb;
}

int report_opt_enum(lua_State *L, int idx, const char *fn, const char *field,
                    const char *const names[], int def)
{
  const char *s = strata_opt_str(L, idx, fn, field, NULL);
  if(!s)
    return def;
  for(int i = 0; names[i]; i++)
    if(!strcmp(s, names[i]))
      return i;
  return luaL_error(L, "%s: option '%s': unknown value '%s'", fn, field, s);
}

/* wb:format{...}: see docs/report.md for the keys. */
static int l_book_format(lua_State *L)
{
  static const char *const keys[] = {
    "bold", "italic", "underline", "strikeout", "font_name", "font_size",
    "font_color", "bg_color", "num_format", "align", "valign", "wrap",
    "indent", "shrink", "rotation", "border", "border_color", "top",
    "bottom", "left", "right", NULL };
  static const char *const aligns[] = { "", "left", "center", "right",
    "fill", "justify", "center_across", "distributed", NULL };
  static const char *const valigns[] = { "top", "bottom", "vcenter",
    "vjustify", "vdistributed", NULL };
  static const char *const fn = "report.format";
  static const char *const sides[] = { "border", "top", "bottom", "left",
                                       "right" };
  void (*const setside[])(lxw_format *, uint8_t) = { format_set_border,
    format_set_top, format_set_bottom, format_set_left, format_set_right };
  struct book *b = check_book(L, 1);
  lxw_format *f;
  const char *s;
  lxw_color_t c;
  int set, v;

  if(lua_isnoneornil(L, 2))
    lua_newtable(L);
  strata_check_keys(L, 2, fn, keys);
  f = workbook_add_format(b->wb);
  if(!f)
    return luaL_error(L, "%s: out of memory", fn);
  if(strata_opt_bool(L, 2, fn, "bold", 0))
    format_set_bold(f);
  if(strata_opt_bool(L, 2, fn, "italic", 0))
    format_set_italic(f);
  if(strata_opt_bool(L, 2, fn, "underline", 0))
    format_set_underline(f, LXW_UNDERLINE_SINGLE);
  if(strata_opt_bool(L, 2, fn, "strikeout", 0))
    format_set_font_strikeout(f);
  if((s = strata_opt_str(L, 2, fn, "font_name", NULL)))
    format_set_font_name(f, s);
  if(strata_opt_num(L, 2, fn, "font_size", 0) > 0)
    format_set_font_size(f, strata_opt_num(L, 2, fn, "font_size", 0));
  c = report_opt_color(L, 2, fn, "font_color", &set);
  if(set)
    format_set_font_color(f, c);
  c = report_opt_color(L, 2, fn, "bg_color", &set);
  if(set) {
    format_set_pattern(f, LXW_PATTERN_SOLID);
    format_set_bg_color(f, c);
  }
  if((s = strata_opt_str(L, 2, fn, "num_format", NULL)))
    format_set_num_format(f, s);
  v = report_opt_enum(L, 2, fn, "align", aligns, 0);
  if(v)
    format_set_align(f, (uint8_t)v);
  v = report_opt_enum(L, 2, fn, "valign", valigns, -1);
  if(v >= 0)
    format_set_align(f, (uint8_t)(LXW_ALIGN_VERTICAL_TOP + v));
  if(strata_opt_bool(L, 2, fn, "wrap", 0))
    format_set_text_wrap(f);
  if(strata_opt_bool(L, 2, fn, "shrink", 0))
    format_set_shrink(f);
  v = (int)strata_opt_int(L, 2, fn, "indent", 0);
  if(v > 0)
    format_set_indent(f, (uint8_t)v);
  v = (int)strata_opt_int(L, 2, fn, "rotation", 0);
  if(v)
    format_set_rotation(f, (int16_t)v);
  for(int i = 0; i < 5; i++) {
    v = (int)strata_opt_int(L, 2, fn, sides[i], 0);
    if(v < 0 || v > 13)
      return luaL_error(L, "%s: option '%s' must be a border style 0..13",
                        fn, sides[i]);
    if(v)
      setside[i](f, (uint8_t)v);
  }
  c = report_opt_color(L, 2, fn, "border_color", &set);
  if(set)
    format_set_border_color(f, c);
  report_new_child(L, FORMAT_MT, f);
  return 1;
}

/* wb:chart(type): "line", "scatter", "column", ... (chart_types). */
static int l_book_chart(lua_State *L)
{
  static const char *const names[] = { "area", "bar", "column", "line",
    "pie", "scatter", "scatter_straight", "scatter_straight_with_markers",
    "scatter_smooth", "scatter_smooth_with_markers", "radar", NULL };
  static const uint8_t types[] = { LXW_CHART_AREA, LXW_CHART_BAR,
    LXW_CHART_COLUMN, LXW_CHART_LINE, LXW_CHART_PIE, LXW_CHART_SCATTER,
    LXW_CHART_SCATTER_STRAIGHT, LXW_CHART_SCATTER_STRAIGHT_WITH_MARKERS,
    LXW_CHART_SCATTER_SMOOTH, LXW_CHART_SCATTER_SMOOTH_WITH_MARKERS,
    LXW_CHART_RADAR };
  struct book *b = check_book(L, 1);
  int t = luaL_checkoption(L, 2, NULL, names);
  lxw_chart *ch = workbook_add_chart(b->wb, types[t]);

  if(!ch)
    return luaL_error(L, "report.chart: %s: cannot add", names[t]);
  report_new_child(L, CHART_MT, ch);
  return 1;
}

/* wb:properties{title=, subject=, ...}: document properties. */
static int l_book_properties(lua_State *L)
{
  static const char *const keys[] = { "title", "subject", "author",
    "manager", "company", "category", "keywords", "comments", "status",
    NULL };
  static const char *const fn = "report.properties";
  struct book *b = check_book(L, 1);
  lxw_doc_properties p = { 0 };
  lxw_error err;

  strata_check_keys(L, 2, fn, keys);
  /* The strings stay referenced by the options table during the call. */
  p.title = (char *)strata_opt_str(L, 2, fn, "title", NULL);
  p.subject = (char *)strata_opt_str(L, 2, fn, "subject", NULL);
  p.author = (char *)strata_opt_str(L, 2, fn, "author", NULL);
  p.manager = (char *)strata_opt_str(L, 2, fn, "manager", NULL);
  p.company = (char *)strata_opt_str(L, 2, fn, "company", NULL);
  p.category = (char *)strata_opt_str(L, 2, fn, "category", NULL);
  p.keywords = (char *)strata_opt_str(L, 2, fn, "keywords", NULL);
  p.comments = (char *)strata_opt_str(L, 2, fn, "comments", NULL);
  p.status = (char *)strata_opt_str(L, 2, fn, "status", NULL);
  err = workbook_set_properties(b->wb, &p);
  if(err)
    return report_raise(L, "properties", "document properties", err);
  return 0;
}

lxw_row_t report_check_row(lua_State *L, int idx)
{
  lua_Integer r = luaL_checkinteger(L, idx);
  luaL_argcheck(L, r >= 0 && r < LXW_ROW_MAX, idx,
                "row out of range (rows count from 0)");
  return (lxw_row_t)r;
}

lxw_col_t report_check_col(lua_State *L, int idx)
{
  lua_Integer c = luaL_checkinteger(L, idx);
  luaL_argcheck(L, c >= 0 && c < LXW_COL_MAX, idx,
                "column out of range (columns count from 0)");
  return (lxw_col_t)c;
}

/* --- module ------------------------------------------------------------ */

/* xl.sheet_name(text) -> a valid sheet name (see report.h). */
static int l_sheet_name_clean(lua_State *L)
{
  char out[4 * REPORT_SHEET_NAME_MAX + 1];
  size_t n = report_sheet_name(luaL_checkstring(L, 1), out, sizeof(out));
  lua_pushlstring(L, out, n);
  return 1;
}

/* xl.version() -> libxlsxwriter's version string (loads it) */
static int l_version(lua_State *L)
{
  if(xlsx_load() != 0)
    return luaL_error(L, "report.version: %s", xlsx_load_error());
  lua_pushstring(L, lxw_version());
  return 1;
}

static const luaL_Reg book_methods[] = {
  { "worksheet", l_book_worksheet },
  { "format", l_book_format },
  { "chart", l_book_chart },
  { "properties", l_book_properties },
  { "close", l_book_close },
  { NULL, NULL } };

static const luaL_Reg funcs[] = {
  { "workbook", l_workbook },
  { "sheet_name", l_sheet_name_clean },
  { "version", l_version },
  { "json", report_json_lua },
  { NULL, NULL } };

static void createmeta(lua_State *L, const char *name, const luaL_Reg *m,
                       const luaL_Reg *more)
{
  luaL_newmetatable(L, name);
  lua_newtable(L);
  luaL_setfuncs(L, m, 0);
  if(more)
    luaL_setfuncs(L, more, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

int luaopen_strata_report(lua_State *L)
{
  createmeta(L, BOOK_MT, book_methods, NULL);
  luaL_getmetatable(L, BOOK_MT);
  lua_pushcfunction(L, l_book_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, l_book_gc);
  lua_setfield(L, -2, "__close");
  lua_pop(L, 1);
  createmeta(L, SHEET_MT, report_sheet_methods, report_layout_methods);
  luaL_getmetatable(L, SHEET_MT);
  lua_pushcfunction(L, report_sheet_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  createmeta(L, FORMAT_MT, (const luaL_Reg[]){ { NULL, NULL } }, NULL);
  createmeta(L, CHART_MT, report_chart_methods, NULL);
  luaL_newlib(L, funcs);
  return 1;
}
