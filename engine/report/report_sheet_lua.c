/*
 * report_sheet_lua.c - "strata.report" worksheets and charts: ws:write...,
 * widths, panes, filters, merges, page setup, ch:series/axis/...  The
 * handles and their rules are in report_lua.c's header comment.
 */
#include <math.h>

#include "report_lua.h"
#include "strata.h"

/* --- worksheet --------------------------------------------------------- */

static lxw_worksheet *check_sheet(lua_State *L, int idx)
{
  return report_check_child(L, idx, SHEET_MT);
}

/* A format or chart belongs to the workbook of the sheet at index 1. */
static void *check_same_book(lua_State *L, int idx, const char *mt)
{
  void *p = report_check_child(L, idx, mt);
  struct child *sheet = lua_touserdata(L, 1);
  struct child *c = lua_touserdata(L, idx);
  if(c->book != sheet->book)
    luaL_argerror(L, idx, "belongs to another workbook");
  return p;
}

static lxw_format *opt_format(lua_State *L, int idx)
{
  if(lua_isnoneornil(L, idx))
    return NULL;
  return check_same_book(L, idx, FORMAT_MT);
}

static int check_write(lua_State *L, const char *fn, lxw_row_t r,
                       lxw_col_t c, lxw_error err)
{
  char cell[LXW_MAX_CELL_NAME_LENGTH];
  if(!err)
    return 0;
  lxw_rowcol_to_cell(cell, r, c);
  return report_raise(L, fn, cell, err);
}

/* ws:write(row, col, value [, format]): by Lua type; nil/NaN/inf -> blank. */
static int l_sheet_write(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  lxw_col_t c = report_check_col(L, 3);
  lxw_format *f = opt_format(L, 5);
  lxw_error err;

  switch(lua_type(L, 4)) {
  case LUA_TNUMBER: {
    double v = lua_tonumber(L, 4);
    err = isfinite(v) ? worksheet_write_number(ws, r, c, v, f)
                      : worksheet_write_blank(ws, r, c, f);
    break;
  }
  case LUA_TSTRING:
    err = worksheet_write_string(ws, r, c, lua_tostring(L, 4), f);
    break;
  case LUA_TBOOLEAN:
    err = worksheet_write_boolean(ws, r, c, lua_toboolean(L, 4), f);
    break;
  case LUA_TNIL:
  case LUA_TNONE:
    err = worksheet_write_blank(ws, r, c, f);
    break;
  default:
    return luaL_argerror(L, 4, "number, string, boolean or nil expected");
  }
  return check_write(L, "write", r, c, err);
}

/* ws:write_string(row, col, text [, format]) */
static int l_sheet_write_string(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  lxw_col_t c = report_check_col(L, 3);
  const char *s = luaL_checkstring(L, 4);
  return check_write(L, "write_string", r, c,
                     worksheet_write_string(ws, r, c, s, opt_format(L, 5)));
}

/* ws:write_number(row, col, x [, format]): x must be finite. */
static int l_sheet_write_number(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  lxw_col_t c = report_check_col(L, 3);
  double v = luaL_checknumber(L, 4);
  luaL_argcheck(L, isfinite(v), 4, "number must be finite");
  return check_write(L, "write_number", r, c,
                     worksheet_write_number(ws, r, c, v, opt_format(L, 5)));
}

/* ws:write_boolean(row, col, b [, format]) */
static int l_sheet_write_boolean(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  lxw_col_t c = report_check_col(L, 3);
  int v;
  luaL_checktype(L, 4, LUA_TBOOLEAN);
  v = lua_toboolean(L, 4);
  return check_write(L, "write_boolean", r, c,
                     worksheet_write_boolean(ws, r, c, v, opt_format(L, 5)));
}

/* ws:write_formula(row, col, "=SUM(A1:A3)" [, format [, result]]) */
static int l_sheet_write_formula(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  lxw_col_t c = report_check_col(L, 3);
  const char *s = luaL_checkstring(L, 4);
  lxw_format *f = opt_format(L, 5);
  lxw_error err;

  if(lua_isnoneornil(L, 6))
    err = worksheet_write_formula(ws, r, c, s, f);
  else
    err = worksheet_write_formula_num(ws, r, c, s, f,
                                      luaL_checknumber(L, 6));
  return check_write(L, "write_formula", r, c, err);
}

