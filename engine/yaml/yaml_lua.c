/*
 * yaml_lua.c - "strata.yaml": load a YAML file (libyaml) into Lua tables
 * and remember the line of every key and item, so that a threshold or a
 * site value can always be quoted with its file:line.
 *
 *   local doc, lines = yaml.load_file(path)
 *   lines[t][k] -> 1-based line of key k (or item index k) in table t
 *
 * Plain scalars become booleans, integers, floats (.inf, .nan) or nil
 * (null, ~: the key is dropped); quoted scalars stay strings.  Errors
 * raise "<file>:<line>:<col>: <problem>".
 *
 * An alias (*a) is the very table its anchor (&a) made, not a copy: the
 * loaded tree may share subtables, and every walker of it keeps a visited
 * set.  What aliases may cost is bounded here, for every file: the tree
 * as if every alias were expanded may hold at most YAML_MAX_NODES nodes
 * and be at most YAML_MAX_DEPTH deep (a "billion laughs" bomb is refused
 * at the alias that crosses the line), and an alias inside the node its
 * anchor names (a cycle) is refused.  Plain nesting has the same depth
 * bound, so the C recursion below stays shallow.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lua.h>
#include <lauxlib.h>
#include <yaml.h>

#include "strata.h"
#include "yaml_load.h"

#define YAML_MAX_NODES 100000  /* nodes of the tree, aliases expanded */
#define YAML_MAX_DEPTH 64      /* nesting, aliases expanded */

/* The parser and the one event alive at a time live in a __close box:
 * both are freed when loading raises. */
struct parser_box {
  yaml_parser_t parser;
  int live;     /* parser initialised and not yet deleted */
  yaml_event_t ev;
  int ev_live;  /* ev parsed and not yet deleted */
  FILE *f;
};

struct loader {
  lua_State *L;
  struct parser_box *box;
  const char *name;
  int lines;    /* stack index of the lines table */
  int anchors;  /* stack index of anchor -> value */
  int cost;     /* stack index of anchor -> { nodes, depth }, nil while open */
  long long nodes;  /* nodes so far, aliases expanded */
};

/* Raise "<file>:<line>:<col>: <what>" with no Lua location in front. */
static int fail(struct loader *ld, const char *what, yaml_mark_t m)
{
  lua_pushfstring(ld->L, "%s:%d:%d: %s", ld->name, (int)m.line + 1,
                  (int)m.column + 1, what);
  return lua_error(ld->L);
}

/* Parse the next event into the box (the previous one must be done). */
static yaml_event_t *next_event(struct loader *ld)
{
  yaml_parser_t *p = &ld->box->parser;
  if(!yaml_parser_parse(p, &ld->box->ev)) {
    char msg[256];
    snprintf(msg, sizeof(msg), "%s%s%s", p->problem ? p->problem
             : "syntax error", p->context ? " " : "",
             p->context ? p->context : "");
    fail(ld, msg, p->problem_mark);
  }
  ld->box->ev_live = 1;
  return &ld->box->ev;
}

static void done_event(struct loader *ld)
{
  if(ld->box->ev_live) {
    yaml_event_delete(&ld->box->ev);
    ld->box->ev_live = 0;
  }
}

/* One more node at depth (aliases expanded): within the budget? */
static void count(struct loader *ld, long long nodes, int depth,
                  yaml_mark_t m)
{
  char msg[160];
  ld->nodes += nodes;
  if(depth > YAML_MAX_DEPTH) {
    snprintf(msg, sizeof(msg), "nesting deeper than %d levels%s",
             YAML_MAX_DEPTH, nodes > 1 ? " (aliases expanded)" : "");
    fail(ld, msg, m);
  }
  if(ld->nodes > YAML_MAX_NODES) {
    snprintf(msg, sizeof(msg), "aliases expand to more than %d nodes "
             "(an alias bomb?)", YAML_MAX_NODES);
    fail(ld, msg, m);
  }
}

