/*
 * s3_lua.c - the "strata.s3" module: an S3 client handle (credentials
 * from the environment or a credentials file, never from a spec), the
 * single requests, multipart steps, and the workload engine (cl:run).
 */
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "creds.h"
#include "http.h"
#include "multipart.h"
#include "s3.h"
#include "s3_lua.h"
#include "strata.h"

#define CLIENT_MT "strata.s3.client"

static char *dupopt(const char *s)
{
  return s ? strdup(s) : NULL;
}

struct l_client *s3l_check(lua_State *L, int idx, const char *fn)
{
  struct l_client *c = luaL_checkudata(L, idx, CLIENT_MT);
  if(!c->conn)
    luaL_error(L, "%s: the client is closed", fn);
  return c;
}

struct s3_object *s3l_check_objects(lua_State *L, const char *fn,
                                    const char *field, size_t *n)
{
  struct s3_object *o;
  lua_getfield(L, 1, field);
  luaL_checktype(L, -1, LUA_TTABLE);
  *n = lua_rawlen(L, -1);
  if(!*n)
    luaL_error(L, "%s: option '%s' is an empty list", fn, field);
  o = lua_newuserdatauv(L, *n * sizeof(*o), 0);
  for(size_t i = 0; i < *n; i++) {
    lua_rawgeti(L, -2, (lua_Integer)i + 1);
    lua_getfield(L, -1, "key");
    o[i].key = lua_tostring(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, -1, "size");
    o[i].size = (uint64_t)lua_tointeger(L, -1);
    lua_pop(L, 2);
    if(!o[i].key)
      luaL_error(L, "%s: %s[%d] has no key", fn, field, (int)i + 1);
  }
  return o;
}

static int l_close(lua_State *L)
{
  struct l_client *c = luaL_checkudata(L, 1, CLIENT_MT);
  s3_conn_free(&c->conn);
  s3_creds_clear(&c->creds);
  free(c->endpoint);
  free(c->region);
  free(c->ca_bundle);
  c->endpoint = c->region = c->ca_bundle = NULL;
  return 0;
}

/*
 * s3.client{endpoint, region, addressing = "path"|"virtual",
 *           credentials_file [, profile] | access_key_env, secret_key_env
 *           [, session_token_env], ca_bundle, sign_payload,
 *           connect_timeout, timeout, stall}
 * No endpoint or no credentials: SKIP (prerequisite absent).
 */
