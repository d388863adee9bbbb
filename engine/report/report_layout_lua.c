/*
 * report_layout_lua.c - the worksheet's cell writes that lay out as they
 * go (lua/strata/report/xlsheets.lua, Sheet): each write counts its text
 * for its column's width and remembers the wrapped texts, so that
 * Sheet:fit_columns can size columns and rows afterwards.  One cell
 * (ws:put) or a whole block of rows with their formats (ws:put_rows): a
 * report of 10 000 results writes ~140 000 cells, and the per-cell work
 * done in Lua was most of `strata report` (docs/performance.md, "Runner").
 * The Lua side lays out (which value, which format), this writes.
 *
 *   ws:layout{ wrapping = { [fmt] = true, ... }, clean = function(text) }
 *   ws:put(row, col, value [, format [, nowidth]])
 *   ws:put_rows(row0, col0, rows, cols)    -- rows[i][j] at row0 + i - 1
 *   ws:widen(col, value)                   -- count value for col's width
 *   ws:widths()             -> { [col] = width }
 *   ws:wrapped_lines(widths [, default]) -> { [row] = lines } (lines > 1)
 *
 * A value: a number (NaN and the infinities: a blank), a string, a
 * boolean, nil or a table (a blank; nothing when there is no format
 * either).  A string that is not valid UTF-8 or longer than Excel's
 * 32767 is passed through layout's clean first (the writer's rule, in
 * Lua: it is rare).  Widths: a number's digits, separators and sign, a
 * text's widest line in characters, 5 for a boolean; a column gets a
 * width once something wider than 0 is written to it (or it is widened).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_lua.h"
#include "strata.h"

/* A wrapped text: where, and the characters of each of its lines. */
struct wrapped {
  lxw_row_t row;
  lxw_col_t col;
  size_t first, n;  /* its lines in layout.lines */
};

struct layout {
  int64_t *width;     /* per column; -1: none yet */
  size_t nwidth;
  struct wrapped *wrapped;
  size_t nwrapped, capwrapped;
  size_t *lines;
  size_t nlines, caplines;
  lxw_format *wrapping[16];  /* formats whose texts wrap */
  int nwrapping;
};

/* A worksheet handle: the child (first: report_check_child reads it) and
 * what its writes counted.  User value 1: the book; 2: the cleaner. */
struct sheet {
  struct child c;
  struct layout lay;
};

void *report_new_sheet(lua_State *L, lxw_worksheet *ws)
{
  struct sheet *s = lua_newuserdatauv(L, sizeof(*s), 2);
  memset(s, 0, sizeof(*s));
  s->c.p = ws;
  s->c.book = lua_touserdata(L, 1);
  luaL_setmetatable(L, SHEET_MT);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);  /* the sheet pins its workbook */
  return s;
}

int report_sheet_gc(lua_State *L)
{
  struct sheet *s = luaL_checkudata(L, 1, SHEET_MT);
  free(s->lay.width);
  free(s->lay.wrapped);
  free(s->lay.lines);
  memset(&s->lay, 0, sizeof(s->lay));
  return 0;
}

static struct sheet *check_sheet(lua_State *L, int idx)
{
  report_check_child(L, idx, SHEET_MT);
  return lua_touserdata(L, idx);
}

static void *grow(lua_State *L, void *p, size_t *cap, size_t need,
                  size_t size)
{
  size_t n = *cap ? *cap : 64;
  void *q;

  if(need <= *cap)
    return p;
  while(n < need)
    n *= 2;
  q = realloc(p, n * size);
  if(!q)
    luaL_error(L, "report.put: out of memory");
  *cap = n;
  return q;
}

/* widths[col] = max(widths[col], w); force: even when w is 0. */
static void count_width(lua_State *L, struct layout *lay, lxw_col_t col,
                        int64_t w, int force)
{
  if(col >= lay->nwidth) {
    size_t n = lay->nwidth;
    size_t cap = n;
    lay->width = grow(L, lay->width, &cap, (size_t)col + 1,
                      sizeof(*lay->width));
    for(size_t i = n; i < cap; i++)
      lay->width[i] = -1;
    lay->nwidth = cap;
  }
  if(w > (lay->width[col] < 0 ? 0 : lay->width[col]) ||
     (force && lay->width[col] < 0))
    lay->width[col] = w > 0 ? w : 0;
}

