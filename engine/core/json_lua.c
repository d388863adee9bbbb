/*
 * json_lua.c - core.clean_json: a journal record as one JSON line, its
 * secrets masked as it is written, in one walk (the runner journals one
 * record per cell: docs/performance.md, "Runner").
 *
 * core.clean_json(v, texts, keys, mask, is_secret) -> the text
 * cjson.encode(core.clean_copy(v, texts, keys, mask, is_secret)) has, as
 * JSON: every text (keys too) is texts[s] or mask(s), and a key that
 * is_secret (keys[k], else is_secret(k)) has its text or other
 * non-table, non-number, non-boolean value written as "***"
 * (lua/strata/redact.lua says what is masked).  Nothing is copied: the
 * walk writes what clean_copy's copy would hold.
 *
 * The encoding is lua-cjson 2.1.0's (lua_cjson.c and fpconv.c at
 * mpx/lua-cjson tag 2.1.0, the Debian lua-cjson 2.1.0+dfsg strata links)
 * as strata.runner configures it (encode_invalid_numbers("null"),
 * encode_sparse_array(true)): tables walked with next; a table whose keys
 * are all whole numbers >= 1 is an array of its largest key's length
 * (holes null) unless more than half holes past index 10, else an object,
 * an empty one "{}"; numbers "%.14g" (whole ones below 1e14 written
 * directly: the same digits), NaN and infinities null; a number key in
 * quotes; escapes \" \\ \/ \b \t \n \f \r and \u00XX for the other bytes
 * below 0x20 and for 0x7f; nesting deeper than 1000 tables (a cycle) and
 * values that are no JSON raise cjson's messages.  Byte for byte the same
 * text as cjson.encode of the same table (tests/spec/redact.lua checks);
 * where masking changes a table, its keys come in the original's order
 * instead of the copy's (the same JSON object).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"

/* Stack slots of the arguments and of the output buffer. */
enum { J_V = 1, J_TEXTS, J_KEYS, J_MASK, J_SECRET, J_BUF };

#define MAX_DEPTH 1000    /* cjson's DEFAULT_ENCODE_MAX_DEPTH */
#define SPARSE_RATIO 2    /* cjson's DEFAULT_SPARSE_RATIO */
#define SPARSE_SAFE 10    /* cjson's DEFAULT_SPARSE_SAFE */

/* The text so far: in the buffer kept between calls (a fresh buffer for
 * each of 10 000 records was a fifth of the cost, in the collector), or,
 * in a call made while another one writes in it (mask calling back), in
 * a userdata at J_BUF.  kept.busy is cleared by the to-be-closed guard at
 * J_BUF, on return as on a raised error. */
static struct {
  char *p;
  size_t cap;
  int busy;
} kept;

struct out {
  lua_State *L;
  char *p;
  size_t n, cap;
  int in_kept;
};

static void need(struct out *o, size_t more)
{
  char *p;
  size_t cap = o->cap;
  if(o->n + more <= cap)
    return;
  while(cap < o->n + more)
    cap *= 2;
  if(o->in_kept) {
    p = realloc(o->p, cap);
    if(!p)
      luaL_error(o->L, "not enough memory");
    kept.p = p;
    kept.cap = cap;
  }
  else {
    p = lua_newuserdatauv(o->L, cap, 0);
    memcpy(p, o->p, o->n);
    lua_replace(o->L, J_BUF);
  }
  o->p = p;
  o->cap = cap;
}

static void put(struct out *o, const char *s, size_t len)
{
  need(o, len);
  memcpy(o->p + o->n, s, len);
  o->n += len;
}

static void putc1(struct out *o, char c)
{
  need(o, 1);
  o->p[o->n++] = c;
}

/* cjson's char2escape: NULL where the byte is written as it is. */
static const char *escape_of(unsigned char c)
{
  static const char *const low[32] = {
    "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005",
    "\\u0006", "\\u0007", "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r",
    "\\u000e", "\\u000f", "\\u0010", "\\u0011", "\\u0012", "\\u0013",
    "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
    "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f" };
  if(c < 32)
    return low[c];
  switch(c) {
  case '"': return "\\\"";
  case '\\': return "\\\\";
  case '/': return "\\/";
  case 0x7f: return "\\u007f";
  }
  return NULL;
}

