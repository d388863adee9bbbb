/*
 * http.h - the engine's one HTTP layer over libcurl, shared by every
 * family that speaks HTTP: the S3 client (engine/s3, kept-alive easy
 * handles with its own callbacks) and the Prometheus client
 * (engine/prom, small GETs).  No lua.h.
 */
#ifndef STRATA_HTTP_H
#define STRATA_HTTP_H

#include <stddef.h>

#include <curl/curl.h>

/* Load libcurl and curl_global_init, once per process, at the first
 * request (thread-safe; not at module load: curl_load.c says why);
 * 0, or -1 with http_init_error(). */
int http_global_init(void);
/* Why http_global_init failed: libcurl not loadable, or its init. */
const char *http_init_error(void);

/* What every request sets the same way: no signals, TCP_NODELAY, http
 * and https only, the timeouts (connect: 5 s when 0; whole transfer:
 * none when 0), a CA bundle (NULL/"" = the system's) and an error
 * buffer of CURL_ERROR_SIZE bytes (cleared here; may be NULL). */
struct http_common {
  long timeout_ms;
  long connect_timeout_ms;
  const char *ca_bundle;
  char *errbuf;
};
void http_setopt_common(CURL *e, const struct http_common *o);

/* The step a curl failure belongs to: url, resolve, connect, tls or
 * response (a timeout after connecting is "response"). */
const char *http_step(CURLcode rc, double connect_s);

struct http_req {
  const char *url;
  double timeout_s;       /* whole transfer, connect included */
  const char *bearer;     /* token or NULL; never copied into messages */
  const char *ca_bundle;  /* or NULL */
  size_t max_bytes;       /* body cap; 0 = 64 MiB */
  int any_status;         /* HTTP >= 400 is not a failure: caller looks */
  const char *method;     /* NULL = GET; else e.g. "PATCH", "POST", "DELETE" */
  const char *send;       /* request body or NULL */
  size_t send_len;
  const char *content_type; /* the body's Content-Type, or NULL */
};

/* GET (or r->method with r->send as the body); *body malloc'd (NUL ended).  On failure -1 and err holds
 * "<step>: <detail>" (step: url, resolve, connect, tls, response,
 * status, body).  An HTTP status >= 400 is a failure unless any_status. */
int http_get(const struct http_req *r, char **body, size_t *len,
             long *status, char *err, size_t errlen);
/* url without "user:password@" into out. */
void http_safe_url(const char *url, char *out, size_t len);

#endif
