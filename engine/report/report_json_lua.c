/*
 * report_json_lua.c - xl.json: the text of the run model as
 * lua/strata/report/json.lua writes run.json (sorted keys, indented), in
 * one C walk.  The encoder was Lua and took 0.9 s of CPU for 10 000 results
 * (8.8 MB of JSON: docs/performance.md, "Runner"); the rules stay the ones
 * json.lua documents and passes in:
 *
 *   xl.json(v, array_keys, array_children, utf8_clean, null) -> text
 *
 * nil and null (cjson.null) -> null; booleans; an integer "%d"; a float the
 * first of "%.15g", "%.16g", "%.17g" that reads back to it, NaN and the
 * infinities null; a text through utf8_clean(s) when it is not valid UTF-8,
 * then quoted with \" \\ \b \f \n \r \t and \u00XX for the other control
 * bytes.  A table whose keys are all integers >= 1 is a list of its largest
 * key's length (holes null), written on one line when no element is a
 * table, else one element per line; any other non-empty table an object of
 * tostring(key) sorted as table.sort sorts texts, each value looked up by
 * that text (else by tonumber of it); an empty table "[]" when its key is
 * in array_keys or its parent's key in array_children, else "{}".  Two
 * spaces per level.  A table inside itself, a key that is not a text or a
 * number and a value of another type raise "report.json: ... at <path>"
 * ($.results[3].metrics).  tests/report/json_c.lua checks it byte for byte
 * against the Lua encoder it replaces.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_lua.h"
#include "strata.h"

/* Stack slots of the arguments and of the output buffer's holder. */
enum { A_V = 1, A_KEYS, A_CHILDREN, A_CLEAN, A_NULL, A_BUF };

#define MAX_DEPTH 10000

struct buf {
  char *p;
  size_t n, cap;
};

/* One level of the path to the value being written: an index, or a key
 * (its text, kept alive on the Lua stack by the level's key list). */
struct level {
  const void *table;
  lua_Integer index;    /* > 0: "[index]" */
  const char *key;      /* else ".key" */
  size_t keylen;
};

struct enc {
  lua_State *L;
  struct buf *b;      /* the text */
  struct buf *pb;     /* the path: pb->p holds cap levels */
  struct level *path;
  int depth, cap;
};

static int buf_gc(lua_State *L)
{
  struct buf *b = lua_touserdata(L, 1);
  free(b->p);
  b->p = NULL;
  return 0;
}

static void need(struct enc *e, size_t more)
{
  struct buf *b = e->b;
  if(strata_reserve(&b->p, &b->cap, b->n + more, 4096))
    luaL_error(e->L, "report.json: not enough memory");
}

static void put(struct enc *e, const char *s, size_t len)
{
  need(e, len);
  memcpy(e->b->p + e->b->n, s, len);
  e->b->n += len;
}

static void pad(struct enc *e, int indent)
{
  need(e, 1 + 2 * (size_t)indent);
  e->b->p[e->b->n++] = '\n';
  memset(e->b->p + e->b->n, ' ', 2 * (size_t)indent);
  e->b->n += 2 * (size_t)indent;
}

/* Raise "report.json: <what> at <path>". */
static void fail(struct enc *e, const char *what)
{
  lua_State *L = e->L;
  luaL_Buffer lb;
  char num[32];
  int i;
  luaL_buffinit(L, &lb);
  luaL_addstring(&lb, "report.json: ");
  luaL_addstring(&lb, what);
  luaL_addstring(&lb, " at $");
  for(i = 1; i <= e->depth; i++) {
    struct level *l = &e->path[i];
    if(l->index > 0) {
      snprintf(num, sizeof(num), "[%lld]", (long long)l->index);
      luaL_addstring(&lb, num);
    }
    else if(l->key) {
      luaL_addchar(&lb, '.');
      luaL_addlstring(&lb, l->key, l->keylen);
    }
  }
  luaL_pushresult(&lb);
  lua_error(L);
}

/* Lua 5.4's l_strcmp (lvm.c): how table.sort orders two texts (strcoll
 * per segment between NULs; equal segments may differ in length). */