/* Which bytes escape_of escapes (made once: a table test per byte). */
static unsigned char escapes[256];

static void put_string(struct out *o, const char *s, size_t len)
{
  size_t i, run = 0;
  need(o, len + 2);
  o->p[o->n++] = '"';
  for(i = 0; i < len; i++) {
    const char *e;
    if(!escapes[(unsigned char)s[i]])
      continue;
    e = escape_of((unsigned char)s[i]);
    put(o, s + run, i - run);
    put(o, e, strlen(e));
    run = i + 1;
  }
  put(o, s + run, len - run);
  putc1(o, '"');
}

/* A whole number below 1e14 in magnitude: "%.14g" writes its digits. */
static void put_whole(struct out *o, long long v)
{
  char b[24];
  int i = (int)sizeof(b);
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v
                               : (unsigned long long)v;
  do {
    b[--i] = (char)('0' + u % 10);
    u /= 10;
  } while(u);
  if(v < 0)
    b[--i] = '-';
  put(o, b + i, sizeof(b) - (size_t)i);
}

static void put_number(struct out *o, int idx)
{
  lua_State *L = o->L;
  double d;
  char b[32];    /* cjson's FPCONV_G_FMT_BUFSIZE */
  int len;
  if(lua_isinteger(L, idx)) {
    lua_Integer i = lua_tointeger(L, idx);
    if(i > -100000000000000LL && i < 100000000000000LL) {
      put_whole(o, (long long)i);
      return;
    }
  }
  d = lua_tonumber(L, idx);
  if(isinf(d) || isnan(d)) {
    put(o, "null", 4);
    return;
  }
  if(d == floor(d) && fabs(d) < 1e14 && !(d == 0 && signbit(d))) {
    put_whole(o, (long long)d);
    return;
  }
  len = snprintf(b, sizeof(b), "%.14g", d);
  put(o, b, (size_t)len);
}

/* cjson's messages, without a position (cjson.encode called by pcall
 * has none: the journal's message stays the same). */
static void fail(lua_State *L, int idx, const char *reason)
{
  lua_pushfstring(L, "Cannot serialise %s: %s", luaL_typename(L, idx), reason);
  lua_error(L);
}

/* The clean text of the string at idx (texts[s] or mask(s)), pushed. */
static void push_clean(lua_State *L, int idx)
{
  strata_memo_call(L, J_TEXTS, J_MASK, idx);
}

static void put_clean_string(struct out *o, int idx)
{
  size_t len;
  const char *s;
  push_clean(o->L, idx);
  s = lua_tolstring(o->L, -1, &len);
  if(!s)
    fail(o->L, -1, "type not supported");
  put_string(o, s, len);
  lua_pop(o->L, 1);
}

static int secret_key(lua_State *L, int k)
{
  int secret;
  strata_memo_call(L, J_KEYS, J_SECRET, k);
  secret = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return secret;
}

static void put_value(struct out *o, int idx, int depth);

/* cjson's lua_array_length: the array's length, or -1 for an object. */
static lua_Integer array_length(lua_State *L, int t)
{
  double max = 0, items = 0;
  lua_pushnil(L);
  while(lua_next(L, t)) {
    double k;
    lua_pop(L, 1);
    if(lua_type(L, -1) == LUA_TNUMBER && (k = lua_tonumber(L, -1)) != 0 &&
       floor(k) == k && k >= 1) {
      if(k > max)
        max = k;
      items++;
      continue;
    }
    lua_pop(L, 1);
    return -1;
  }
  if(max > items * SPARSE_RATIO && max > SPARSE_SAFE)
    return -1;    /* excessively sparse: an object (encode_sparse_array) */
  return (lua_Integer)max;
}

