/*
 * http.c - the one libcurl layer of the engine (http.h): global set-up,
 * the options every request shares, the failing step named from a curl
 * code, and a plain GET for small bodies (scrapes, API queries).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curl_load.h"
#include "http.h"
#include "strata.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

static void do_init(void)
{
  init_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

int http_global_init(void)
{
  pthread_once(&init_once, do_init);
  return init_rc;
}

const char *http_init_error(void)
{
  const char *why = curl_load_error();
  return *why ? why : "curl_global_init failed";
}

void http_setopt_common(CURL *e, const struct http_common *o)
{
  long ct = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 5000L;
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ct);
  if(o->timeout_ms > 0)
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, o->timeout_ms);
  if(o->ca_bundle && *o->ca_bundle)
    curl_easy_setopt(e, CURLOPT_CAINFO, o->ca_bundle);
  if(o->errbuf) {
    o->errbuf[0] = '\0';
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, o->errbuf);
  }
}


struct body {
  char *p;
  size_t n, cap, max;
  int too_big;
};

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg)
{
  struct body *b = arg;
  size_t n = size * nmemb;
  if(b->n + n + 1 > b->max) {
    b->too_big = 1;
    return 0;  /* aborts the transfer */
  }
  if(strata_reserve(&b->p, &b->cap, b->n + n + 1, 65536))
    return 0;
  memcpy(b->p + b->n, data, n);
  b->n += n;
  return n;
}

void http_safe_url(const char *url, char *out, size_t len)
{
  const char *scheme = strstr(url, "://");
  const char *host = scheme ? scheme + 3 : url;
  const char *slash = host + strcspn(host, "/?#");
  const char *at = NULL;
  for(const char *c = host; c < slash; c++)
    if(*c == '@')
      at = c;
  if(at)
    snprintf(out, len, "%.*s%s", (int)(host - url), url, at + 1);
  else
    snprintf(out, len, "%s", url);
}

const char *http_step(CURLcode rc, double connect_s)
{
  switch(rc) {
  case CURLE_URL_MALFORMAT:
  case CURLE_UNSUPPORTED_PROTOCOL:
    return "url";
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY:
    return "resolve";
  case CURLE_COULDNT_CONNECT:
    return "connect";
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_PEER_FAILED_VERIFICATION:
  case CURLE_SSL_CERTPROBLEM:
  case CURLE_SSL_CACERT_BADFILE:
    return "tls";
  case CURLE_OPERATION_TIMEDOUT:
    return connect_s > 0 ? "response" : "connect";
  default:
    return "response";
  }
}

int http_get(const struct http_req *r, char **body, size_t *len,
             long *status, char *err, size_t errlen)
{
  CURL *c = http_global_init() ? NULL : curl_easy_init();
  struct body b = { 0 };
  char ebuf[CURL_ERROR_SIZE] = "";
  long ms = (long)(r->timeout_s * 1000.0);
  CURLcode rc;
  struct curl_slist *hdrs = NULL;
  int result = -1;

  *body = NULL;
  *len = 0;
  *status = 0;
  if(!c) {
    snprintf(err, errlen, "request: %s", http_init_error());
    return -1;
  }
  b.max = r->max_bytes ? r->max_bytes : (size_t)64 << 20;
  if(ms <= 0)
    ms = 1;
  {
    struct http_common co = { ms, ms, r->ca_bundle, ebuf };
    http_setopt_common(c, &co);
  }
  curl_easy_setopt(c, CURLOPT_URL, r->url);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(c, CURLOPT_USERAGENT, "strata");
  if(r->bearer) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, r->bearer);
  }
  if(r->method)
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
  if(r->send) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)r->send_len);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->send);
  }
  if(r->content_type) {
    char h[256];
    snprintf(h, sizeof(h), "Content-Type: %s", r->content_type);
    hdrs = curl_slist_append(NULL, h);
    if(hdrs)
      curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  }
  rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
  if(rc != CURLE_OK) {
    double conn = 0;
    curl_easy_getinfo(c, CURLINFO_CONNECT_TIME, &conn);
    if(b.too_big)
      snprintf(err, errlen, "body: larger than %zu bytes", b.max);
    else if(rc == CURLE_OPERATION_TIMEDOUT)
      snprintf(err, errlen, "%s: no complete answer within %.3g s (%s)",
               http_step(rc, conn), r->timeout_s, ebuf);
    else
      snprintf(err, errlen, "%s: %s (%d)%s%s", http_step(rc, conn),
               curl_easy_strerror(rc), (int)rc, ebuf[0] ? ": " : "", ebuf);
    goto out;
  }
  if(*status >= 400 && !r->any_status) {
    char first[121] = "";
    size_t k = 0;
    for(size_t i = 0; i < b.n && k < sizeof(first) - 1; i++) {
      char ch = b.p[i];
      if(ch == '\n' && k)
        break;
      if(isprint((unsigned char)ch))
        first[k++] = ch;
    }
    first[k] = '\0';
    snprintf(err, errlen, "status: HTTP %ld%s%s", *status, k ? ": " : "",
             first);
    goto out;
  }
  if(!b.p) {
    b.p = malloc(1);
    if(!b.p) {
      snprintf(err, errlen, "body: out of memory");
      goto out;
    }
  }
  b.p[b.n] = '\0';
  *body = b.p;
  *len = b.n;
  b.p = NULL;
  result = 0;
out:
  free(b.p);
  curl_easy_cleanup(c);
  if(hdrs)
    curl_slist_free_all(hdrs);
  return result;
}

