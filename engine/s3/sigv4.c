/*
 * sigv4.c - AWS Signature Version 4 signing (see sigv4.h for the rules).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sigv4.h"
#include "strata.h"

#define SIGV4_MAX_HEADERS 64
#define SIGV4_MAX_QUERY 128

/* --- a growable string ------------------------------------------------ */

struct sbuf {
  char *p;
  size_t n, cap;
  int oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
  if(b->oom)
    return;
  if(strata_reserve(&b->p, &b->cap, b->n + n + 1, 256)) {
    b->oom = 1;
    return;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
  sb_add(b, s, strlen(s));
}

static void sb_chr(struct sbuf *b, char c)
{
  sb_add(b, &c, 1);
}

/* --- encoding ---------------------------------------------------------- */

static int unreserved(unsigned char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
         c == '~';
}

size_t sigv4_uri_encode(const char *in, size_t n, int keep_slash,
                        char *out, size_t cap)
{
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  for(size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)in[i];
    if(unreserved(c) || (keep_slash && c == '/')) {
      if(o + 1 >= cap)
        return (size_t)-1;
      out[o++] = (char)c;
    }
    else {
      if(o + 3 >= cap)
        return (size_t)-1;
      out[o++] = '%';
      out[o++] = hex[c >> 4];
      out[o++] = hex[c & 15];
    }
  }
  if(o >= cap)
    return (size_t)-1;
  out[o] = '\0';
  return o;
}

/* Percent-decode then strictly re-encode n bytes of s onto b. */
static void sb_reencode(struct sbuf *b, const char *s, size_t n)
{
  char enc[4];
  for(size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if(c == '%' && i + 2 < n && strata_hexval(s[i + 1]) >= 0 &&
       strata_hexval(s[i + 2]) >= 0) {
      c = (unsigned char)(strata_hexval(s[i + 1]) * 16 + strata_hexval(s[i + 2]));
      i += 2;
    }
    sigv4_uri_encode((const char *)&c, 1, 0, enc, sizeof(enc));
    sb_str(b, enc);
  }
}

static void hex_of(const unsigned char *md, size_t n, char *out)
{
  static const char hex[] = "0123456789abcdef";
  for(size_t i = 0; i < n; i++) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  out[2 * n] = '\0';
}

void sigv4_sha256_hex(const void *data, size_t n, char out[65])
{
  unsigned char md[32];
  unsigned int len = 0;
  if(!EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) || len != 32) {
    out[0] = '\0';
    return;
  }
  hex_of(md, 32, out);
}

