/*
 * s3.h - an S3 client over libcurl: one connection (a curl easy handle
 * with its keep-alive connection) per thread, every request SigV4-signed.
 *
 * A struct s3_config holds the endpoint and the credentials; it is shared
 * read-only by any number of struct s3_conn, one per thread.  s3_perform
 * runs one request to completion on a connection, reusing its kept-alive
 * socket.  Extra headers are signed with the rest, and reply headers are
 * looked up case-insensitively, so other SigV4-over-HTTP protocols (the
 * S3-over-RDMA control path) build on the same call.
 *
 * Secrets: the config borrows them; nothing here writes them anywhere
 * (no curl verbose, error texts name only method, path and status).
 */
#ifndef STRATA_S3_H
#define STRATA_S3_H

#include <stddef.h>
#include <stdint.h>

#include "sigv4.h"

/* An object named by key with the size a listing gave it (model shards:
 * the GET must move exactly that many bytes). */
struct s3_object {
  const char *key;
  uint64_t size;
};

struct s3_config {
  const char *endpoint;      /* "http[s]://host[:port]", no trailing path */
  const char *region;        /* signing region, e.g. "us-east-1" */
  const char *service;       /* signing service; NULL means "s3" */
  struct sigv4_creds creds;  /* borrowed; must outlive every connection */
  const char *ca_bundle;     /* PEM file for https, NULL: curl's default */
  int virtual_hosted;        /* 1: bucket.host/key, 0: host/bucket/key */
  int sign_payload;          /* 1: SHA-256 of the body, 0: UNSIGNED-PAYLOAD */
  long connect_timeout_ms;   /* 0: 5000 */
  long timeout_ms;           /* whole request; 0: none */
  long stall_s;              /* abort after this long below 1 byte/s;
                                0: 30 */
};

struct s3_conn;

/* Called with body bytes as they arrive (GET); return n to go on, any
 * other value aborts the transfer (the request fails as a write error). */
typedef size_t (*s3_sink_fn)(void *arg, uint64_t off, const char *p,
                             size_t n);
/* Fill up to n bytes of the request body at offset off; return the count
 * (0 only at the end).  Used instead of body when set. */
typedef size_t (*s3_source_fn)(void *arg, uint64_t off, char *p, size_t n);

struct s3_req {
  const char *method;        /* "GET", "PUT", "HEAD", "DELETE", "POST" */
  const char *bucket;        /* NULL for service-level requests */
  const char *key;           /* raw object key (encoded here), or NULL */
  const char *path;          /* instead of bucket/key: an encoded path */
  const char *query;         /* encoded query without '?', or NULL */
  const struct sigv4_header *headers;  /* extra headers, all signed; a
                                          "host" here replaces the URL's */
  size_t nheaders;
  const void *body;          /* request body, or NULL */
  uint64_t body_len;         /* its length (also with source) */
  s3_source_fn source;       /* streamed body instead of body */
  void *source_arg;
  const char *payload_hash;  /* precomputed hex hash, or NULL */
  void *dst;                 /* 2xx reply body lands here ... */
  uint64_t dst_cap;          /* ... up to this many bytes */
  s3_sink_fn sink;           /* or is handed here; else captured */
  void *sink_arg;
  /* Body-less requests only: called once, on the calling thread, right
   * after the request headers were written to the socket and before the
   * reply is awaited (a protocol that must act between the two: the
   * hipobj-rc-v2 PUT posts its RDMA WRITE once READY is out). */
  void (*on_sent)(void *arg);
  void *on_sent_arg;
};

enum s3_fail {
  S3_OK = 0,            /* a reply came (any HTTP status) */
  S3_ERR_TRANSPORT,     /* connect, reset, TLS ... (curl code in resp) */
  S3_ERR_TIMEOUT,       /* connect or stall deadline passed */
  S3_ERR_OVERFLOW,      /* reply body larger than dst_cap */
  S3_ERR_ABORTED,       /* the sink or source asked to stop */
  S3_ERR_SIGN,          /* request could not be signed (bad input) */
  S3_ERR_NOMEM
};

struct s3_resp {
  enum s3_fail fail;
  long status;               /* HTTP status, 0 when no reply */
  int curl_code;             /* CURLcode of the transfer */
  char error[256];           /* what failed, for messages (no secrets) */
  char code[64];             /* S3 error <Code>, "" when none */
  uint64_t bytes_in;         /* reply body bytes received */
  uint64_t bytes_out;        /* request body bytes sent */
  uint64_t ttfb_ns;          /* request start to first reply byte */
  uint64_t total_ns;         /* request start to end */
  char *body;                /* captured reply body (NUL ended), or NULL */
  size_t body_len;
  char *headers;             /* the last reply's header block, NUL ended */
  size_t headers_len;
};

/*
 * A new connection for cfg (borrowed: it must outlive the connection).
 * Returns NULL when out of memory or curl cannot start.
 */
struct s3_conn *s3_conn_new(const struct s3_config *cfg);
/* Close and free *c; NULL-safe; sets *c = NULL. */
void s3_conn_free(struct s3_conn **c);

/*
 * Run one request.  Fills *resp (call s3_resp_free after) and returns
 * resp->fail: S3_OK whenever an HTTP reply arrived, whatever its status.
 * A reply body without dst or sink is captured whole (2xx) or up to
 * 1 MiB (others, with the S3 <Code> parsed).
 */
enum s3_fail s3_perform(struct s3_conn *c, const struct s3_req *req,
                        struct s3_resp *resp);
void s3_resp_free(struct s3_resp *resp);

/*
 * Value of reply header name (any case) copied into out (NUL ended,
 * trimmed).  Returns its length, or -1 when absent.
 */
int s3_resp_header(const struct s3_resp *resp, const char *name,
                   char *out, size_t cap);

/* One line about a failed request: "<METHOD> <path>: <what>". */
void s3_describe(const struct s3_req *req, const struct s3_resp *resp,
                 char *out, size_t cap);

const char *s3_strfail(enum s3_fail f);

/* curl_global_init once per process (thread-safe to call again). */
int s3_global_init(void);

#endif