/* ws:write_url(row, col, url [, format [, text]]); "internal:'S'!A1" too. */
static int l_sheet_write_url(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  lxw_col_t c = report_check_col(L, 3);
  const char *url = luaL_checkstring(L, 4);
  lxw_format *f = opt_format(L, 5);
  const char *text = luaL_optstring(L, 6, NULL);
  return check_write(L, "write_url", r, c,
                     worksheet_write_url_opt(ws, r, c, url, f, text, NULL));
}

/* ws:set_column(first, last, width [, format]) */
static int l_sheet_set_column(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_col_t c0 = report_check_col(L, 2);
  lxw_col_t c1 = report_check_col(L, 3);
  double w = luaL_checknumber(L, 4);
  return check_write(L, "set_column", 0, c0,
                     worksheet_set_column(ws, c0, c1, w, opt_format(L, 5)));
}

/* ws:set_row(row, height [, format]) */
static int l_sheet_set_row(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  double h = luaL_checknumber(L, 3);
  return check_write(L, "set_row", r, 0,
                     worksheet_set_row(ws, r, h, opt_format(L, 4)));
}

/* ws:freeze_panes(row, col): rows above row and columns left of col. */
static int l_sheet_freeze_panes(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  worksheet_freeze_panes(ws, report_check_row(L, 2), report_check_col(L, 3));
  return 0;
}

/* ws:autofilter(r0, c0, r1, c1) */
static int l_sheet_autofilter(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r0 = report_check_row(L, 2), r1 = report_check_row(L, 4);
  lxw_col_t c0 = report_check_col(L, 3), c1 = report_check_col(L, 5);
  return check_write(L, "autofilter", r0, c0,
                     worksheet_autofilter(ws, r0, c0, r1, c1));
}

/* ws:merge(r0, c0, r1, c1, text [, format]) */
static int l_sheet_merge(lua_State *L)
{
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r0 = report_check_row(L, 2), r1 = report_check_row(L, 4);
  lxw_col_t c0 = report_check_col(L, 3), c1 = report_check_col(L, 5);
  const char *s = luaL_checkstring(L, 6);
  return check_write(L, "merge", r0, c0,
                     worksheet_merge_range(ws, r0, c0, r1, c1, s,
                                           opt_format(L, 7)));
}

/* ws:color_scale(r0, c0, r1, c1, {min_color=, [mid_color=,] max_color=})
 * Excel's "3 Color Scale" conditional format over the range (lowest,
 * 50th percentile, highest), or a 2 colour one without mid_color: a
 * heatmap of a matrix of numbers (the fleet's pair matrix). */
static int l_sheet_color_scale(lua_State *L)
{
  static const char *const keys[] = { "min_color", "mid_color", "max_color",
                                      NULL };
  static const char *const fn = "report.color_scale";
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r0 = report_check_row(L, 2), r1 = report_check_row(L, 4);
  lxw_col_t c0 = report_check_col(L, 3), c1 = report_check_col(L, 5);
  lxw_conditional_format cf = { 0 };
  int set_min = 0, set_mid = 0, set_max = 0;

  luaL_checktype(L, 6, LUA_TTABLE);
  strata_check_keys(L, 6, fn, keys);
  cf.min_color = report_opt_color(L, 6, fn, "min_color", &set_min);
  cf.mid_color = report_opt_color(L, 6, fn, "mid_color", &set_mid);
  cf.max_color = report_opt_color(L, 6, fn, "max_color", &set_max);
  cf.type = set_mid ? LXW_CONDITIONAL_3_COLOR_SCALE
                    : LXW_CONDITIONAL_2_COLOR_SCALE;
  cf.min_rule_type = LXW_CONDITIONAL_RULE_TYPE_MINIMUM;
  cf.max_rule_type = LXW_CONDITIONAL_RULE_TYPE_MAXIMUM;
  if(set_mid) {
    cf.mid_rule_type = LXW_CONDITIONAL_RULE_TYPE_PERCENTILE;
    cf.mid_value = 50;
  }
  if(!set_min || !set_max)
    return luaL_error(L, "%s: min_color and max_color are required", fn);
  return check_write(L, "color_scale", r0, c0,
                     worksheet_conditional_format_range(ws, r0, c0, r1, c1,
                                                        &cf));
}

/* ws:insert_chart(row, col, chart [, {x_offset=, y_offset=, x_scale=,
 * y_scale=, description=}]) */
