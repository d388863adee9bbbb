/*
 * metrics.c - Prometheus text exposition: scrape and parse (metrics.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "metrics.h"

struct body {
  char *p;
  size_t n, cap;
};

static size_t on_body(char *p, size_t size, size_t nmemb, void *arg)
{
  struct body *b = arg;
  size_t n = size * nmemb;
  if(b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 65536;
    char *q;
    while(cap < b->n + n + 1)
      cap *= 2;
    if(cap > (64u << 20))
      return 0;                      /* 64 MiB: not a metrics page */
    q = realloc(b->p, cap);
    if(!q)
      return 0;
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, p, n);
  b->n += n;
  b->p[b->n] = '\0';
  return n;
}

int prom_scrape(const char *url, const char *bearer, const char *ca_bundle,
                long timeout_ms, struct prom_set *out, char *err,
                size_t cap)
{
  CURL *e = curl_easy_init();
  struct curl_slist *h = NULL;
  struct body b = { 0 };
  char ebuf[CURL_ERROR_SIZE] = "", line[4096];
  long status = 0;
  CURLcode cc;
  int rc = -1;

  memset(out, 0, sizeof(*out));
  if(!e) {
    snprintf(err, cap, "%s: cannot start libcurl", url);
    return -1;
  }
  if(bearer) {
    snprintf(line, sizeof(line), "Authorization: Bearer %s", bearer);
    h = curl_slist_append(h, line);
    memset(line, 0, sizeof(line));
  }
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, ebuf);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms
                                                          : 10000L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
  if(ca_bundle && *ca_bundle)
    curl_easy_setopt(e, CURLOPT_CAINFO, ca_bundle);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
  cc = curl_easy_perform(e);
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
  if(cc != CURLE_OK)
    snprintf(err, cap, "scrape %s: %s%s%s (curl %d)", url,
             curl_easy_strerror(cc), ebuf[0] ? ": " : "", ebuf, (int)cc);
  else if(status != 200)
    snprintf(err, cap, "scrape %s: HTTP %ld%s", url, status,
             status == 401 || status == 403
               ? " (the metrics endpoint wants a bearer token)" : "");
  else if(!b.p || prom_parse(b.p, out))
    snprintf(err, cap, "scrape %s: cannot parse the exposition", url);
  else
    rc = 0;
  curl_slist_free_all(h);
  curl_easy_cleanup(e);
  free(b.p);
  return rc;
}

static int add(struct prom_set *s, const char *series, size_t len,
               size_t name_len, double v)
{
  if(s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    struct prom_sample *p = realloc(s->v, cap * sizeof(*p));
    if(!p)
      return -1;
    s->v = p;
    s->cap = cap;
  }
  s->v[s->n].series = strndup(series, len);
  if(!s->v[s->n].series)
    return -1;
  s->v[s->n].name_len = name_len;
  s->v[s->n++].value = v;
  return 0;
}

int prom_parse(const char *text, struct prom_set *out)
{
  const char *p = text;
  while(*p) {
    const char *eol = strchr(p, '\n');
    const char *end = eol ? eol : p + strlen(p);
    const char *q = p, *series_end;
    size_t name_len;
    char num[64], *stop;
    double v;

    if(*p == '#' || *p == '\n' || p == end)
      goto next;
    while(q < end && *q != '{' && *q != ' ')
      q++;
    name_len = (size_t)(q - p);
    if(q < end && *q == '{') {
      int inq = 0;
      for(; q < end; q++) {          /* label values may hold '}' */
        if(*q == '"' && q[-1] != '\\')
          inq = !inq;
        else if(*q == '}' && !inq)
          break;
      }
      if(q == end)
        goto next;                   /* malformed line: skip */
      q++;
    }
    series_end = q;
    while(q < end && *q == ' ')
      q++;
    {
      size_t k = (size_t)(end - q);
      const char *sp = memchr(q, ' ', k);   /* a timestamp may follow */
      if(sp)
        k = (size_t)(sp - q);
      if(!k || k >= sizeof(num))
        goto next;
      memcpy(num, q, k);
      num[k] = '\0';
    }
    v = strtod(num, &stop);
    if(stop == num)
      goto next;
    if(add(out, p, (size_t)(series_end - p), name_len, v))
      return -1;
next:
    p = eol ? eol + 1 : end;
  }
  return 0;
}

double prom_sum(const struct prom_set *s, const char *name, int *found)
{
  size_t nl = strlen(name);
  double t = 0;
  int f = 0;
  for(size_t i = 0; i < s->n; i++)
    if(s->v[i].name_len == nl && !strncmp(s->v[i].series, name, nl)) {
      t += s->v[i].value;
      f = 1;
    }
  if(found)
    *found = f;
  return t;
}

void prom_free(struct prom_set *s)
{
  for(size_t i = 0; i < s->n; i++)
    free(s->v[i].series);
  free(s->v);
  memset(s, 0, sizeof(*s));
}