/* Push the Lua value of a plain or quoted scalar (nil for null). */
static void push_scalar(struct loader *ld, const yaml_event_t *ev)
{
  lua_State *L = ld->L;
  const char *s = (const char *)ev->data.scalar.value;
  size_t n = ev->data.scalar.length;
  char *end;

  if(ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
    lua_pushlstring(L, s, n);
    return;
  }
  if(!n || !strcmp(s, "~") || !strcasecmp(s, "null")) {
    lua_pushnil(L);
    return;
  }
  if(!strcasecmp(s, "true") || !strcasecmp(s, "yes")) {
    lua_pushboolean(L, 1);
    return;
  }
  if(!strcasecmp(s, "false") || !strcasecmp(s, "no")) {
    lua_pushboolean(L, 0);
    return;
  }
  if(!strcasecmp(s, ".inf") || !strcasecmp(s, "+.inf")) {
    lua_pushnumber(L, HUGE_VAL);
    return;
  }
  if(!strcasecmp(s, "-.inf")) {
    lua_pushnumber(L, -HUGE_VAL);
    return;
  }
  if(!strcasecmp(s, ".nan")) {
    lua_pushnumber(L, NAN);
    return;
  }
  errno = 0;
  {
    long long i = strtoll(s, &end, 0);
    if(!*end && !errno && end != s) {
      lua_pushinteger(L, (lua_Integer)i);
      return;
    }
  }
  {
    double d = strtod(s, &end);
    if(!*end && end != s && !errno) {
      lua_pushnumber(L, d);
      return;
    }
  }
  lua_pushlstring(L, s, n);
}

static void remember_line(struct loader *ld, int tbl, yaml_mark_t m)
{
  /* stack: ... key ; lines[tbl][key] = line */
  lua_State *L = ld->L;
  lua_pushvalue(L, tbl);
  if(lua_rawget(L, ld->lines) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, tbl);
    lua_pushvalue(L, -2);
    lua_rawset(L, ld->lines);
  }
  lua_pushvalue(L, -2);
  lua_pushinteger(L, (lua_Integer)m.line + 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* Name the value on top of the stack; its cost stays unknown (the node
 * is open) until close_anchor. */
static void set_anchor(struct loader *ld, const yaml_char_t *anchor)
{
  if(!anchor)
    return;
  lua_pushvalue(ld->L, -1);
  lua_setfield(ld->L, ld->anchors, (const char *)anchor);
  lua_pushnil(ld->L);
  lua_setfield(ld->L, ld->cost, (const char *)anchor);
}

/* The node named anchor is complete: what an alias to it costs. */
static void close_anchor(struct loader *ld, const char *anchor,
                         long long nodes, int height)
{
  lua_State *L = ld->L;
  if(!anchor)
    return;
  lua_createtable(L, 2, 0);
  lua_pushinteger(L, nodes);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, height);
  lua_rawseti(L, -2, 2);
  lua_setfield(L, ld->cost, anchor);
}

/*
 * Parse one node whose first event is the box's; push its value.  depth:
 * this node's nesting (1 = the document).  Returns the node's height
 * (1 = scalar) with aliases expanded; ld->nodes grows by its size.
 */
static int load_node(struct loader *ld, int depth)
{
  lua_State *L = ld->L;
  yaml_event_t *ev = &ld->box->ev;
  yaml_mark_t m = ev->start_mark;
  long long before = ld->nodes;
  char *anchor = NULL;
  int height = 1;

  switch(ev->type) {
  case YAML_SCALAR_EVENT:
    count(ld, 1, depth, m);
    push_scalar(ld, ev);
    set_anchor(ld, ev->data.scalar.anchor);
    if(ev->data.scalar.anchor)
      close_anchor(ld, (const char *)ev->data.scalar.anchor, 1, 1);
    done_event(ld);
    return 1;
  case YAML_ALIAS_EVENT: {
    const char *name = (const char *)ev->data.alias.anchor;
    long long nodes;
    int h;
    if(lua_getfield(L, ld->anchors, name) == LUA_TNIL)
      fail(ld, "unknown alias", m);
    if(lua_getfield(L, ld->cost, name) != LUA_TTABLE)
      fail(ld, "alias inside the node its anchor names (a cycle)", m);
    lua_rawgeti(L, -1, 1);
    lua_rawgeti(L, -2, 2);
    nodes = lua_tointeger(L, -2);
    h = (int)lua_tointeger(L, -1);
    lua_pop(L, 3);
    count(ld, nodes, depth + h - 1, m);
    done_event(ld);
    return h;
  }
  case YAML_SEQUENCE_START_EVENT:
  case YAML_MAPPING_START_EVENT: {
    int seq = ev->type == YAML_SEQUENCE_START_EVENT, tbl, i = 0;
    const yaml_char_t *an = seq ? ev->data.sequence_start.anchor
                                : ev->data.mapping_start.anchor;
    count(ld, 1, depth, m);
    luaL_checkstack(L, 8, "YAML nesting");
    lua_newtable(L);
    tbl = lua_gettop(L);
    set_anchor(ld, an);
    if(an) {  /* kept (as a Lua string) past the event */
      lua_pushstring(L, (const char *)an);
      anchor = (char *)lua_tostring(L, -1);
      lua_insert(L, tbl);  /* below the table: popped with it later */
      tbl = lua_gettop(L);
    }
    done_event(ld);
    for(;;) {
      ev = next_event(ld);
      if(ev->type == (seq ? YAML_SEQUENCE_END_EVENT : YAML_MAPPING_END_EVENT)) {
        done_event(ld);
        break;
      }
      if(seq) {
        lua_pushinteger(L, ++i);
        remember_line(ld, tbl, ev->start_mark);
      }
      else {
        yaml_mark_t km = ev->start_mark;
        if(ev->type != YAML_SCALAR_EVENT)
          fail(ld, "mapping keys must be scalars", km);
        push_scalar(ld, ev);
        done_event(ld);
        if(lua_isnil(L, -1))
          fail(ld, "null mapping key", km);
        if(lua_type(L, -1) == LUA_TNUMBER &&
           lua_tonumber(L, -1) != lua_tonumber(L, -1))
          fail(ld, "NaN mapping key", km);  /* no table takes it (fuzz) */
        lua_pushvalue(L, -1);
        if(lua_rawget(L, tbl) != LUA_TNIL)
          fail(ld, "duplicate key", km);
        lua_pop(L, 1);
        remember_line(ld, tbl, km);
        next_event(ld);
      }
      {
        int h = load_node(ld, depth + 1);
        if(h + 1 > height)
          height = h + 1;
      }
      lua_rawset(L, tbl);
    }
    close_anchor(ld, anchor, ld->nodes - before, height);
    if(anchor)
      lua_remove(L, tbl - 1);
    return height;
  }
  default:
    fail(ld, "unexpected YAML event", m);
  }
  return 0;
}

