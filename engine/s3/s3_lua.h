/*
 * s3_lua.h - shared between the strata.s3 binding files: the client
 * handle and the entry points living in other files.
 */
#ifndef STRATA_S3_LUA_H
#define STRATA_S3_LUA_H

#include <lua.h>

#include "creds.h"
#include "s3.h"

struct l_client {
  struct s3_config cfg;     /* points into the strings below */
  struct s3_creds creds;    /* secrets: wiped on close */
  char *endpoint, *region, *ca_bundle;
  struct s3_conn *conn;     /* NULL once closed */
};

/* The open client at idx, or raise (closed or wrong type). */
struct l_client *s3l_check(lua_State *L, int idx, const char *fn);

/* Option field of the table at 1: a non-empty list of {key =, size =},
 * as a userdata left on the stack (the key strings stay referenced by
 * the list); *n its length.  Raises naming fn and the entry. */
struct s3_object *s3l_check_objects(lua_State *L, const char *fn,
                                    const char *field, size_t *n);

/* cl:run{...}: the workload engine (workload_lua.c). */
int s3l_run(lua_State *L);
/* s3.scrape(url [, opts]): a Prometheus exposition as a table. */
int s3l_scrape(lua_State *L);

#endif