static int text_cmp(const char *s1, size_t rl1, const char *s2, size_t rl2)
{
  for(;;) {
    int temp = strcoll(s1, s2);
    size_t zl1, zl2;
    if(temp != 0)
      return temp;
    zl1 = strlen(s1);
    zl2 = strlen(s2);
    if(zl2 == rl2)
      return zl1 == rl1 ? 0 : 1;
    if(zl1 == rl1)
      return -1;
    zl1++;
    zl2++;
    s1 += zl1;
    rl1 -= zl1;
    s2 += zl2;
    rl2 -= zl2;
  }
}

struct key {
  const char *s;
  size_t len;
  lua_Integer index;    /* in the table of texts */
};

static int key_cmp(const void *a, const void *b)
{
  const struct key *x = a, *y = b;
  return text_cmp(x->s, x->len, y->s, y->len);
}

/* json.lua's quote: the text at idx (valid UTF-8 made by utf8_clean). */
static void put_text(struct enc *e, int idx)
{
  lua_State *L = e->L;
  size_t len, i, run = 0;
  const char *s = lua_tolstring(L, idx, &len);
  int cleaned = 0;
  if(!report_utf8_valid(s, len)) {
    lua_pushvalue(L, A_CLEAN);
    lua_pushvalue(L, idx);
    lua_call(L, 1, 1);
    s = luaL_checklstring(L, -1, &len);
    cleaned = 1;
  }
  need(e, len + 2);
  e->b->p[e->b->n++] = '"';
  for(i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *esc;
    char u[8];
    if(c != '"' && c != '\\' && !iscntrl(c))
      continue;
    put(e, s + run, i - run);
    run = i + 1;
    switch(c) {
    case '"': esc = "\\\""; break;
    case '\\': esc = "\\\\"; break;
    case '\b': esc = "\\b"; break;
    case '\f': esc = "\\f"; break;
    case '\n': esc = "\\n"; break;
    case '\r': esc = "\\r"; break;
    case '\t': esc = "\\t"; break;
    default:
      snprintf(u, sizeof(u), "\\u%04x", c);
      esc = u;
    }
    put(e, esc, strlen(esc));
  }
  put(e, s + run, len - run);
  put(e, "\"", 1);
  if(cleaned)
    lua_pop(L, 1);
}

/* json.lua's number: integers "%d"; floats the shortest of %.15g, %.16g,
 * %.17g that reads back the same. */
static void put_number(struct enc *e, int idx)
{
  lua_State *L = e->L;
  char b[64];
  double d;
  int len;
  if(lua_isinteger(L, idx)) {
    len = snprintf(b, sizeof(b), LUA_INTEGER_FMT,
                   (LUAI_UACINT)lua_tointeger(L, idx));
    put(e, b, (size_t)len);
    return;
  }
  d = lua_tonumber(L, idx);
  if(isnan(d) || isinf(d)) {
    put(e, "null", 4);
    return;
  }
  len = snprintf(b, sizeof(b), "%.15g", d);
  if(strtod(b, NULL) != d) {
    len = snprintf(b, sizeof(b), "%.16g", d);
    if(strtod(b, NULL) != d)
      len = snprintf(b, sizeof(b), "%.17g", d);
  }
  put(e, b, (size_t)len);
}

/* Whether the text at idx is a key of the table at set. */
static int in_set(lua_State *L, int set, int idx)
{
  int yes;
  if(lua_isnil(L, idx))
    return 0;
  lua_pushvalue(L, idx);
  yes = lua_rawget(L, set) != LUA_TNIL && lua_toboolean(L, -1);
  lua_pop(L, 1);
  return yes;
}

static void put_value(struct enc *e, int idx, int indent, int key,
                      int parent);

/* Table self on the path of tables being written: a cycle or a table
 * nested too deep fails here. */