static int l_sheet_insert_chart(lua_State *L)
{
  static const char *const keys[] = { "x_offset", "y_offset", "x_scale",
    "y_scale", "description", NULL };
  static const char *const fn = "report.insert_chart";
  lxw_worksheet *ws = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  lxw_col_t c = report_check_col(L, 3);
  lxw_chart *ch = check_same_book(L, 4, CHART_MT);
  lxw_chart_options o = { 0 };

  if(!lua_isnoneornil(L, 5))
    strata_check_keys(L, 5, fn, keys);
  o.x_offset = (int32_t)strata_opt_int(L, 5, fn, "x_offset", 0);
  o.y_offset = (int32_t)strata_opt_int(L, 5, fn, "y_offset", 0);
  o.x_scale = strata_opt_num(L, 5, fn, "x_scale", 1);
  o.y_scale = strata_opt_num(L, 5, fn, "y_scale", 1);
  o.description = (char *)strata_opt_str(L, 5, fn, "description", NULL);
  return check_write(L, "insert_chart", r, c,
                     worksheet_insert_chart_opt(ws, r, c, ch, &o));
}

/* ws:setup{landscape=, fit_width=, fit_height=, tab_color=, zoom=,
 * hide_gridlines=, activate=, header=, footer=, repeat_rows={r0, r1},
 * hidden=} (hidden: a data sheet that charts read and nobody prints) */
