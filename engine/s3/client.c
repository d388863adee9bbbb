/*
 * client.c - one S3 request on a kept-alive curl easy handle (s3.h),
 * set up through the engine's one HTTP layer (engine/http: global init,
 * the options every request shares).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "http.h"
#include "s3.h"
#include "xml.h"
#include "strata.h"

#define S3_CAPTURE_MAX (1u << 20)   /* keep 1 MiB of an error reply body */
#define S3_MAX_HEADERS 40

struct s3_conn {
  const struct s3_config *cfg;
  CURL *curl;
  char errbuf[CURL_ERROR_SIZE];
  char scheme[8];
  char host[256];              /* host[:port] of the endpoint */
};

/* Per-request transfer state handed to curl's callbacks. */
struct xfer {
  const struct s3_req *req;
  struct s3_resp *resp;
  CURL *curl;
  uint64_t sent;
  int overflow, aborted, status_known, to_dst, ok, sent_told;
  size_t body_cap;
  size_t headers_cap;
};

static int on_debug(CURL *e, curl_infotype t, char *d, size_t n,
                    void *arg);

int s3_global_init(void)
{
  return http_global_init();
}

const char *s3_strfail(enum s3_fail f)
{
  switch(f) {
  case S3_OK:
    return "ok";
  case S3_ERR_TRANSPORT:
    return "transport error";
  case S3_ERR_TIMEOUT:
    return "timeout";
  case S3_ERR_OVERFLOW:
    return "reply larger than the buffer";
  case S3_ERR_ABORTED:
    return "aborted";
  case S3_ERR_SIGN:
    return "cannot sign the request";
  case S3_ERR_NOMEM:
    return "out of memory";
  }
  return "?";
}

struct s3_conn *s3_conn_new(const struct s3_config *cfg)
{
  struct s3_conn *c;
  const char *p, *h;
  size_t n;

  if(s3_global_init() || !cfg->endpoint)
    return NULL;
  c = calloc(1, sizeof(*c));
  if(!c)
    return NULL;
  c->cfg = cfg;
  p = strstr(cfg->endpoint, "://");
  if(p && (size_t)(p - cfg->endpoint) < sizeof(c->scheme)) {
    memcpy(c->scheme, cfg->endpoint, (size_t)(p - cfg->endpoint));
    h = p + 3;
  }
  else {
    strcpy(c->scheme, "http");
    h = cfg->endpoint;
  }
  n = strcspn(h, "/");
  if(n >= sizeof(c->host))
    n = sizeof(c->host) - 1;
  memcpy(c->host, h, n);
  c->curl = curl_easy_init();
  if(!c->curl) {
    free(c);
    return NULL;
  }
  return c;
}

void s3_conn_free(struct s3_conn **c)
{
  if(!c || !*c)
    return;
  curl_easy_cleanup((*c)->curl);
  free(*c);
  *c = NULL;
}

void s3_resp_free(struct s3_resp *resp)
{
  free(resp->body);
  free(resp->headers);
  resp->body = resp->headers = NULL;
  resp->body_len = resp->headers_len = 0;
}

/* --- callbacks ------------------------------------------------------------ */