static void enter(struct enc *e, const void *self)
{
  lua_State *L = e->L;
  for(int i = 0; i < e->depth; i++)    /* the tables it is inside */
    if(e->path[i].table == self)
      fail(e, "a cycle");
  if(e->depth + 1 >= MAX_DEPTH || !lua_checkstack(L, 16))
    fail(e, "a table nested too deep");
  if(e->depth + 1 >= e->cap) {
    int cap = e->cap * 2;
    struct level *p = realloc(e->path, (size_t)cap * sizeof(*p));
    if(!p)
      luaL_error(L, "report.json: not enough memory");
    e->pb->p = (char *)p;
    e->path = p;
    e->cap = cap;
  }
  e->path[e->depth].table = self;
}

/* How many keys the table at t has (*n), and whether they are all
 * integers >= 1 (a list; *max the largest). */
static int is_list(lua_State *L, int t, lua_Integer *n, lua_Integer *max)
{
  int list = 1;
  *n = *max = 0;
  lua_pushnil(L);
  while(lua_next(L, t)) {
    lua_pop(L, 1);
    (*n)++;
    if(!list)
      continue;
    if(lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1) {
      if(lua_tointeger(L, -1) > *max)
        *max = lua_tointeger(L, -1);
    }
    else
      list = 0;
  }
  return list;
}

/* A list: on one line when no item is a table, else one item a line. */
static void put_list(struct enc *e, int t, lua_Integer max, int indent,
                     int key)
{
  lua_State *L = e->L;
  int flat = 1;
  lua_Integer i;
  for(i = 1; i <= max && flat; i++) {
    flat = lua_geti(L, t, i) != LUA_TTABLE;
    lua_pop(L, 1);
  }
  put(e, "[", 1);
  for(i = 1; i <= max; i++) {
    if(i > 1)
      put(e, ",", 1);
    if(!flat)
      pad(e, indent + 1);
    lua_geti(L, t, i);
    e->path[e->depth + 1] = (struct level){ NULL, i, NULL, 0 };
    e->depth++;
    put_value(e, lua_gettop(L), indent + 1, 0, key);
    e->depth--;
    lua_pop(L, 1);
  }
  if(!flat)
    pad(e, indent);
  put(e, "]", 1);
}

/* Every key of the table at t as text (tostring), in a table pushed on
 * the stack (its slot in *texts), and those texts sorted: returned in a
 * userdata pushed above it (*nk of them). */
static struct key *sorted_keys(struct enc *e, int t, lua_Integer n,
                               int *texts, lua_Integer *nk)
{
  lua_State *L = e->L;
  struct key *keys;
  lua_createtable(L, n < 1 << 20 ? (int)n : 0, 0);
  *texts = lua_gettop(L);
  *nk = 0;
  lua_pushnil(L);
  while(lua_next(L, t)) {
    int kt = lua_type(L, -2);
    lua_pop(L, 1);
    if(kt != LUA_TSTRING && kt != LUA_TNUMBER) {
      char what[64];
      snprintf(what, sizeof(what), "a %s key", lua_typename(L, kt));
      fail(e, what);
    }
    lua_pushvalue(L, -1);
    lua_tolstring(L, -1, NULL);   /* tostring(k), on a copy: next needs k */
    lua_rawseti(L, *texts, ++*nk);
  }
  keys = lua_newuserdatauv(L, (size_t)*nk * sizeof(*keys), 0);
  for(lua_Integer k = 0; k < *nk; k++) {
    lua_rawgeti(L, *texts, k + 1);   /* held by texts: stays where it is */
    keys[k].s = lua_tolstring(L, -1, &keys[k].len);
    keys[k].index = k + 1;
    lua_pop(L, 1);
  }
  qsort(keys, (size_t)*nk, sizeof(*keys), key_cmp);
  return keys;
}

