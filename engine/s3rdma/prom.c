/*
 * prom.c - read Prometheus exposition text and instant-query replies
 * (prom.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "prom.h"
#include "s3.h"

int s3rdma_prom_sum(const char *text, const char *name, double *out)
{
  size_t nl = strlen(name);
  const char *p = text;
  int found = 0;
  double sum = 0;

  while(p && *p) {
    const char *eol = strchr(p, '\n');
    if(*p != '#' && !strncmp(p, name, nl) &&
       (p[nl] == ' ' || p[nl] == '{' || p[nl] == '\t')) {
      const char *v = p + nl;
      char *end;
      double x;
      if(*v == '{') {                  /* skip labels, quotes honoured */
        int q = 0;
        for(v++; *v && *v != '\n'; v++) {
          if(*v == '\\' && q && v[1])
            v++;
          else if(*v == '"')
            q = !q;
          else if(*v == '}' && !q)
            break;
        }
        if(*v == '}')
          v++;
      }
      x = strtod(v, &end);
      if(end != v) {
        sum += x;
        found++;
      }
    }
    p = eol ? eol + 1 : NULL;
  }
  *out = sum;
  return found;
}

struct sink {
  char *p;
  size_t n, cap;
};

static size_t on_data(char *d, size_t size, size_t nmemb, void *arg)
{
  struct sink *s = arg;
  size_t n = size * nmemb;
  if(s->n + n + 1 > s->cap) {
    size_t cap = (s->cap ? s->cap * 2 : 65536) + n;
    char *q;
    if(cap > (64u << 20))
      return 0;
    q = realloc(s->p, cap);
    if(!q)
      return 0;
    s->p = q;
    s->cap = cap;
  }
  memcpy(s->p + s->n, d, n);
  s->n += n;
  s->p[s->n] = '\0';
  return n;
}

long s3rdma_http_get(const char *url, const char *bearer, long timeout_ms,
                     char **body, char *err, size_t cap)
{
  struct sink s = { 0 };
  struct curl_slist *h = NULL;
  char ebuf[CURL_ERROR_SIZE] = "", auth[4096];
  long status = -1;
  CURL *e;
  CURLcode cc;

  *body = NULL;
  s3_global_init();
  e = curl_easy_init();
  if(!e) {
    snprintf(err, cap, "curl_easy_init failed");
    return -1;
  }
  if(bearer && *bearer) {
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", bearer);
    h = curl_slist_append(h, auth);
    memset(auth, 0, sizeof(auth));
  }
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, ebuf);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &s);
  cc = curl_easy_perform(e);
  if(cc == CURLE_OK) {
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    *body = s.p ? s.p : strdup("");
    s.p = NULL;
  }
  else
    snprintf(err, cap, "GET %s: %s (%d)", url,
             ebuf[0] ? ebuf : curl_easy_strerror(cc), (int)cc);
  free(s.p);
  curl_slist_free_all(h);
  curl_easy_cleanup(e);
  return status;
}

int s3rdma_prom_query_value(const char *json, double *out)
{
  const char *p = strstr(json, "\"result\"");
  char *end;
  if(!p || !(p = strstr(p, "\"value\"")) || !(p = strchr(p, '[')) ||
     !(p = strchr(p, ',')))
    return -1;
  p++;
  while(*p == ' ' || *p == '"')
    p++;
  *out = strtod(p, &end);
  return end == p ? -1 : 0;
}