static int append(char **buf, size_t *len, size_t *cap, const char *p,
                  size_t n, size_t max)
{
  if(*len + n > max)
    n = max > *len ? max - *len : 0;
  if(strata_reserve(buf, cap, *len + n + 1, 1024))
    return -1;
  memcpy(*buf + *len, p, n);
  *len += n;
  (*buf)[*len] = '\0';
  return 0;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *arg)
{
  struct xfer *x = arg;
  struct s3_resp *r = x->resp;
  size_t n = size * nmemb;
  /* a new status line (100-continue, redirects): start over */
  if(n > 5 && !strncmp(p, "HTTP/", 5))
    r->headers_len = 0;
  if(append(&r->headers, &r->headers_len, &x->headers_cap, p, n,
            64 * 1024))
    return 0;
  return n;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *arg)
{
  struct xfer *x = arg;
  struct s3_resp *r = x->resp;
  const struct s3_req *q = x->req;
  size_t n = size * nmemb;

  if(!x->status_known) {
    long st = 0;
    curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &st);
    x->ok = st >= 200 && st < 300;
    x->to_dst = x->ok && (q->dst || q->sink);
    x->status_known = 1;
  }
  if(x->to_dst && q->sink) {
    if(q->sink(q->sink_arg, r->bytes_in, p, n) != n) {
      x->aborted = 1;
      return 0;
    }
  }
  else if(x->to_dst) {
    if(r->bytes_in + n > q->dst_cap) {
      x->overflow = 1;
      return 0;
    }
    memcpy((char *)q->dst + r->bytes_in, p, n);
  }
  else if(append(&r->body, &r->body_len, &x->body_cap, p, n,
                 x->ok ? SIZE_MAX : S3_CAPTURE_MAX))
    return 0;
  r->bytes_in += n;
  return n;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *arg)
{
  struct xfer *x = arg;
  const struct s3_req *q = x->req;
  size_t n = size * nmemb;
  uint64_t left = q->body_len - x->sent;

  if(n > left)
    n = (size_t)left;
  if(q->source) {
    size_t got = q->source(q->source_arg, x->sent, p, n);
    if(got == 0 && n) {
      x->aborted = 1;
      return CURL_READFUNC_ABORT;
    }
    n = got;
  }
  else
    memcpy(p, (const char *)q->body + x->sent, n);
  x->sent += n;
  return n;
}

/* --- the request ---------------------------------------------------------- */

/* Build the encoded path: "/bucket/key", or "/key" when virtual-hosted. */
static int build_path(const struct s3_conn *c, const struct s3_req *q,
                      char *out, size_t cap)
{
  size_t o = 0, w;
  if(q->path) {
    w = strlen(q->path);
    if(w + 1 > cap)
      return -1;
    memcpy(out, q->path, w + 1);
    return 0;
  }
  out[o++] = '/';
  if(q->bucket && !c->cfg->virtual_hosted) {
    w = sigv4_uri_encode(q->bucket, strlen(q->bucket), 0, out + o, cap - o);
    if(w == (size_t)-1)
      return -1;
    o += w;
    if(q->key && o + 1 < cap)
      out[o++] = '/';
  }
  if(q->key) {
    w = sigv4_uri_encode(q->key, strlen(q->key), 1, out + o, cap - o);
    if(w == (size_t)-1)
      return -1;
    o += w;
  }
  out[o] = '\0';
  return 0;
}

static enum s3_fail classify(CURLcode cc)
{
  switch(cc) {
  case CURLE_OK:
    return S3_OK;
  case CURLE_OPERATION_TIMEDOUT:
    return S3_ERR_TIMEOUT;
  case CURLE_OUT_OF_MEMORY:
    return S3_ERR_NOMEM;
  default:
    return S3_ERR_TRANSPORT;
  }
}

static void parse_code(struct s3_resp *r)
{
  r->code[0] = '\0';
  if(r->body && r->status >= 300)
    s3_xml_error_code(r->body, r->code, sizeof(r->code));
}

/* Add "Name: value" to the curl list; 0 or -1. */
static int add_header(struct curl_slist **l, const char *name,
                      const char *value)
{
  char line[2048];
  struct curl_slist *n;
  int w = snprintf(line, sizeof(line), "%s: %s", name, value);
  if(w < 0 || (size_t)w >= sizeof(line))
    return -1;
  n = curl_slist_append(*l, line);
  if(!n)
    return -1;
  *l = n;
  return 0;
}

/* The request's URL, signed headers and Authorization into *list (the
 * caller frees it); S3_OK, or the failure with r->error. */
static enum s3_fail sign_request(struct s3_conn *c, const struct s3_req *q,
                                 char *url, size_t urllen,
                                 struct curl_slist **list, struct s3_resp *r)
{
  const struct s3_config *cfg = c->cfg;
  struct sigv4_header h[S3_MAX_HEADERS + 4];
  struct sigv4_request sr = { 0 };
  char path[4096], host[512], date[17], hash[65];
  char auth[1024];
  const char *host_value = host;
  size_t nh = 0;