static int64_t width_of(lua_State *L, int idx)
{
  size_t n;
  const char *s;

  switch(lua_type(L, idx)) {
  case LUA_TNUMBER:
    if(lua_isinteger(L, idx))
      return report_integer_width(lua_tointeger(L, idx));
    return report_number_width(lua_tonumber(L, idx));
  case LUA_TBOOLEAN:
    return 5;
  case LUA_TSTRING:
    s = lua_tolstring(L, idx, &n);
    return (int64_t)report_text_width(s, n);
  case LUA_TNIL:
  case LUA_TNONE:
    return 0;
  default:
    /* tostring(v): a table's address text, as wide as the Lua said */
    s = luaL_tolstring(L, idx, &n);
    lua_pop(L, 1);
    return (int64_t)report_text_width(s, n);
  }
}

static void remember_wrapped(lua_State *L, struct layout *lay, lxw_row_t r,
                             lxw_col_t c, const char *s, size_t n)
{
  struct wrapped *w;

  lay->wrapped = grow(L, lay->wrapped, &lay->capwrapped, lay->nwrapped + 1,
                      sizeof(*lay->wrapped));
  w = &lay->wrapped[lay->nwrapped++];
  w->row = r;
  w->col = c;
  w->first = lay->nlines;
  w->n = 0;
  for(;;) {
    const char *nl = memchr(s, '\n', n);
    size_t len = nl ? (size_t)(nl - s) : n;
    lay->lines = grow(L, lay->lines, &lay->caplines, lay->nlines + 1,
                      sizeof(*lay->lines));
    lay->lines[lay->nlines++] = report_text_chars(s, len);
    w->n++;
    if(!nl)
      return;
    s = nl + 1;
    n -= len + 1;
  }
}

static int wraps(const struct layout *lay, const lxw_format *f)
{
  for(int i = 0; i < lay->nwrapping; i++)
    if(lay->wrapping[i] == f)
      return 1;
  return 0;
}

/*
 * Write the value at idx to (r, c) in format f (NULL: none) and count it.
 * The value's slot may be replaced by its cleaned text.
 */
static void put_cell(lua_State *L, struct sheet *s, lxw_row_t r,
                     lxw_col_t c, int idx, lxw_format *f, int nowidth)
{
  lxw_worksheet *ws = s->c.p;
  lxw_error err = LXW_NO_ERROR;
  int t = lua_type(L, idx);
  const char *text;
  size_t n;

  if(t == LUA_TTABLE)
    t = LUA_TNIL;
  if(t == LUA_TSTRING) {
    text = lua_tolstring(L, idx, &n);
    if(n > REPORT_MAX_TEXT || !report_utf8_valid(text, n)) {
      if(lua_getiuservalue(L, 1, 2) != LUA_TFUNCTION)
        luaL_error(L, "report.put: a text to clean and no ws:layout{clean=}");
      lua_pushvalue(L, idx);
      lua_call(L, 1, 1);
      if(lua_type(L, -1) != LUA_TSTRING)
        luaL_error(L, "report.put: layout's clean returned no text");
      lua_replace(L, idx);
      text = lua_tolstring(L, idx, &n);
    }
  }
  if(t == LUA_TNIL && !f)
    return;
  switch(t) {
  case LUA_TNUMBER: {
    double v = lua_tonumber(L, idx);
    err = isfinite(v) ? worksheet_write_number(ws, r, c, v, f)
                      : worksheet_write_blank(ws, r, c, f);
    break;
  }
  case LUA_TSTRING:
    err = worksheet_write_string(ws, r, c, lua_tostring(L, idx), f);
    break;
  case LUA_TBOOLEAN:
    err = worksheet_write_boolean(ws, r, c, lua_toboolean(L, idx), f);
    break;
  default:
    err = worksheet_write_blank(ws, r, c, f);
    break;
  }
  if(err) {
    char cell[LXW_MAX_CELL_NAME_LENGTH];
    lxw_rowcol_to_cell(cell, r, c);
    report_raise(L, "put", cell, err);
  }
  if(t == LUA_TSTRING && f && wraps(&s->lay, f))
    remember_wrapped(L, &s->lay, r, c, text, n);
  if(!nowidth)
    count_width(L, &s->lay, c, t == LUA_TNIL ? 0 : width_of(L, idx), 0);
}

/* A format argument: nil, or a format of this sheet's workbook. */
static lxw_format *to_format(lua_State *L, struct sheet *s, int idx,
                             int fmt_mt)
{
  struct child *f;

  idx = lua_absindex(L, idx);
  if(lua_isnoneornil(L, idx))
    return NULL;
  f = lua_touserdata(L, idx);
  if(!f || !lua_getmetatable(L, idx) || !lua_rawequal(L, -1, fmt_mt))
    luaL_error(L, "report.put: a format expected, got %s",
               luaL_typename(L, idx));
  lua_pop(L, 1);
  if(f->book != s->c.book)
    luaL_error(L, "report.put: a format of another workbook");
  return f->p;
}

