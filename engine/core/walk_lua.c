/*
 * walk_lua.c - the walks over every value of a run's records, in C because
 * `strata report` of 10 000 results walks ~500 000 values through each
 * (docs/performance.md, "Runner").
 *
 * core.denull(v): a table decoded by lua-cjson made the way strata reads
 * JSON (lua/strata/journal.lua): JSON null (cjson.null, a NULL light
 * userdata) removed, and whole numbers as integers (lua-cjson reads every
 * number as a float: a chart's column index 1 must stay 1, not 1.0; a
 * float with no integer of the same value stays a float).  In place,
 * nested tables too; returns v.
 *
 * core.clean_copy(v, texts, keys, mask, is_secret): strata.redact's clean
 * (lua/strata/redact.lua says what it masks): v where every text (keys
 * too) is texts[s] or mask(s), and a key that is_secret (keys[k], else
 * is_secret(k)) has its text or other non-table, non-number, non-boolean
 * value replaced by "***".  A table where nothing changes, itself or below
 * it, is kept as it is (shared with v: the writers only read; a run of
 * 10 000 results has a few secrets, if any, and copying it all was most of
 * the cost); the others are copied, once each, with their original's
 * metatable.  A structure with a cycle is copied whole (the cycle stays a
 * cycle of copies).  Tables are walked with next (a __pairs metamethod is
 * not called: the run model's tables have none).
 */
#include <stdint.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"

static void denull(lua_State *L, int t)
{
  luaL_checkstack(L, 4, "core.denull: nested too deep");
  lua_pushnil(L);
  while(lua_next(L, t)) {
    int ty = lua_type(L, -1);
    if(ty == LUA_TLIGHTUSERDATA && !lua_touserdata(L, -1)) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, t);  /* clearing a field while traversing is allowed */
    }
    else if(ty == LUA_TNUMBER && !lua_isinteger(L, -1)) {
      int exact;
      lua_Integer i = lua_tointegerx(L, -1, &exact);  /* math.tointeger */
      lua_pop(L, 1);
      if(exact) {
        lua_pushvalue(L, -1);
        lua_pushinteger(L, i);
        lua_rawset(L, t);
      }
    }
    else {
      if(ty == LUA_TTABLE)
        denull(L, lua_gettop(L));
      lua_pop(L, 1);
    }
  }
}

int core_lua_denull(lua_State *L)
{
  lua_settop(L, 1);
  if(lua_type(L, 1) == LUA_TTABLE)
    denull(L, 1);
  return 1;
}

/* Stack slots of clean_copy's arguments, its memo and its two pointer
 * sets. */
enum { C_V = 1, C_TEXTS, C_KEYS, C_MASK, C_SECRET, C_MEMO, C_SEEN, C_TEXT };

/* What the first walk found of a table (C_SEEN). */
enum { UNSEEN = 0, WALKING, SAME, CHANGES };

/* What is known of a text (C_TEXT), bits. */
enum { TEXT_CLEAN = 1, KEY_KNOWN = 2, KEY_SECRET = 4 };

/*
 * C_SEEN and C_TEXT: what the first walk found of each table and of each
 * text, by address (a table does not move, and a text's bytes stay where
 * they are, while it is reachable from v; equal short texts are one
 * object), in an open-addressed hash in a userdata.  A Lua table of the
 * ~100 000 tables of a run model, and the memo's lookups for its ~500 000
 * texts, were most of the walk's cost (docs/performance.md, "Runner").
 * Grown by a new userdata in the slot: nothing to free after a raised
 * error.
 */
struct ptr_slot {
  const void *p;
  int state;
};

struct ptr_set {
  size_t n, cap;    /* cap = 2^bits */
  int bits;
  struct ptr_slot slot[];
};