  if(q->nheaders > S3_MAX_HEADERS || build_path(c, q, path, sizeof(path))) {
    snprintf(r->error, sizeof(r->error), "request too large to sign");
    return r->fail = S3_ERR_SIGN;
  }
  if(cfg->virtual_hosted && q->bucket && !q->path)
    snprintf(host, sizeof(host), "%s.%s", q->bucket, c->host);
  else
    snprintf(host, sizeof(host), "%s", c->host);
  snprintf(url, urllen, "%s://%s%s%s%s", c->scheme, host, path,
           q->query && *q->query ? "?" : "", q->query ? q->query : "");
  sigv4_amz_date(time(NULL), date);
  if(q->payload_hash)
    snprintf(hash, sizeof(hash), "%s", q->payload_hash);
  else if(!q->body_len)
    snprintf(hash, sizeof(hash), "%s", SIGV4_EMPTY_SHA256);
  else if(cfg->sign_payload && q->body)
    sigv4_sha256_hex(q->body, (size_t)q->body_len, hash);
  else
    snprintf(hash, sizeof(hash), "%s", SIGV4_UNSIGNED_PAYLOAD);

  for(size_t i = 0; i < q->nheaders; i++) {
    if(!strcasecmp(q->headers[i].name, "host"))
      host_value = q->headers[i].value;
    else
      h[nh++] = q->headers[i];
  }
  h[nh++] = (struct sigv4_header){ "host", host_value };
  h[nh++] = (struct sigv4_header){ "x-amz-date", date };
  h[nh++] = (struct sigv4_header){ "x-amz-content-sha256", hash };
  if(cfg->creds.session_token)
    h[nh++] = (struct sigv4_header){ "x-amz-security-token",
                                     cfg->creds.session_token };
  sr.method = q->method;
  sr.path = path;
  sr.query = q->query;
  sr.headers = h;
  sr.nheaders = nh;
  sr.payload_hash = hash;
  if(sigv4_authorization(&cfg->creds, &sr, date,
                         cfg->region ? cfg->region : "us-east-1",
                         cfg->service ? cfg->service : "s3", auth,
                         sizeof(auth))) {
    snprintf(r->error, sizeof(r->error), "cannot sign the request");
    return r->fail = S3_ERR_SIGN;
  }
  for(size_t i = 0; i < nh; i++)
    if(add_header(list, h[i].name, h[i].value))
      goto nomem;
  if(add_header(list, "Authorization", auth) ||
     !(*list = curl_slist_append(*list, "Expect:")) ||
     !(*list = curl_slist_append(*list, "Accept:")))
    goto nomem;
  memset(auth, 0, sizeof(auth));
  return S3_OK;
nomem:
  memset(auth, 0, sizeof(auth));
  snprintf(r->error, sizeof(r->error), "out of memory");
  return r->fail = S3_ERR_NOMEM;
}

/* The handle set up for q: URL, headers, timeouts, callbacks, method. */
static void set_options(struct s3_conn *c, const struct s3_req *q,
                        const char *url, struct curl_slist *list,
                        struct xfer *x)
{
  const struct s3_config *cfg = c->cfg;
  CURL *e = c->curl;
  struct http_common co = { cfg->timeout_ms, cfg->connect_timeout_ms,
                            cfg->ca_bundle, c->errbuf };

  curl_easy_reset(e);
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  http_setopt_common(e, &co);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                   cfg->stall_s ? cfg->stall_s : 30L);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
  curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
  if(!strcmp(q->method, "HEAD"))
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  else if(q->body_len || !strcmp(q->method, "PUT") ||
          !strcmp(q->method, "POST")) {
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE,
                     (curl_off_t)q->body_len);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, x);
    curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);
    if(strcmp(q->method, "PUT"))
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, q->method);
  }
  else if(strcmp(q->method, "GET"))
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, q->method);

  if(q->on_sent && !q->body_len) {
    curl_easy_setopt(e, CURLOPT_DEBUGFUNCTION, on_debug);
    curl_easy_setopt(e, CURLOPT_DEBUGDATA, x);
    curl_easy_setopt(e, CURLOPT_VERBOSE, 1L);
  }
}