/* An object: its keys sorted as text, one a line. */
static void put_object(struct enc *e, int t, lua_Integer n, int indent,
                       int key)
{
  lua_State *L = e->L;
  int texts, top = lua_gettop(L);
  lua_Integer nk;
  struct key *keys = sorted_keys(e, t, n, &texts, &nk);
  put(e, "{", 1);
  for(lua_Integer k = 0; k < nk; k++) {
    int ks;
    size_t kl;
    lua_rawgeti(L, texts, keys[k].index);
    ks = lua_gettop(L);
    if(k > 0)
      put(e, ",", 1);
    pad(e, indent + 1);
    put_text(e, ks);
    put(e, ": ", 2);
    lua_pushvalue(L, ks);
    if(lua_gettable(L, t) == LUA_TNIL) {
      const char *kt = lua_tolstring(L, ks, &kl);
      lua_pop(L, 1);
      if(lua_stringtonumber(L, kt) == kl + 1)    /* tonumber(k) */
        lua_gettable(L, t);
      else
        lua_pushnil(L);
    }
    e->path[e->depth + 1] = (struct level){ NULL, 0, NULL, 0 };
    e->path[e->depth + 1].key = lua_tolstring(L, ks,
                                              &e->path[e->depth + 1].keylen);
    e->depth++;
    put_value(e, lua_gettop(L), indent + 1, ks, key);
    e->depth--;
    lua_pop(L, 2);    /* the value, the key's text */
  }
  pad(e, indent);
  put(e, "}", 1);
  lua_settop(L, top);
}

/* The table at t: key and parent are stack slots of its key and its
 * parent's key (0: none). */
static void put_table(struct enc *e, int t, int indent, int key, int parent)
{
  lua_State *L = e->L;
  lua_Integer n, max;
  int list;
  enter(e, lua_topointer(L, t));
  list = is_list(L, t, &n, &max);
  if(n == 0) {
    int as_list = (key && in_set(L, A_KEYS, key)) ||
                  (parent && in_set(L, A_CHILDREN, parent));
    put(e, as_list ? "[]" : "{}", 2);
  }
  else if(list)
    put_list(e, t, max, indent, key);
  else
    put_object(e, t, n, indent, key);
}

static void put_value(struct enc *e, int idx, int indent, int key,
                      int parent)
{
  lua_State *L = e->L;
  switch(lua_type(L, idx)) {
  case LUA_TNIL:
    put(e, "null", 4);
    return;
  case LUA_TBOOLEAN:
    if(lua_toboolean(L, idx))
      put(e, "true", 4);
    else
      put(e, "false", 5);
    return;
  case LUA_TNUMBER:
    put_number(e, idx);
    return;
  case LUA_TSTRING:
    put_text(e, idx);
    return;
  case LUA_TTABLE:
    put_table(e, idx, indent, key, parent);
    return;
  default:
    if(lua_rawequal(L, idx, A_NULL)) {
      put(e, "null", 4);
      return;
    }
    {
      char what[64];
      snprintf(what, sizeof(what), "cannot encode a %s", luaL_typename(L, idx));
      fail(e, what);
    }
  }
}

int report_json_lua(lua_State *L)
{
  struct enc e;
  struct buf *b;
  luaL_checkany(L, A_V);
  luaL_checktype(L, A_KEYS, LUA_TTABLE);
  luaL_checktype(L, A_CHILDREN, LUA_TTABLE);
  luaL_checktype(L, A_CLEAN, LUA_TFUNCTION);
  luaL_checkany(L, A_NULL);
  lua_settop(L, A_NULL);
  b = lua_newuserdatauv(L, sizeof(*b), 0);    /* A_BUF */
  b->p = NULL;
  b->n = b->cap = 0;
  lua_newtable(L);
  lua_pushcfunction(L, buf_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  e.L = L;
  e.b = b;
  e.depth = 0;
  e.cap = 64;
  /* the path in a userdata too: freed by the collector after an error */
  e.pb = lua_newuserdatauv(L, sizeof(*e.pb), 0);
  e.pb->p = malloc((size_t)e.cap * sizeof(struct level));
  e.pb->n = e.pb->cap = 0;
  lua_newtable(L);
  lua_pushcfunction(L, buf_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  if(!e.pb->p)
    return luaL_error(L, "report.json: not enough memory");
  e.path = (struct level *)e.pb->p;
  put_value(&e, A_V, 0, 0, 0);
  lua_pushlstring(L, b->p ? b->p : "", b->n);
  free(b->p);
  b->p = NULL;
  free(e.pb->p);
  e.pb->p = NULL;
  return 1;
}