static int l_client(lua_State *L)
{
  static const char *const keys[] = {
    "endpoint", "region", "addressing", "credentials_file", "profile",
    "access_key_env", "secret_key_env", "session_token_env", "ca_bundle",
    "sign_payload", "connect_timeout", "timeout", "stall", NULL
  };
  static const char *fn = "s3.client";
  struct l_client *c;
  const char *ep, *addr, *file, *ca;
  char err[512];
  int rc;

  luaL_checktype(L, 1, LUA_TTABLE);
  strata_check_keys(L, 1, fn, keys);
  ep = strata_opt_str(L, 1, fn, "endpoint", NULL);
  if(!ep || !*ep)
    return strata_skip(L, "no S3 endpoint configured (site file s3.endpoint)");
  if(strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8))
    return luaL_error(L, "%s: endpoint '%s' must start with http:// or "
                      "https://", fn, ep);
  addr = strata_opt_str(L, 1, fn, "addressing", "path");
  if(strcmp(addr, "path") && strcmp(addr, "virtual"))
    return luaL_error(L, "%s: option 'addressing' must be \"path\" or "
                      "\"virtual\", got \"%s\"", fn, addr);
  c = lua_newuserdatauv(L, sizeof(*c), 0);
  memset(c, 0, sizeof(*c));
  luaL_setmetatable(L, CLIENT_MT);
  file = strata_opt_str(L, 1, fn, "credentials_file", NULL);
  if(file)
    rc = s3_creds_from_file(file, strata_opt_str(L, 1, fn, "profile", NULL),
                            &c->creds, err, sizeof(err));
  else
    rc = s3_creds_from_env(
      strata_opt_str(L, 1, fn, "access_key_env", "AWS_ACCESS_KEY_ID"),
      strata_opt_str(L, 1, fn, "secret_key_env", "AWS_SECRET_ACCESS_KEY"),
      strata_opt_str(L, 1, fn, "session_token_env", "AWS_SESSION_TOKEN"),
      &c->creds, err, sizeof(err));
  if(rc)
    return strata_skip(L, "no S3 credentials: %s", err);
  ca = strata_opt_str(L, 1, fn, "ca_bundle", NULL);
  if(!ca && !strncmp(ep, "https://", 8))
    ca = getenv("AWS_CA_BUNDLE");
  c->endpoint = dupopt(ep);
  c->region = dupopt(strata_opt_str(L, 1, fn, "region", "us-east-1"));
  c->ca_bundle = dupopt(ca);
  c->cfg.endpoint = c->endpoint;
  c->cfg.region = c->region;
  c->cfg.ca_bundle = c->ca_bundle;
  c->cfg.creds.access_key = c->creds.access_key;
  c->cfg.creds.secret_key = c->creds.secret_key;
  c->cfg.creds.session_token = c->creds.session_token;
  c->cfg.virtual_hosted = !strcmp(addr, "virtual");
  c->cfg.sign_payload = strata_opt_bool(L, 1, fn, "sign_payload", 0);
  c->cfg.connect_timeout_ms =
    (long)(strata_opt_num(L, 1, fn, "connect_timeout", 5) * 1000);
  c->cfg.timeout_ms = (long)(strata_opt_num(L, 1, fn, "timeout", 0) * 1000);
  c->cfg.stall_s = (long)strata_opt_num(L, 1, fn, "stall", 30);
  c->conn = s3_conn_new(&c->cfg);
  if(!c->conn)
    return luaL_error(L, "%s: cannot start libcurl: %s", fn,
                      http_init_error());
  return 1;
}

/* Raise "<fn>: <METHOD> /b/k: HTTP <status> <Code>" or the transport error */
static int raise_req(lua_State *L, const char *fn, const struct s3_req *q,
                     struct s3_resp *r)
{
  char d[600];
  s3_describe(q, r, d, sizeof(d));
  s3_resp_free(r);
  return luaL_error(L, "%s: %s", fn, d);
}

static int is2xx(const struct s3_resp *r)
{
  return r->fail == S3_OK && r->status >= 200 && r->status < 300;
}

/* Push the reply headers as a table, names lower-cased. */
static void push_headers(lua_State *L, const struct s3_resp *r)
{
  const char *p = r->headers;
  lua_newtable(L);
  while(p && *p) {
    const char *eol = strchr(p, '\n'), *colon;
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    colon = memchr(p, ':', len);
    if(colon && strncmp(p, "HTTP/", 5)) {
      char name[128];
      size_t nl = (size_t)(colon - p);
      const char *v = colon + 1, *end = p + len;
      if(nl < sizeof(name)) {
        for(size_t i = 0; i < nl; i++)
          name[i] = (char)((p[i] >= 'A' && p[i] <= 'Z') ? p[i] + 32 : p[i]);
        name[nl] = '\0';
        while(v < end && *v == ' ')
          v++;
        while(end > v && (end[-1] == '\r' || end[-1] == ' '))
          end--;
        lua_pushlstring(L, v, (size_t)(end - v));
        lua_setfield(L, -2, name);
      }
    }
    p = eol ? eol + 1 : NULL;
  }
}