static void put_table(struct out *o, int t, int depth)
{
  lua_State *L = o->L;
  lua_Integer len, i;
  int comma = 0;
  if(++depth > MAX_DEPTH || !lua_checkstack(L, 8)) {
    lua_pushfstring(L, "Cannot serialise, excessive nesting (%d)", depth);
    lua_error(L);
  }
  len = array_length(L, t);
  if(len > 0) {
    putc1(o, '[');
    for(i = 1; i <= len; i++) {
      if(i > 1)
        putc1(o, ',');
      lua_rawgeti(L, t, i);
      put_value(o, lua_gettop(L), depth);
      lua_pop(L, 1);
    }
    putc1(o, ']');
    return;
  }
  putc1(o, '{');
  lua_pushnil(L);
  while(lua_next(L, t)) {
    int k = lua_gettop(L) - 1, v = k + 1, kt = lua_type(L, k);
    if(comma)
      putc1(o, ',');
    comma = 1;
    if(kt == LUA_TNUMBER) {
      putc1(o, '"');
      put_number(o, k);
      put(o, "\":", 2);
    }
    else if(kt == LUA_TSTRING) {
      int ty = lua_type(L, v);
      put_clean_string(o, k);
      putc1(o, ':');
      if(secret_key(L, k) && ty != LUA_TTABLE && ty != LUA_TNUMBER &&
         ty != LUA_TBOOLEAN) {
        put(o, "\"***\"", 5);
        lua_pop(L, 1);
        continue;
      }
    }
    else
      fail(L, k, "table key must be a number or string");
    put_value(o, v, depth);
    lua_pop(L, 1);
  }
  putc1(o, '}');
}

static void put_value(struct out *o, int idx, int depth)
{
  lua_State *L = o->L;
  switch(lua_type(L, idx)) {
  case LUA_TSTRING:
    put_clean_string(o, idx);
    break;
  case LUA_TNUMBER:
    put_number(o, idx);
    break;
  case LUA_TBOOLEAN:
    if(lua_toboolean(L, idx))
      put(o, "true", 4);
    else
      put(o, "false", 5);
    break;
  case LUA_TTABLE:
    put_table(o, idx, depth);
    break;
  case LUA_TNIL:
    put(o, "null", 4);
    break;
  case LUA_TLIGHTUSERDATA:
    if(!lua_touserdata(L, idx)) {   /* cjson.null */
      put(o, "null", 4);
      break;
    }
    /* fall through */
  default:
    fail(L, idx, "type not supported");
  }
}

static int release(lua_State *L)
{
  (void)L;
  kept.busy = 0;
  return 0;
}

/* Push the guard whose closing frees the kept buffer (made once). */
static void push_guard(lua_State *L)
{
  if(lua_rawgetp(L, LUA_REGISTRYINDEX, &kept) != LUA_TNIL)
    return;
  lua_pop(L, 1);
  lua_newuserdatauv(L, 1, 0);
  lua_newtable(L);
  lua_pushcfunction(L, release);
  lua_setfield(L, -2, "__close");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kept);
}

int core_lua_clean_json(lua_State *L)
{
  struct out o;
  luaL_checkany(L, J_V);
  luaL_checktype(L, J_TEXTS, LUA_TTABLE);
  luaL_checktype(L, J_KEYS, LUA_TTABLE);
  luaL_checktype(L, J_MASK, LUA_TFUNCTION);
  luaL_checktype(L, J_SECRET, LUA_TFUNCTION);
  lua_settop(L, J_SECRET);
  if(!escapes['"']) {
    int c;
    for(c = 0; c < 256; c++)
      escapes[c] = escape_of((unsigned char)c) != NULL;
  }
  o.L = L;
  o.n = 0;
  o.in_kept = !kept.busy;
  if(o.in_kept) {
    if(!kept.p) {
      kept.p = malloc(1024);
      if(!kept.p)
        return luaL_error(L, "not enough memory");
      kept.cap = 1024;
    }
    push_guard(L);    /* J_BUF */
    lua_toclose(L, J_BUF);
    kept.busy = 1;
    o.p = kept.p;
    o.cap = kept.cap;
  }
  else {
    o.cap = 1024;
    o.p = lua_newuserdatauv(L, o.cap, 0);    /* J_BUF */
  }
  put_value(&o, J_V, 0);
  lua_pushlstring(L, o.p, o.n);
  return 1;
}
