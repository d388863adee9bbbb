/*
 * strata.k8s: one primitive, k8s.get{...}, a GET on the Kubernetes REST
 * API (docs/kubernetes.md).  The transfer is engine/http's http_get
 * (libcurl, one HTTP layer for every family); this file reads the bearer
 * token from its file so the token never becomes a Lua value (it cannot
 * reach a journal or a message), and hands back the status and body.
 * Decoding the JSON and walking the objects is Lua's (lua/strata/k8s).
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "http.h"
#include "k8s.h"
#include "strata.h"

/* k8s.get{ url =, token_file =, ca_bundle =, timeout = 10, max_bytes =,
 *          method =, body =, content_type = } -> status, body.  method
 * (PATCH, POST, DELETE) with body: the writes strata makes (node labels,
 * the health Jobs it creates and deletes; docs/kubernetes.md).  Any HTTP status is returned (the caller reads the
 * Kubernetes Status object of a 403/404); a transport failure raises
 * "k8s.get: <url>: <step>: <detail>". */
static int l_get(lua_State *L)
{
  static const char *const keys[] = {
    "url", "token_file", "ca_bundle", "timeout", "max_bytes", "method",
    "body", "content_type", NULL
  };
  const char *fn = "k8s.get";
  struct http_req r = { 0 };
  const char *tf;
  char *token = NULL, *body = NULL;
  char err[1024], safe[512];
  size_t len = 0;
  long status = 0;
  int rc;
  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  r.url = strata_opt_str(L, 1, fn, "url", NULL);
  if(!r.url)
    return luaL_error(L, "%s: option 'url' is required", fn);
  r.timeout_s = strata_opt_num(L, 1, fn, "timeout", 10);
  if(!(r.timeout_s > 0))
    return luaL_error(L, "%s: option 'timeout' must be > 0", fn);
  r.ca_bundle = strata_opt_str(L, 1, fn, "ca_bundle", NULL);
  r.max_bytes = (size_t)strata_opt_int(L, 1, fn, "max_bytes", 0);
  r.any_status = 1;
  r.method = strata_opt_str(L, 1, fn, "method", NULL);
  r.content_type = strata_opt_str(L, 1, fn, "content_type", NULL);
  lua_getfield(L, 1, "body");
  if(!lua_isnil(L, -1))
    r.send = luaL_checklstring(L, -1, &r.send_len);
  lua_pop(L, 1);
  tf = strata_opt_str(L, 1, fn, "token_file", NULL);
  if(tf) {
    token = k8s_read_token(tf, err, sizeof(err));
    if(!token)
      return luaL_error(L, "%s: %s", fn, err);
    r.bearer = token;
  }
  rc = http_get(&r, &body, &len, &status, err, sizeof(err));
  if(token) {
    memset(token, 0, strlen(token));
    free(token);
  }
  if(rc) {
    http_safe_url(r.url, safe, sizeof(safe));
    return luaL_error(L, "%s: %s: %s", fn, safe, err);
  }
  lua_pushinteger(L, (lua_Integer)status);
  lua_pushlstring(L, body, len);
  free(body);
  return 2;
}

static const luaL_Reg funcs[] = {
  { "get", l_get },
  { NULL, NULL }
};

int luaopen_strata_k8s(lua_State *L)
{
  luaL_newlib(L, funcs);
  return 1;
}