static int l_sheet_setup(lua_State *L)
{
  static const char *const keys[] = { "landscape", "fit_width",
    "fit_height", "tab_color", "zoom", "hide_gridlines", "activate",
    "header", "footer", "repeat_rows", "hidden", NULL };
  static const char *const fn = "report.setup";
  lxw_worksheet *ws = check_sheet(L, 1);
  const char *s;
  lxw_color_t c;
  int set;
  lua_Integer w, h, z;

  strata_check_keys(L, 2, fn, keys);
  if(strata_opt_bool(L, 2, fn, "landscape", 0))
    worksheet_set_landscape(ws);
  w = strata_opt_int(L, 2, fn, "fit_width", -1);
  h = strata_opt_int(L, 2, fn, "fit_height", -1);
  if(w >= 0 || h >= 0)
    worksheet_fit_to_pages(ws, (uint16_t)(w < 0 ? 1 : w),
                           (uint16_t)(h < 0 ? 0 : h));
  c = report_opt_color(L, 2, fn, "tab_color", &set);
  if(set)
    worksheet_set_tab_color(ws, c);
  z = strata_opt_int(L, 2, fn, "zoom", 0);
  if(z) {
    if(z < 10 || z > 400)
      return luaL_error(L, "%s: option 'zoom' must be 10..400", fn);
    worksheet_set_zoom(ws, (uint16_t)z);
  }
  if(strata_opt_bool(L, 2, fn, "hide_gridlines", 0))
    worksheet_gridlines(ws, LXW_HIDE_ALL_GRIDLINES);
  if(strata_opt_bool(L, 2, fn, "activate", 0))
    worksheet_activate(ws);
  if(strata_opt_bool(L, 2, fn, "hidden", 0))
    worksheet_hide(ws);
  if((s = strata_opt_str(L, 2, fn, "header", NULL)) &&
     worksheet_set_header(ws, s))
    return luaL_error(L, "%s: header too long or invalid", fn);
  if((s = strata_opt_str(L, 2, fn, "footer", NULL)) &&
     worksheet_set_footer(ws, s))
    return luaL_error(L, "%s: footer too long or invalid", fn);
  if(lua_getfield(L, 2, "repeat_rows") == LUA_TTABLE) {
    lxw_row_t r0, r1;
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    r0 = report_check_row(L, lua_absindex(L, -2));
    r1 = report_check_row(L, lua_absindex(L, -1));
    if(worksheet_repeat_rows(ws, r0, r1))
      return luaL_error(L, "%s: bad repeat_rows", fn);
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  return 0;
}

/* ws:name() */
static int l_sheet_name(lua_State *L)
{
  lua_pushstring(L, check_sheet(L, 1)->name);
  return 1;
}

/* --- chart ------------------------------------------------------------- */

/*
 * Read a range {sheet, r0, c0, r1, c1} (sheet: worksheet or name) from the
 * field of the table at idx.  Returns 0 when the field is absent.
 */
static int opt_range(lua_State *L, int idx, const char *field,
                     const char **sheet, lxw_row_t *r0, lxw_col_t *c0,
                     lxw_row_t *r1, lxw_col_t *c1)
{
  int top = lua_gettop(L);
  int t = lua_getfield(L, idx, field);
  int n;

  if(t == LUA_TNIL) {
    lua_settop(L, top);
    return 0;
  }
  if(t != LUA_TTABLE)
    return luaL_error(L, "report.series: option '%s' must be "
                      "{sheet, r0, c0, r1, c1}", field);
  n = (int)lua_rawlen(L, -1);
  for(int i = 1; i <= 5; i++)
    lua_rawgeti(L, top + 1, i);
  if((n != 5 && n != 3) || !lua_isinteger(L, top + 3) ||
     !lua_isinteger(L, top + 4) ||
     (n == 5 && (!lua_isinteger(L, top + 5) || !lua_isinteger(L, top + 6))))
    return luaL_error(L, "report.series: option '%s' must be "
                      "{sheet, r0, c0, r1, c1}", field);
  if(lua_type(L, top + 2) == LUA_TSTRING)
    *sheet = lua_tostring(L, top + 2);
  else
    *sheet = ((lxw_worksheet *)report_check_child(L, top + 2, SHEET_MT))->name;
  *r0 = report_check_row(L, top + 3);
  *c0 = report_check_col(L, top + 4);
  *r1 = n == 5 ? report_check_row(L, top + 5) : *r0;
  *c1 = n == 5 ? report_check_col(L, top + 6) : *c0;
  /* The sheet name string stays referenced by the options table. */
  lua_settop(L, top);
  return 1;
}

/* ch:series{values=, categories=, name= "text" | {sheet, row, col},
 * marker=, smooth=, color=, width=} */
static int l_chart_series(lua_State *L)
{
  static const char *const keys[] = { "values", "categories", "name",
    "marker", "smooth", "color", "width", NULL };
  static const char *const markers[] = { "automatic", "none", "square",
    "diamond", "triangle", "x", "star", "short_dash", "long_dash", "circle",
    "plus", NULL };
  static const char *const fn = "report.series";
  lxw_chart *ch = report_check_child(L, 1, CHART_MT);
  lxw_chart_series *s;
  const char *sheet = NULL, *csheet = NULL;
  lxw_row_t r0, r1, cr0 = 0, cr1 = 0;
  lxw_col_t c0, c1, cc0 = 0, cc1 = 0;
  lxw_chart_line line = { 0 };
  int has_cat;
  lxw_color_t color;
  int set, m;
  double w;

  strata_check_keys(L, 2, fn, keys);
  if(!opt_range(L, 2, "values", &sheet, &r0, &c0, &r1, &c1))
    return luaL_error(L, "%s: option 'values' is required", fn);
  has_cat = opt_range(L, 2, "categories", &csheet, &cr0, &cc0, &cr1, &cc1);
  /* libxlsxwriter 1.1.4 crashes on a scatter series without x values. */
  if(!has_cat && ch->type >= LXW_CHART_SCATTER &&
     ch->type <= LXW_CHART_SCATTER_SMOOTH_WITH_MARKERS)
    return luaL_error(L, "%s: a scatter chart needs 'categories' "
                      "(the x values)", fn);
  s = chart_add_series(ch, NULL, NULL);
  if(!s)
    return luaL_error(L, "%s: cannot add a series", fn);
  chart_series_set_values(s, sheet, r0, c0, r1, c1);
  if(has_cat)
    chart_series_set_categories(s, csheet, cr0, cc0, cr1, cc1);
  if(lua_getfield(L, 2, "name") == LUA_TSTRING)
    chart_series_set_name(s, lua_tostring(L, -1));
  lua_pop(L, 1);
  if(lua_getfield(L, 2, "name") == LUA_TTABLE) {
    if(opt_range(L, 2, "name", &sheet, &r0, &c0, &r1, &c1))
      chart_series_set_name_range(s, sheet, r0, c0);
  }
  lua_pop(L, 1);
  m = report_opt_enum(L, 2, fn, "marker", markers, -1);
  if(m >= 0)
    chart_series_set_marker_type(s, (uint8_t)m);
  if(strata_opt_bool(L, 2, fn, "smooth", 0))
    chart_series_set_smooth(s, 1);
  color = report_opt_color(L, 2, fn, "color", &set);
  w = strata_opt_num(L, 2, fn, "width", 0);
  if(set || w > 0) {
    line.color = set ? color : LXW_COLOR_UNSET;
    line.width = (float)w;
    chart_series_set_line(s, &line);
  }
  return 0;
}

/* ch:title(text | false) */
static int l_chart_title(lua_State *L)
{
  lxw_chart *ch = report_check_child(L, 1, CHART_MT);
  if(lua_toboolean(L, 2))
    chart_title_set_name(ch, luaL_checkstring(L, 2));
  else
    chart_title_off(ch);
  return 0;
}

/* ch:axis("x" | "y", {title=, log_base=, min=, max=, num_format=,
 * gridlines=, reverse=, crossing_min=}) */
static int l_chart_axis(lua_State *L)
{
  static const char *const names[] = { "x", "y", NULL };
  static const char *const keys[] = { "title", "log_base", "min", "max",
    "num_format", "gridlines", "reverse", "crossing_min", NULL };
  static const char *const fn = "report.axis";
  lxw_chart *ch = report_check_child(L, 1, CHART_MT);
  int which = luaL_checkoption(L, 2, NULL, names);
  lxw_chart_axis *ax = which == 0 ? ch->x_axis : ch->y_axis;
  const char *s;
  lua_Integer base;

  strata_check_keys(L, 3, fn, keys);
  if((s = strata_opt_str(L, 3, fn, "title", NULL)))
    chart_axis_set_name(ax, s);
  base = strata_opt_int(L, 3, fn, "log_base", 0);
  if(base) {
    if(base < 2 || base > 1000)
      return luaL_error(L, "%s: option 'log_base' must be 2..1000", fn);
    chart_axis_set_log_base(ax, (uint16_t)base);
  }
  if(lua_getfield(L, 3, "min") != LUA_TNIL)
    chart_axis_set_min(ax, strata_opt_num(L, 3, fn, "min", 0));
  lua_pop(L, 1);
  if(lua_getfield(L, 3, "max") != LUA_TNIL)
    chart_axis_set_max(ax, strata_opt_num(L, 3, fn, "max", 0));
  lua_pop(L, 1);
  if((s = strata_opt_str(L, 3, fn, "num_format", NULL)))
    chart_axis_set_num_format(ax, s);
  if(lua_getfield(L, 3, "gridlines") != LUA_TNIL)
    chart_axis_major_gridlines_set_visible(
      ax, (uint8_t)strata_opt_bool(L, 3, fn, "gridlines", 0));
  lua_pop(L, 1);
  if(strata_opt_bool(L, 3, fn, "reverse", 0))
    chart_axis_set_reverse(ax);
  if(strata_opt_bool(L, 3, fn, "crossing_min", 0))
    chart_axis_set_crossing_min(ax);
  return 0;
}

/* ch:legend(position): "right", "left", "top", "bottom", "none", ... */
static int l_chart_legend(lua_State *L)
{
  static const char *const names[] = { "none", "right", "left", "top",
    "bottom", "top_right", "overlay_right", "overlay_left", NULL };
  lxw_chart *ch = report_check_child(L, 1, CHART_MT);
  chart_legend_set_position(ch, (uint8_t)luaL_checkoption(L, 2, NULL,
                                                           names));
  return 0;
}

/* ch:style(1..48): Excel's built-in chart styles. */
static int l_chart_style(lua_State *L)
{
  lxw_chart *ch = report_check_child(L, 1, CHART_MT);
  lua_Integer s = luaL_checkinteger(L, 2);
  luaL_argcheck(L, s >= 1 && s <= 48, 2, "style must be 1..48");
  chart_set_style(ch, (uint8_t)s);
  return 0;
}

const luaL_Reg report_sheet_methods[] = {
  { "write", l_sheet_write },
  { "write_string", l_sheet_write_string },
  { "write_number", l_sheet_write_number },
  { "write_boolean", l_sheet_write_boolean },
  { "write_formula", l_sheet_write_formula },
  { "write_url", l_sheet_write_url },
  { "set_column", l_sheet_set_column },
  { "set_row", l_sheet_set_row },
  { "freeze_panes", l_sheet_freeze_panes },
  { "autofilter", l_sheet_autofilter },
  { "merge", l_sheet_merge },
  { "insert_chart", l_sheet_insert_chart },
  { "color_scale", l_sheet_color_scale },
  { "setup", l_sheet_setup },
  { "name", l_sheet_name },
  { NULL, NULL } };

const luaL_Reg report_chart_methods[] = {
  { "series", l_chart_series },
  { "title", l_chart_title },
  { "axis", l_chart_axis },
  { "legend", l_chart_legend },
  { "style", l_chart_style },
  { NULL, NULL } };