/* ws:layout{wrapping = {[format] = true, ...}, clean = function} */
static int l_layout(lua_State *L)
{
  static const char *const keys[] = { "wrapping", "clean", NULL };
  struct sheet *s = check_sheet(L, 1);
  int fmt_mt;

  strata_check_keys(L, 2, "report.layout", keys);
  luaL_getmetatable(L, FORMAT_MT);
  fmt_mt = lua_gettop(L);
  s->lay.nwrapping = 0;
  if(lua_getfield(L, 2, "wrapping") == LUA_TTABLE) {
    lua_pushnil(L);
    while(lua_next(L, -2)) {
      if(lua_toboolean(L, -1)) {
        if(s->lay.nwrapping == (int)(sizeof(s->lay.wrapping) /
                                     sizeof(s->lay.wrapping[0])))
          return luaL_error(L, "report.layout: too many wrapping formats");
        s->lay.wrapping[s->lay.nwrapping++] = to_format(L, s, -2, fmt_mt);
      }
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  lua_getfield(L, 2, "clean");
  if(!lua_isnil(L, -1))
    luaL_checktype(L, -1, LUA_TFUNCTION);
  lua_setiuservalue(L, 1, 2);
  return 0;
}

/* ws:put(row, col, value [, format [, nowidth]]) */
static int l_put(lua_State *L)
{
  struct sheet *s = check_sheet(L, 1);
  lxw_row_t r = report_check_row(L, 2);
  lxw_col_t c = report_check_col(L, 3);
  lxw_format *f;
  int nowidth = lua_toboolean(L, 6);

  lua_settop(L, 6);
  luaL_getmetatable(L, FORMAT_MT);
  f = to_format(L, s, 5, 7);
  put_cell(L, s, r, c, 4, f, nowidth);
  return 0;
}

/* How a column of ws:put_rows picks each cell's format. */
struct colspec {
  lxw_format *num, *text;  /* numbers; everything else */
  int by;                  /* stack index of {[value] = format}, or 0 */
  int cells;               /* stack index of {[i] = format}, or 0 */
  int nowidth;
};

static lxw_format *opt_field_format(lua_State *L, struct sheet *s, int t,
                                    const char *k, int fmt_mt)
{
  lxw_format *f;
  lua_getfield(L, t, k);
  f = to_format(L, s, -1, fmt_mt);
  lua_pop(L, 1);
  return f;
}

/* a table field kept on the stack (its index), or 0 when absent */
static int opt_field_table(lua_State *L, int t, const char *k)
{
  int ty = lua_getfield(L, t, k);
  if(ty == LUA_TTABLE)
    return lua_gettop(L);
  if(ty != LUA_TNIL)
    luaL_error(L, "report.put_rows: column option '%s' must be a table", k);
  lua_pop(L, 1);
  return 0;
}

/*
 * ws:put_rows(row0, col0, rows, cols): rows[i][j] goes to (row0 + i - 1,
 * col0 + j - 1) for j = 1 .. #cols, as ws:put would write it; cols[j] =
 * { cells = {[i] = format}, by = {[value] = format}, num = format, text =
 * format, nowidth = bool }: a cell's format is cells[i], else by[value],
 * else num (a number) or text (anything else).
 */
static int l_put_rows(lua_State *L)
{
  struct sheet *s = check_sheet(L, 1);
  lxw_row_t r0 = report_check_row(L, 2);
  lxw_col_t c0 = report_check_col(L, 3);
  int ncols, fmt_mt, val;
  struct colspec *spec;

  luaL_checktype(L, 4, LUA_TTABLE);
  luaL_checktype(L, 5, LUA_TTABLE);
  lua_settop(L, 5);
  ncols = (int)lua_rawlen(L, 5);
  if((lua_Integer)c0 + ncols > LXW_COL_MAX)
    return luaL_error(L, "report.put_rows: %d columns from column %d do not "
                      "fit", ncols, (int)c0);
  luaL_getmetatable(L, FORMAT_MT);
  fmt_mt = lua_gettop(L);
  /* each column: its spec table and up to two tables kept on the stack */
  luaL_checkstack(L, 3 * ncols + 8, "report.put_rows: too many columns");
  spec = lua_newuserdatauv(L, sizeof(*spec) * (size_t)(ncols ? ncols : 1),
                           0);
  for(int j = 0; j < ncols; j++) {
    int t;
    if(lua_rawgeti(L, 5, j + 1) != LUA_TTABLE)
      return luaL_error(L, "report.put_rows: column %d: a table expected",
                        j + 1);
    t = lua_gettop(L);
    spec[j].num = opt_field_format(L, s, t, "num", fmt_mt);
    spec[j].text = opt_field_format(L, s, t, "text", fmt_mt);
    lua_getfield(L, t, "nowidth");
    spec[j].nowidth = lua_toboolean(L, -1);
    lua_pop(L, 1);
    spec[j].by = opt_field_table(L, t, "by");
    spec[j].cells = opt_field_table(L, t, "cells");
  }
  val = lua_gettop(L) + 1;
  lua_pushnil(L);  /* the value slot */
  for(lua_Integer i = 1; lua_rawgeti(L, 4, i) != LUA_TNIL; i++) {
    int row = lua_gettop(L);
    lxw_row_t r;
    if(lua_type(L, row) != LUA_TTABLE)
      return luaL_error(L, "report.put_rows: row %d: a table expected",
                        (int)i);
    if((lua_Integer)r0 + i - 1 >= LXW_ROW_MAX)
      return luaL_error(L, "report.put_rows: row %d is past the sheet's end",
                        (int)i);
    r = (lxw_row_t)(r0 + i - 1);
    for(int j = 0; j < ncols; j++) {
      lxw_format *f = NULL;
      int found = 0;
      lua_rawgeti(L, row, j + 1);
      lua_replace(L, val);
      if(spec[j].cells) {
        if(lua_rawgeti(L, spec[j].cells, i) != LUA_TNIL) {
          f = to_format(L, s, -1, fmt_mt);
          found = 1;
        }
        lua_pop(L, 1);
      }
      if(!found && spec[j].by && !lua_isnil(L, val)) {
        lua_pushvalue(L, val);
        if(lua_rawget(L, spec[j].by) != LUA_TNIL) {
          f = to_format(L, s, -1, fmt_mt);
          found = 1;
        }
        lua_pop(L, 1);
      }
      if(!found)
        f = lua_type(L, val) == LUA_TNUMBER ? spec[j].num : spec[j].text;
      put_cell(L, s, r, (lxw_col_t)(c0 + j), val, f, spec[j].nowidth);
    }
    lua_settop(L, val);
  }
  return 0;
}

/* ws:widen(col, value): count value for col's width, even a width of 0. */
static int l_widen(lua_State *L)
{
  struct sheet *s = check_sheet(L, 1);
  lxw_col_t c = report_check_col(L, 2);
  count_width(L, &s->lay, c, width_of(L, 3), 1);
  return 0;
}

/* ws:widths() -> { [col] = width } for the columns written to */
static int l_widths(lua_State *L)
{
  struct sheet *s = check_sheet(L, 1);
  lua_newtable(L);
  for(size_t c = 0; c < s->lay.nwidth; c++)
    if(s->lay.width[c] >= 0) {
      lua_pushinteger(L, s->lay.width[c]);
      lua_rawseti(L, -2, (lua_Integer)c);
    }
  return 1;
}

/*
 * ws:wrapped_lines(widths [, default]) -> { [row] = lines }: the lines
 * the wrapped texts of each row take in columns widths[col] (default
 * where absent: 8.43, Excel's) characters wide; rows of one line are
 * left out.  A line of n characters takes ceil(n / width) lines, at
 * least one.
 */
static int l_wrapped_lines(lua_State *L)
{
  struct sheet *s = check_sheet(L, 1);
  double def = luaL_optnumber(L, 3, 8.43);
  const struct layout *lay = &s->lay;

  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  lua_newtable(L);
  for(size_t k = 0; k < lay->nwrapped; k++) {
    const struct wrapped *w = &lay->wrapped[k];
    double width = def;
    lua_Integer lines = 0, prev;
    if(lua_rawgeti(L, 2, (lua_Integer)w->col) == LUA_TNUMBER)
      width = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if(width < 1)
      width = 1;
    for(size_t i = 0; i < w->n; i++) {
      double per = ceil((double)lay->lines[w->first + i] / width);
      lines += per < 1 ? 1 : (lua_Integer)per;
    }
    prev = lua_rawgeti(L, 3, (lua_Integer)w->row) == LUA_TNUMBER ?
      lua_tointeger(L, -1) : 1;
    lua_pop(L, 1);
    if(lines > prev) {
      lua_pushinteger(L, lines);
      lua_rawseti(L, 3, (lua_Integer)w->row);
    }
  }
  return 1;
}

const luaL_Reg report_layout_methods[] = {
  { "layout", l_layout },
  { "put", l_put },
  { "put_rows", l_put_rows },
  { "widen", l_widen },
  { "widths", l_widths },
  { "wrapped_lines", l_wrapped_lines },
  { NULL, NULL } };
