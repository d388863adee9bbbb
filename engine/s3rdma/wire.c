/*
 * wire.c - parsers and builders of the hipobj-rc-v2 control path (wire.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigv4.h"
#include "wire.h"
#include "strata.h"

int s3rdma_parse_hex(const char *s, int maxdigits, uint64_t *v)
{
  uint64_t x = 0;
  int n = 0;
  if(!s)
    return -1;
  for(; s[n]; n++) {
    int d = strata_hexval(s[n]);
    if(d < 0 || n >= maxdigits || n >= 16)
      return -1;
    x = x << 4 | (uint64_t)d;
  }
  if(!n)
    return -1;
  *v = x;
  return 0;
}

int s3rdma_parse_dec(const char *s, uint64_t *v)
{
  uint64_t x = 0;
  int n = 0;
  if(!s)
    return -1;
  for(; s[n]; n++) {
    unsigned d = (unsigned)(s[n] - '0');
    if(d > 9 || n >= 20 || x > (UINT64_MAX - d) / 10)
      return -1;
    x = x * 10 + d;
  }
  if(!n)
    return -1;
  *v = x;
  return 0;
}

int s3rdma_reply_parse(const char *v, int *code, char token[89])
{
  uint64_t c;
  char num[8];
  const char *colon;
  size_t n;

  token[0] = '\0';
  if(!v)
    return -1;
  if(!strcmp(v, "ok")) {
    *code = 200;
    return 0;
  }
  if(!strcmp(v, "err")) {
    *code = 500;
    return 0;
  }
  colon = strchr(v, ':');
  n = colon ? (size_t)(colon - v) : strlen(v);
  if(n == 0 || n >= sizeof(num))
    return -1;
  memcpy(num, v, n);
  num[n] = '\0';
  if(s3rdma_parse_dec(num, &c) || c < 100 || c > 599)
    return -1;
  *code = (int)c;
  if(colon) {
    if(strlen(colon + 1) != 88)
      return -1;
    memcpy(token, colon + 1, 89);
  }
  return 0;
}

int s3rdma_reply_ok(int put, int partial, int code)
{
  if(code == 200 || (code == 206 && (!put || partial)))
    return 1;
  return put && code == 204;
}

/* Percent-decode n bytes of in into out (cap); -1 on bad escape/room. */
static int pct_decode(const char *in, size_t n, char *out, size_t cap)
{
  size_t o = 0;
  for(size_t i = 0; i < n; i++) {
    char c = in[i];
    if(c == '%') {
      int hi, lo;
      if(i + 2 >= n)
        return -1;
      hi = strata_hexval(in[i + 1]);
      lo = strata_hexval(in[i + 2]);
      if(hi < 0 || lo < 0)
        return -1;
      c = (char)(hi << 4 | lo);
      i += 2;
    }
    if(o + 1 >= cap)
      return -1;
    out[o++] = c;
  }
  out[o] = '\0';
  return 0;
}

int s3rdma_target_parse(const char *s, struct s3rdma_target *t,
                        const char **why)
{
  const char *slash, *q, *end;
  memset(t, 0, sizeof(*t));
  if(!s || s[0] != '/') {
    *why = "target must start with '/'";
    return -1;
  }
  s++;
  q = strchr(s, '?');
  end = q ? q : s + strlen(s);
  slash = memchr(s, '/', (size_t)(end - s));
  if(!slash || slash == s || slash + 1 >= end) {
    *why = "target must be /bucket/key";
    return -1;
  }
  if(pct_decode(s, (size_t)(slash - s), t->bucket, sizeof(t->bucket)) ||
     pct_decode(slash + 1, (size_t)(end - slash - 1), t->key,
                sizeof(t->key))) {
    *why = "target has a bad escape or is too long";
    return -1;
  }
  if(strstr(t->key, "..") || strchr(t->bucket, '/')) {
    *why = "target key holds '..'";
    return -1;
  }
  while(q && *q) {
    const char *amp, *eq;
    char name[32], val[128];
    q++;
    amp = strchr(q, '&');
    end = amp ? amp : q + strlen(q);
    eq = memchr(q, '=', (size_t)(end - q));
    if(!eq || (size_t)(eq - q) >= sizeof(name) ||
       pct_decode(eq + 1, (size_t)(end - eq - 1), val, sizeof(val))) {
      *why = "target query is malformed";
      return -1;
    }
    memcpy(name, q, (size_t)(eq - q));
    name[eq - q] = '\0';
    if(!strcmp(name, "partNumber")) {
      uint64_t p;
      if(s3rdma_parse_dec(val, &p) || p < 1 || p > 10000) {
        *why = "partNumber must be 1..10000";
        return -1;
      }
      t->part = (int)p;
    }
    else if(!strcmp(name, "uploadId"))
      snprintf(t->upload_id, sizeof(t->upload_id), "%s", val);
    else {
      *why = "target query names an unknown parameter";
      return -1;
    }
    q = amp;
  }
  if(t->upload_id[0] && !t->part) {
    *why = "uploadId without partNumber";
    return -1;
  }
  return 0;
}

int s3rdma_target_build(const char *bucket, const char *key, int part,
                        const char *upload_id, char *out, size_t cap)
{
  char b[256], k[3072], u[384];
  int w;
  if(sigv4_uri_encode(bucket, strlen(bucket), 0, b, sizeof(b)) ==
       (size_t)-1 ||
     sigv4_uri_encode(key, strlen(key), 1, k, sizeof(k)) == (size_t)-1)
    return -1;
  if(part > 0) {
    if(sigv4_uri_encode(upload_id ? upload_id : "",
                        upload_id ? strlen(upload_id) : 0, 0, u,
                        sizeof(u)) == (size_t)-1)
      return -1;
    if(upload_id && *upload_id)
      w = snprintf(out, cap, "/%s/%s?partNumber=%d&uploadId=%s", b, k, part,
                   u);
    else
      w = snprintf(out, cap, "/%s/%s?partNumber=%d", b, k, part);
  }
  else
    w = snprintf(out, cap, "/%s/%s", b, k);
  return w < 0 || (size_t)w >= cap ? -1 : 0;
}