static struct ptr_set *new_set(lua_State *L, int bits)
{
  size_t cap = (size_t)1 << bits;
  struct ptr_set *s = lua_newuserdatauv(L, sizeof(*s) + cap * sizeof(s->slot[0]), 0);
  s->n = 0;
  s->cap = cap;
  s->bits = bits;
  memset(s->slot, 0, cap * sizeof(s->slot[0]));
  return s;
}

static struct ptr_slot *set_find(struct ptr_set *s, const void *p)
{
  size_t mask = s->cap - 1;
  /* Fibonacci hashing: the product's high bits (allocations' low bits
   * are alike) */
  size_t i = (size_t)(((uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull) >>
                      (64 - s->bits));
  while(s->slot[i].p && s->slot[i].p != p)
    i = (i + 1) & mask;
  return &s->slot[i];
}

static int set_get(lua_State *L, int set, const void *p)
{
  return set_find(lua_touserdata(L, set), p)->state;
}

static void set_put(lua_State *L, int set, const void *p, int state)
{
  struct ptr_set *s = lua_touserdata(L, set);
  struct ptr_slot *slot = set_find(s, p);
  if(!slot->p) {
    if(2 * (s->n + 1) > s->cap) {    /* grow: at most half full */
      struct ptr_set *g = new_set(L, s->bits + 1);
      for(size_t i = 0; i < s->cap; i++) {
        if(s->slot[i].p)
          *set_find(g, s->slot[i].p) = s->slot[i];
      }
      g->n = s->n;
      lua_replace(L, set);
      s = g;
      slot = set_find(s, p);
    }
    slot->p = p;
    s->n++;
  }
  slot->state = state;
}

static int seen_get(lua_State *L, int t)
{
  return set_get(L, C_SEEN, lua_topointer(L, t));
}

static void seen_set(lua_State *L, int t, int state)
{
  set_put(L, C_SEEN, lua_topointer(L, t), state);
}

/* Replace the string at idx by texts[s] or mask(s). */
static void clean_text(lua_State *L, int idx)
{
  strata_memo_call(L, C_TEXTS, C_MASK, idx);
  lua_replace(L, idx);
}

static int secret_key(lua_State *L, int k)
{
  int secret;
  strata_memo_call(L, C_KEYS, C_SECRET, k);
  secret = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return secret;
}

/* secret_key for the first walk: remembered per text (C_TEXT). */
static int secret_key_known(lua_State *L, int k)
{
  const void *p = lua_tostring(L, k);
  int state = set_get(L, C_TEXT, p);
  if(!(state & KEY_KNOWN)) {
    state |= KEY_KNOWN | (secret_key(L, k) ? KEY_SECRET : 0);
    set_put(L, C_TEXT, p, state);
  }
  return (state & KEY_SECRET) != 0;
}

/* Whether the text at idx is its own clean text (remembered when it is:
 * C_TEXT). */
static int clean_already(lua_State *L, int idx)
{
  const void *p = lua_tostring(L, idx);
  int same, state = set_get(L, C_TEXT, p);
  if(state & TEXT_CLEAN)
    return 1;
  lua_pushvalue(L, idx);
  clean_text(L, lua_gettop(L));
  same = lua_rawequal(L, -1, idx);
  lua_pop(L, 1);
  if(same)
    set_put(L, C_TEXT, p, state | TEXT_CLEAN);
  return same;
}

/*
 * The first walk: whether cleaning the table at t changes anything in it
 * or below it (C_SEEN remembers each table).  A table met again while it
 * is being walked is a cycle: *cycle is set and the caller copies all.
 */
static int changes(lua_State *L, int t, int *cycle)
{
  int found = 0;

  luaL_checkstack(L, 8, "core.clean_copy: nested too deep");
  switch(seen_get(L, t)) {
  case WALKING:
    *cycle = 1;
    /* fall through */
  case SAME:
    return 0;
  case CHANGES:
    return 1;
  }
  seen_set(L, t, WALKING);
  lua_pushnil(L);
  /* every table below is walked, so that each unchanged one is known */
  while(lua_next(L, t)) {
    int k = lua_gettop(L) - 1, y = k + 1, ty = lua_type(L, y);
    if(!found && lua_type(L, k) == LUA_TSTRING) {
      if(secret_key_known(L, k) && ty != LUA_TTABLE && ty != LUA_TNUMBER &&
         ty != LUA_TBOOLEAN) {
        lua_pushliteral(L, "***");
        found = !lua_rawequal(L, -1, y);
        lua_pop(L, 1);
      }
      found = found || !clean_already(L, k);
    }
    if(ty == LUA_TTABLE) {
      if(changes(L, y, cycle))
        found = 1;
    }
    else if(!found && ty == LUA_TSTRING)
      found = !clean_already(L, y);
    lua_pop(L, 1);
  }
  seen_set(L, t, found ? CHANGES : SAME);
  return found;
}

/* Push the clean copy of the table at t: t itself when nothing in it or
 * below it changes (C_SEEN says; all of it copied when C_SEEN is nil). */
static void clean_table(lua_State *L, int t)
{
  int out;

  luaL_checkstack(L, 8, "core.clean_copy: nested too deep");
  lua_pushvalue(L, t);
  if(lua_rawget(L, C_MEMO) != LUA_TNIL)
    return;
  lua_pop(L, 1);
  if(lua_isuserdata(L, C_SEEN) && seen_get(L, t) == SAME) {
    lua_pushvalue(L, t);
    return;
  }
  lua_newtable(L);
  out = lua_gettop(L);
  lua_pushvalue(L, t);
  lua_pushvalue(L, out);
  lua_rawset(L, C_MEMO);
  lua_pushnil(L);
  while(lua_next(L, t)) {
    int k = out + 1, y = out + 2, ty = lua_type(L, y);
    lua_pushvalue(L, k);  /* the key, kept for lua_next */
    lua_pushvalue(L, y);
    /* out + 3: the key to store, out + 4: the value to store */
    if(lua_type(L, k) == LUA_TSTRING) {
      int secret = secret_key(L, k);
      clean_text(L, out + 3);
      if(secret && ty != LUA_TTABLE && ty != LUA_TNUMBER &&
         ty != LUA_TBOOLEAN) {
        lua_pushliteral(L, "***");
        lua_replace(L, out + 4);
        ty = LUA_TNONE;  /* stored as it is */
      }
    }
    if(ty == LUA_TTABLE) {
      clean_table(L, out + 4);
      lua_replace(L, out + 4);
    }
    else if(ty == LUA_TSTRING)
      clean_text(L, out + 4);
    lua_rawset(L, out);
    lua_pop(L, 1);  /* the value; the key stays for lua_next */
  }
  if(lua_getmetatable(L, t))
    lua_setmetatable(L, out);
}

int core_lua_clean_copy(lua_State *L)
{
  luaL_checktype(L, C_TEXTS, LUA_TTABLE);
  luaL_checktype(L, C_KEYS, LUA_TTABLE);
  luaL_checktype(L, C_MASK, LUA_TFUNCTION);
  luaL_checktype(L, C_SECRET, LUA_TFUNCTION);
  lua_settop(L, C_SECRET);
  lua_newtable(L);  /* C_MEMO: original table -> its copy */
  new_set(L, 10);  /* C_SEEN: what the first walk found of tables */
  new_set(L, 10);  /* C_TEXT: and of texts */
  if(lua_istable(L, C_V)) {
    int cycle = 0;
    changes(L, C_V, &cycle);
    if(cycle) {       /* copy all: a cycle stays a cycle of copies */
      lua_pushnil(L);
      lua_replace(L, C_SEEN);
    }
  }
  switch(lua_type(L, C_V)) {
  case LUA_TSTRING:
    clean_text(L, C_V);
    lua_pushvalue(L, C_V);
    break;
  case LUA_TTABLE:
    clean_table(L, C_V);
    break;
  default:
    lua_pushvalue(L, C_V);
  }
  return 1;
}