static int box_close(lua_State *L)
{
  struct parser_box *b = lua_touserdata(L, 1);
  if(b->ev_live) {
    yaml_event_delete(&b->ev);
    b->ev_live = 0;
  }
  if(b->live) {
    yaml_parser_delete(&b->parser);
    b->live = 0;
  }
  if(b->f) {
    fclose(b->f);
    b->f = NULL;
  }
  return 0;
}

static int load(lua_State *L, const char *name, FILE *f, const char *text,
                size_t len)
{
  struct loader ld;
  struct parser_box *box;

  memset(&ld, 0, sizeof(ld));
  ld.L = L;
  ld.name = name;
  box = lua_newuserdatauv(L, sizeof(*box), 0);
  memset(box, 0, sizeof(*box));
  box->f = f;
  if(luaL_newmetatable(L, "strata.yaml.parser")) {
    lua_pushcfunction(L, box_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, box_close);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  lua_toclose(L, -1);
  if(!yaml_parser_initialize(&box->parser))
    return luaL_error(L, "%s: cannot initialise the YAML parser%s%s", name,
                      yaml_load() ? ": " : "", yaml_load_error());
  box->live = 1;
  ld.box = box;
  if(f)
    yaml_parser_set_input_file(&box->parser, f);
  else
    yaml_parser_set_input_string(&box->parser, (const unsigned char *)text,
                                 len);
  lua_newtable(L);               /* lines */
  ld.lines = lua_gettop(L);
  lua_newtable(L);               /* anchors */
  ld.anchors = lua_gettop(L);
  lua_newtable(L);               /* what an alias to each costs */
  ld.cost = lua_gettop(L);

  for(;;) {
    yaml_event_t *ev = next_event(&ld);
    if(ev->type == YAML_STREAM_END_EVENT) {
      done_event(&ld);
      lua_newtable(L);           /* empty file: an empty table */
      break;
    }
    if(ev->type == YAML_STREAM_START_EVENT ||
       ev->type == YAML_DOCUMENT_START_EVENT) {
      done_event(&ld);
      continue;
    }
    load_node(&ld, 1);
    break;
  }
  done_event(&ld);
  if(!lua_istable(L, -1))
    return luaL_error(L, "%s:1: the document must be a mapping or a list",
                      name);
  lua_pushvalue(L, ld.lines);
  return 2;
}

static int l_load_file(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  FILE *f = fopen(path, "rb");
  if(!f)
    return luaL_error(L, "%s: %s", path, strerror(errno));
  return load(L, path, f, NULL, 0);
}

static int l_load(lua_State *L)
{
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  const char *name = luaL_optstring(L, 2, "(string)");
  return load(L, name, NULL, text, len);
}

static const luaL_Reg yaml_funcs[] = {
  { "load_file", l_load_file },
  { "load", l_load },
  { NULL, NULL }
};

int luaopen_strata_yaml(lua_State *L)
{
  luaL_newlib(L, yaml_funcs);
  return 1;
}