static void push_reply(lua_State *L, const struct s3_resp *r)
{
  lua_createtable(L, 0, 8);
  strata_set_int(L, "status", r->status);
  strata_set_str(L, "code", r->code);
  lua_pushlstring(L, r->body ? r->body : "", r->body_len);
  lua_setfield(L, -2, "body");
  push_headers(L, r);
  lua_setfield(L, -2, "headers");
  strata_set_num(L, "ttfb_s", (double)r->ttfb_ns / 1e9);
  strata_set_num(L, "time_s", (double)r->total_ns / 1e9);
  strata_set_int(L, "bytes_in", (lua_Integer)r->bytes_in);
  strata_set_int(L, "bytes_out", (lua_Integer)r->bytes_out);
}

/*
 * cl:request{method, bucket, key, path, query, headers = {name = value},
 *            body} -> {status, code, body, headers, ttfb_s, time_s, ...}
 * Any HTTP status is returned; a transport failure or timeout raises.
 */
static int l_request(lua_State *L)
{
  static const char *const keys[] = { "method", "bucket", "key", "path",
    "query", "headers", "body", "payload_hash", NULL };
  static const char *fn = "s3.request";
  struct l_client *c = s3l_check(L, 1, fn);
  struct sigv4_header h[32];
  struct s3_req q = { 0 };
  struct s3_resp r;
  size_t blen = 0, nh = 0;

  strata_check_keys(L, 2, fn, keys);
  q.method = strata_opt_str(L, 2, fn, "method", "GET");
  q.bucket = strata_opt_str(L, 2, fn, "bucket", NULL);
  q.key = strata_opt_str(L, 2, fn, "key", NULL);
  q.path = strata_opt_str(L, 2, fn, "path", NULL);
  q.query = strata_opt_str(L, 2, fn, "query", NULL);
  q.payload_hash = strata_opt_str(L, 2, fn, "payload_hash", NULL);
  if(lua_getfield(L, 2, "body") == LUA_TSTRING)
    q.body = lua_tolstring(L, -1, &blen);
  q.body_len = blen;
  if(lua_getfield(L, 2, "headers") == LUA_TTABLE) {
    lua_pushnil(L);
    while(lua_next(L, -2)) {
      if(nh == sizeof(h) / sizeof(h[0]))
        return luaL_error(L, "%s: too many headers", fn);
      if(lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
        return luaL_error(L, "%s: headers must map names to strings", fn);
      h[nh].name = lua_tostring(L, -2);
      h[nh++].value = lua_tostring(L, -1);
      lua_pop(L, 1);   /* the strings stay referenced by the table */
    }
  }
  q.headers = h;
  q.nheaders = nh;
  if(s3_perform(c->conn, &q, &r) != S3_OK)
    return raise_req(L, fn, &q, &r);
  push_reply(L, &r);
  s3_resp_free(&r);
  return 1;
}

/* cl:put(bucket, key, data) -> etag; raises on anything but 2xx */
static int l_put(lua_State *L)
{
  struct l_client *c = s3l_check(L, 1, "s3.put");
  struct s3_req q = { 0 };
  struct s3_resp r;
  char etag[128] = "";
  size_t n;
  q.method = "PUT";
  q.bucket = luaL_checkstring(L, 2);
  q.key = luaL_checkstring(L, 3);
  q.body = luaL_checklstring(L, 4, &n);
  q.body_len = n;
  s3_perform(c->conn, &q, &r);
  if(!is2xx(&r))
    return raise_req(L, "s3.put", &q, &r);
  s3_resp_header(&r, "etag", etag, sizeof(etag));
  s3_resp_free(&r);
  lua_pushstring(L, etag);
  return 1;
}

/* cl:get(bucket, key [, {range = "bytes=a-b"}]) -> data, status */
static int l_get(lua_State *L)
{
  static const char *const keys[] = { "range", NULL };
  struct l_client *c = s3l_check(L, 1, "s3.get");
  struct sigv4_header h[1];
  struct s3_req q = { 0 };
  struct s3_resp r;
  const char *range = NULL;
  q.method = "GET";
  q.bucket = luaL_checkstring(L, 2);
  q.key = luaL_checkstring(L, 3);
  if(!lua_isnoneornil(L, 4)) {
    strata_check_keys(L, 4, "s3.get", keys);
    range = strata_opt_str(L, 4, "s3.get", "range", NULL);
  }
  if(range) {
    h[0].name = "Range";
    h[0].value = range;
    q.headers = h;
    q.nheaders = 1;
  }
  s3_perform(c->conn, &q, &r);
  if(!is2xx(&r))
    return raise_req(L, "s3.get", &q, &r);
  lua_pushlstring(L, r.body ? r.body : "", r.body_len);
  lua_pushinteger(L, r.status);
  s3_resp_free(&r);
  return 2;
}

/* cl:head(bucket, key) -> {size, etag, status} ; raises on non-2xx */
static int l_head(lua_State *L)
{
  struct l_client *c = s3l_check(L, 1, "s3.head");
  struct s3_req q = { 0 };
  struct s3_resp r;
  char v[128];
  q.method = "HEAD";
  q.bucket = luaL_checkstring(L, 2);
  q.key = luaL_optstring(L, 3, NULL);
  s3_perform(c->conn, &q, &r);
  if(!is2xx(&r))
    return raise_req(L, "s3.head", &q, &r);
  lua_createtable(L, 0, 3);
  if(s3_resp_header(&r, "content-length", v, sizeof(v)) >= 0)
    strata_set_int(L, "size", strtoll(v, NULL, 10));
  if(s3_resp_header(&r, "etag", v, sizeof(v)) >= 0)
    strata_set_str(L, "etag", v);
  strata_set_int(L, "status", r.status);
  s3_resp_free(&r);
  return 1;
}

/* Body-less request that must answer 2xx: delete, buckets. */
static int simple(lua_State *L, const char *fn, const char *method,
                  int with_key)
{
  struct l_client *c = s3l_check(L, 1, fn);
  struct s3_req q = { 0 };
  struct s3_resp r;
  q.method = method;
  q.bucket = luaL_checkstring(L, 2);
  q.key = with_key ? luaL_checkstring(L, 3) : NULL;
  s3_perform(c->conn, &q, &r);
  if(!is2xx(&r))
    return raise_req(L, fn, &q, &r);
  lua_pushinteger(L, r.status);
  s3_resp_free(&r);
  return 1;
}

static int l_delete(lua_State *L)
{
  return simple(L, "s3.delete", "DELETE", 1);
}

static int l_create_bucket(lua_State *L)
{
  return simple(L, "s3.create_bucket", "PUT", 0);
}

static int l_delete_bucket(lua_State *L)
{
  return simple(L, "s3.delete_bucket", "DELETE", 0);
}

/* Raise for a failed multipart step, naming the step. */
static int raise_mp(lua_State *L, const char *fn, const char *key,
                    struct s3_resp *r)
{
  if(r->fail)
    lua_pushfstring(L, "%s: %s: %s", fn, key, r->error);
  else
    lua_pushfstring(L, "%s: %s: HTTP %d %s", fn, key, (int)r->status,
                    r->code);
  s3_resp_free(r);
  return lua_error(L);
}

/* cl:mp_create(bucket, key) -> upload id */
static int l_mp_create(lua_State *L)
{
  struct l_client *c = s3l_check(L, 1, "s3.mp_create");
  const char *b = luaL_checkstring(L, 2), *k = luaL_checkstring(L, 3);
  struct s3_resp r;
  char id[512];
  if(s3_mp_create(c->conn, b, k, id, sizeof(id), &r))
    return raise_mp(L, "s3.mp_create", k, &r);
  s3_resp_free(&r);
  lua_pushstring(L, id);
  return 1;
}

/* cl:mp_part(bucket, key, id, number, data) -> etag */
static int l_mp_part(lua_State *L)
{
  struct l_client *c = s3l_check(L, 1, "s3.mp_part");
  const char *b = luaL_checkstring(L, 2), *k = luaL_checkstring(L, 3);
  const char *id = luaL_checkstring(L, 4);
  int n = (int)luaL_checkinteger(L, 5);
  size_t len;
  const char *data = luaL_checklstring(L, 6, &len);
  struct s3_resp r;
  char etag[80];
  if(s3_mp_part(c->conn, b, k, id, n, data, len, NULL, NULL, etag, &r))
    return raise_mp(L, "s3.mp_part", k, &r);
  s3_resp_free(&r);
  lua_pushstring(L, etag);
  return 1;
}

/* cl:mp_complete(bucket, key, id, {{number, etag}, ...}) */
static int l_mp_complete(lua_State *L)
{
  struct l_client *c = s3l_check(L, 1, "s3.mp_complete");
  const char *b = luaL_checkstring(L, 2), *k = luaL_checkstring(L, 3);
  const char *id = luaL_checkstring(L, 4);
  size_t n;
  struct s3_part *parts;
  struct s3_resp r;
  int rc;

  luaL_checktype(L, 5, LUA_TTABLE);
  n = (size_t)luaL_len(L, 5);
  parts = lua_newuserdatauv(L, (n ? n : 1) * sizeof(*parts), 0);
  for(size_t i = 0; i < n; i++) {
    lua_geti(L, 5, (lua_Integer)i + 1);
    luaL_argcheck(L, lua_istable(L, -1), 5, "parts are {number, etag}");
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    parts[i].number = (int)luaL_checkinteger(L, -2);
    snprintf(parts[i].etag, sizeof(parts[i].etag), "%s",
             luaL_checkstring(L, -1));
    lua_pop(L, 3);
  }
  rc = s3_mp_complete(c->conn, b, k, id, parts, n, &r);
  if(rc)
    return raise_mp(L, "s3.mp_complete", k, &r);
  s3_resp_free(&r);
  return 0;
}

/* cl:mp_abort(bucket, key, id) */
static int l_mp_abort(lua_State *L)
{
  struct l_client *c = s3l_check(L, 1, "s3.mp_abort");
  const char *b = luaL_checkstring(L, 2), *k = luaL_checkstring(L, 3);
  struct s3_resp r;
  if(s3_mp_abort(c->conn, b, k, luaL_checkstring(L, 4), &r))
    return raise_mp(L, "s3.mp_abort", k, &r);
  s3_resp_free(&r);
  return 0;
}

static int l_tostring(lua_State *L)
{
  struct l_client *c = luaL_checkudata(L, 1, CLIENT_MT);
  /* endpoint and region only: never the credentials */
  lua_pushfstring(L, "s3.client(%s)", c->endpoint ? c->endpoint
                                                  : "closed");
  return 1;
}

static const luaL_Reg client_methods[] = {
  { "request", l_request },
  { "put", l_put },
  { "get", l_get },
  { "head", l_head },
  { "delete", l_delete },
  { "create_bucket", l_create_bucket },
  { "delete_bucket", l_delete_bucket },
  { "mp_create", l_mp_create },
  { "mp_part", l_mp_part },
  { "mp_complete", l_mp_complete },
  { "mp_abort", l_mp_abort },
  { "run", s3l_run },
  { "close", l_close },
  { NULL, NULL }
};

static const luaL_Reg client_meta[] = {
  { "__gc", l_close },
  { "__close", l_close },
  { "__tostring", l_tostring },
  { NULL, NULL }
};

static const luaL_Reg s3_funcs[] = {
  { "client", l_client },
  { "scrape", s3l_scrape },
  { NULL, NULL }
};

int luaopen_strata_s3(lua_State *L)
{
  luaL_newmetatable(L, CLIENT_MT);
  luaL_setfuncs(L, client_meta, 0);
  luaL_newlib(L, client_methods);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_newlib(L, s3_funcs);
  return 1;
}
