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

struct loader {
  lua_State *L;
  yaml_parser_t *parser;  /* lives in the __close box */
  const char *name;
  int lines;    /* stack index of the lines table */
  int anchors;  /* stack index of anchor -> value */
};

/* Raise "<file>:<line>:<col>: <what>" with no Lua location in front. */
static int fail(struct loader *ld, const char *what, yaml_mark_t m)
{
  lua_pushfstring(ld->L, "%s:%d:%d: %s", ld->name, (int)m.line + 1,
                  (int)m.column + 1, what);
  return lua_error(ld->L);
}

static void next_event(struct loader *ld, yaml_event_t *ev)
{
  if(!yaml_parser_parse(ld->parser, ev)) {
    char msg[256];
    snprintf(msg, sizeof(msg), "%s%s%s", ld->parser->problem
             ? ld->parser->problem : "syntax error",
             ld->parser->context ? " " : "",
             ld->parser->context ? ld->parser->context : "");
    fail(ld, msg, ld->parser->problem_mark);
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

static void set_anchor(struct loader *ld, const yaml_char_t *anchor)
{
  if(!anchor)
    return;
  lua_pushvalue(ld->L, -1);
  lua_setfield(ld->L, ld->anchors, (const char *)anchor);
}

/* Parse one node whose first event is ev; push its value. */
static void load_node(struct loader *ld, yaml_event_t *ev)
{
  lua_State *L = ld->L;
  luaL_checkstack(L, 8, "YAML nesting too deep");
  switch(ev->type) {
  case YAML_SCALAR_EVENT:
    push_scalar(ld, ev);
    set_anchor(ld, ev->data.scalar.anchor);
    yaml_event_delete(ev);
    return;
  case YAML_ALIAS_EVENT:
    if(lua_getfield(L, ld->anchors, (const char *)ev->data.alias.anchor)
       == LUA_TNIL)
      fail(ld, "unknown alias", ev->start_mark);
    yaml_event_delete(ev);
    return;
  case YAML_SEQUENCE_START_EVENT: {
    int tbl, i = 0;
    lua_newtable(L);
    tbl = lua_gettop(L);
    set_anchor(ld, ev->data.sequence_start.anchor);
    yaml_event_delete(ev);
    for(;;) {
      yaml_event_t item;
      next_event(ld, &item);
      if(item.type == YAML_SEQUENCE_END_EVENT) {
        yaml_event_delete(&item);
        return;
      }
      lua_pushinteger(L, ++i);
      remember_line(ld, tbl, item.start_mark);
      load_node(ld, &item);
      lua_rawset(L, tbl);
    }
  }
  case YAML_MAPPING_START_EVENT: {
    int tbl;
    lua_newtable(L);
    tbl = lua_gettop(L);
    set_anchor(ld, ev->data.mapping_start.anchor);
    yaml_event_delete(ev);
    for(;;) {
      yaml_event_t key, val;
      next_event(ld, &key);
      if(key.type == YAML_MAPPING_END_EVENT) {
        yaml_event_delete(&key);
        return;
      }
      if(key.type != YAML_SCALAR_EVENT)
        fail(ld, "mapping keys must be scalars", key.start_mark);
      {
        yaml_mark_t m = key.start_mark;
        push_scalar(ld, &key);
        if(lua_isnil(L, -1)) {
          yaml_event_delete(&key);
          fail(ld, "null mapping key", m);
        }
        lua_pushvalue(L, -1);
        if(lua_rawget(L, tbl) != LUA_TNIL) {
          yaml_event_delete(&key);
          fail(ld, "duplicate key", m);
        }
        lua_pop(L, 1);
        remember_line(ld, tbl, m);
        yaml_event_delete(&key);
      }
      next_event(ld, &val);
      load_node(ld, &val);
      lua_rawset(L, tbl);
    }
  }
  default:
    fail(ld, "unexpected YAML event", ev->start_mark);
  }
}

/* The parser must be freed even when loading raises: a __close guard. */
struct parser_box {
  yaml_parser_t parser;
  int live;     /* parser initialised and not yet deleted */
  FILE *f;
};

static int box_close(lua_State *L)
{
  struct parser_box *b = lua_touserdata(L, 1);
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
  yaml_event_t ev;

  memset(&ld, 0, sizeof(ld));
  ld.L = L;
  ld.name = name;
  box = lua_newuserdatauv(L, sizeof(*box), 0);
  box->live = 0;
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
    return luaL_error(L, "%s: cannot initialise the YAML parser", name);
  box->live = 1;
  ld.parser = &box->parser;
  if(f)
    yaml_parser_set_input_file(ld.parser, f);
  else
    yaml_parser_set_input_string(ld.parser, (const unsigned char *)text,
                                 len);
  lua_newtable(L);               /* lines */
  ld.lines = lua_gettop(L);
  lua_newtable(L);               /* anchors */
  ld.anchors = lua_gettop(L);

  for(;;) {
    next_event(&ld, &ev);
    if(ev.type == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&ev);
      lua_newtable(L);           /* empty file: an empty table */
      break;
    }
    if(ev.type == YAML_STREAM_START_EVENT ||
       ev.type == YAML_DOCUMENT_START_EVENT) {
      yaml_event_delete(&ev);
      continue;
    }
    load_node(&ld, &ev);
    break;
  }
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