/* What came of the transfer: timings, status, and the failure if any. */
static enum s3_fail outcome(struct s3_conn *c, const struct s3_req *q,
                            const struct xfer *x, CURLcode cc,
                            struct s3_resp *r)
{
  curl_off_t st = 0;
  curl_easy_getinfo(c->curl, CURLINFO_STARTTRANSFER_TIME_T, &st);
  r->ttfb_ns = (uint64_t)st * 1000u;
  curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->status);
  r->bytes_out = x->sent;
  r->curl_code = (int)cc;
  if(x->overflow) {
    r->fail = S3_ERR_OVERFLOW;
    snprintf(r->error, sizeof(r->error), "reply body larger than %llu "
             "bytes", (unsigned long long)q->dst_cap);
  }
  else if(x->aborted) {
    r->fail = S3_ERR_ABORTED;
    snprintf(r->error, sizeof(r->error), "transfer stopped by the caller");
  }
  else {
    r->fail = classify(cc);
    if(r->fail)
      snprintf(r->error, sizeof(r->error), "%s: %.180s (curl %d)",
               s3_strfail(r->fail),
               c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc), (int)cc);
  }
  if(r->fail == S3_OK)
    parse_code(r);
  return r->fail;
}

enum s3_fail s3_perform(struct s3_conn *c, const struct s3_req *q,
                        struct s3_resp *r)
{
  struct curl_slist *list = NULL;
  struct xfer x = { 0 };
  char url[8192];
  uint64_t t0;
  CURLcode cc;

  memset(r, 0, sizeof(*r));
  x.req = q;
  x.resp = r;
  x.curl = c->curl;
  if(sign_request(c, q, url, sizeof(url), &list, r)) {
    curl_slist_free_all(list);
    return r->fail;
  }
  set_options(c, q, url, list, &x);
  t0 = strata_now_ns();
  cc = curl_easy_perform(c->curl);
  r->total_ns = strata_now_ns() - t0;
  curl_slist_free_all(list);
  return outcome(c, q, &x, cc, r);
}

/* curl's debug hook, set only for s3_req.on_sent: CURLINFO_HEADER_OUT
 * comes after the request headers were sent (nothing is logged). */
static int on_debug(CURL *e, curl_infotype t, char *d, size_t n, void *arg)
{
  struct xfer *x = arg;
  (void)e;
  (void)d;
  (void)n;
  if(t == CURLINFO_HEADER_OUT && !x->sent_told) {
    x->sent_told = 1;
    x->req->on_sent(x->req->on_sent_arg);
  }
  return 0;
}

int s3_resp_header(const struct s3_resp *r, const char *name, char *out,
                   size_t cap)
{
  size_t nl = strlen(name);
  const char *p = r->headers;

  while(p && *p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if(len > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
      const char *v = p + nl + 1;
      const char *end = p + len;
      size_t n;
      while(v < end && (*v == ' ' || *v == '\t'))
        v++;
      while(end > v && (end[-1] == '\r' || end[-1] == ' '))
        end--;
      n = (size_t)(end - v);
      if(cap) {
        size_t k = n < cap - 1 ? n : cap - 1;
        memcpy(out, v, k);
        out[k] = '\0';
      }
      return (int)n;
    }
    p = eol ? eol + 1 : NULL;
  }
  return -1;
}

void s3_describe(const struct s3_req *q, const struct s3_resp *r,
                 char *out, size_t cap)
{
  const char *b = q->bucket ? q->bucket : "";
  const char *k = q->key ? q->key : "";
  const char *path = q->path ? q->path : "";
  if(r->fail)
    snprintf(out, cap, "%s /%s%s%s%s: %s", q->method, b, *k ? "/" : "", k,
             path, r->error);
  else
    snprintf(out, cap, "%s /%s%s%s%s: HTTP %ld%s%s", q->method, b,
             *k ? "/" : "", k, path, r->status, r->code[0] ? " " : "",
             r->code);
}