void sigv4_amz_date(time_t t, char out[17])
{
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/* --- canonical query ----------------------------------------------------- */

struct qpair {
  char *enc;       /* "name=value", both canonically encoded */
  size_t name_len; /* length of the encoded name */
};

static int qpair_cmp(const void *a, const void *b)
{
  const struct qpair *x = a, *y = b;
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c = memcmp(x->enc, y->enc, n);
  if(c)
    return c;
  if(x->name_len != y->name_len)
    return x->name_len < y->name_len ? -1 : 1;
  return strcmp(x->enc + x->name_len, y->enc + y->name_len);
}

static int canonical_query(const char *q, struct sbuf *out)
{
  struct qpair pairs[SIGV4_MAX_QUERY];
  size_t np = 0;
  int rc = 0;

  while(q && *q) {
    const char *amp = strchr(q, '&');
    size_t len = amp ? (size_t)(amp - q) : strlen(q);
    const char *eq = memchr(q, '=', len);
    size_t nl = eq ? (size_t)(eq - q) : len;
    struct sbuf b = { 0 };
    if(len) {
      if(np == SIGV4_MAX_QUERY) {
        rc = -1;
        break;
      }
      sb_reencode(&b, q, nl);
      pairs[np].name_len = b.n;
      sb_chr(&b, '=');
      if(eq)
        sb_reencode(&b, eq + 1, len - nl - 1);
      if(b.oom) {
        free(b.p);
        rc = -1;
        break;
      }
      pairs[np++].enc = b.p;
    }
    q = amp ? amp + 1 : NULL;
  }
  if(!rc) {
    qsort(pairs, np, sizeof(*pairs), qpair_cmp);
    for(size_t i = 0; i < np; i++) {
      if(i)
        sb_chr(out, '&');
      sb_str(out, pairs[i].enc);
    }
  }
  for(size_t i = 0; i < np; i++)
    free(pairs[i].enc);
  return rc;
}

/* --- canonical headers ---------------------------------------------------- */

struct hdr {
  const char *name;
  size_t order;    /* position in the caller's list: duplicates keep it */
};

static int hdr_cmp(const void *a, const void *b)
{
  const struct hdr *x = a, *y = b;
  int c = strcasecmp(x->name, y->name);
  if(c)
    return c;
  return x->order < y->order ? -1 : x->order > y->order;
}

static void sb_lower(struct sbuf *b, const char *s)
{
  for(; *s; s++)
    sb_chr(b, (char)((*s >= 'A' && *s <= 'Z') ? *s + 32 : *s));
}

/* Trim, and fold runs of spaces/tabs (and line breaks) to one space. */
static void sb_trimmed(struct sbuf *b, const char *v)
{
  int space = 0, started = 0;
  for(; *v; v++) {
    if(*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r') {
      space = started;
      continue;
    }
    if(space)
      sb_chr(b, ' ');
    space = 0;
    started = 1;
    sb_chr(b, *v);
  }
}

/* Canonical headers block onto ch, the signed list onto sh. */
static int canonical_headers(const struct sigv4_request *req,
                             struct sbuf *ch, struct sbuf *sh)
{
  struct hdr h[SIGV4_MAX_HEADERS];
  size_t n = req->nheaders;

  if(n > SIGV4_MAX_HEADERS)
    return -1;
  for(size_t i = 0; i < n; i++) {
    if(!req->headers[i].name || !*req->headers[i].name)
      return -1;
    h[i].name = req->headers[i].name;
    h[i].order = i;
  }
  qsort(h, n, sizeof(*h), hdr_cmp);
  for(size_t i = 0; i < n; i++) {
    const char *v = req->headers[h[i].order].value;
    int dup = i && !strcasecmp(h[i].name, h[i - 1].name);
    if(dup)
      sb_chr(ch, ',');
    else {
      if(i) {
        sb_chr(ch, '\n');
        sb_chr(sh, ';');
      }
      sb_lower(ch, h[i].name);
      sb_chr(ch, ':');
      sb_lower(sh, h[i].name);
    }
    sb_trimmed(ch, v ? v : "");
  }
  if(n)
    sb_chr(ch, '\n');
  return 0;
}

/* --- the tasks ----------------------------------------------------------- */

static int build_canonical(const struct sigv4_request *req, struct sbuf *cr,
                           struct sbuf *signed_list)
{
  struct sbuf ch = { 0 };
  int rc = 0;

  sb_str(cr, req->method);
  sb_chr(cr, '\n');
  sb_str(cr, req->path && *req->path ? req->path : "/");
  sb_chr(cr, '\n');
  if(canonical_query(req->query, cr))
    rc = -1;
  sb_chr(cr, '\n');
  if(!rc && canonical_headers(req, &ch, signed_list))
    rc = -1;
  if(!rc && ch.p)
    sb_str(cr, ch.p);
  sb_chr(cr, '\n');
  if(signed_list->p)
    sb_str(cr, signed_list->p);
  sb_chr(cr, '\n');
  sb_str(cr, req->payload_hash ? req->payload_hash : SIGV4_EMPTY_SHA256);
  free(ch.p);
  if(cr->oom || ch.oom || signed_list->oom)
    rc = -1;
  return rc;
}

int sigv4_canonical_request(const struct sigv4_request *req, char **out)
{
  struct sbuf cr = { 0 }, sl = { 0 };
  int rc = build_canonical(req, &cr, &sl);
  free(sl.p);
  if(rc) {
    free(cr.p);
    *out = NULL;
    return -1;
  }
  *out = cr.p;
  return 0;
}

static int string_to_sign(const struct sigv4_request *req,
                          const char *amz_date, const char *region,
                          const char *service, struct sbuf *sts,
                          struct sbuf *signed_list)
{
  struct sbuf cr = { 0 };
  char hash[65];

  if(!amz_date || strlen(amz_date) != 16 || !region || !service)
    return -1;
  if(build_canonical(req, &cr, signed_list)) {
    free(cr.p);
    return -1;
  }
  sigv4_sha256_hex(cr.p, cr.n, hash);
  free(cr.p);
  sb_str(sts, "AWS4-HMAC-SHA256\n");
  sb_str(sts, amz_date);
  sb_chr(sts, '\n');
  sb_add(sts, amz_date, 8);
  sb_chr(sts, '/');
  sb_str(sts, region);
  sb_chr(sts, '/');
  sb_str(sts, service);
  sb_str(sts, "/aws4_request\n");
  sb_str(sts, hash);
  return sts->oom ? -1 : 0;
}

int sigv4_string_to_sign(const struct sigv4_request *req,
                         const char *amz_date, const char *region,
                         const char *service, char **out)
{
  struct sbuf sts = { 0 }, sl = { 0 };
  int rc = string_to_sign(req, amz_date, region, service, &sts, &sl);
  free(sl.p);
  if(rc) {
    free(sts.p);
    *out = NULL;
    return -1;
  }
  *out = sts.p;
  return 0;
}

static int hmac(const void *key, size_t klen, const char *msg, size_t mlen,
                unsigned char out[32])
{
  unsigned int len = 0;
  if(!HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, mlen,
           out, &len) || len != 32)
    return -1;
  return 0;
}

int sigv4_authorization(const struct sigv4_creds *creds,
                        const struct sigv4_request *req,
                        const char *amz_date, const char *region,
                        const char *service, char *out, size_t outlen)
{
  struct sbuf sts = { 0 }, sl = { 0 };
  unsigned char k[32], sig[32];
  char kdate[256], sighex[65];
  int rc = -1, n;

  if(!creds || !creds->access_key || !creds->secret_key)
    return -1;
  if(string_to_sign(req, amz_date, region, service, &sts, &sl))
    goto out;
  n = snprintf(kdate, sizeof(kdate), "AWS4%s", creds->secret_key);
  if(n < 0 || (size_t)n >= sizeof(kdate))
    goto out;
  if(hmac(kdate, (size_t)n, amz_date, 8, k) ||
     hmac(k, 32, region, strlen(region), k) ||
     hmac(k, 32, service, strlen(service), k) ||
     hmac(k, 32, "aws4_request", 12, k) ||
     hmac(k, 32, sts.p, sts.n, sig))
    goto out;
  hex_of(sig, 32, sighex);
  n = snprintf(out, outlen,
               "AWS4-HMAC-SHA256 Credential=%s/%.8s/%s/%s/aws4_request, "
               "SignedHeaders=%s, Signature=%s", creds->access_key,
               amz_date, region, service, sl.p ? sl.p : "", sighex);
  if(n >= 0 && (size_t)n < outlen)
    rc = 0;
out:
  /* the derived key is as secret as the key itself */
  memset(kdate, 0, sizeof(kdate));
  memset(k, 0, sizeof(k));
  free(sts.p);
  free(sl.p);
  return rc;
}
