/*
 * sigv4.h - AWS Signature Version 4 (header form, AWS4-HMAC-SHA256).
 *
 * A standalone signer on OpenSSL's libcrypto, no curl and no Lua: the S3
 * client (s3.h) signs every request with it, and so can any other
 * transport that speaks SigV4-signed HTTP (the S3-over-RDMA control path).
 * Checked against AWS's published test suite (fixtures/s3/sigv4/).
 *
 * Canonicalisation, as S3 does it:
 *   - the path is used as given: the caller URI-encodes it once
 *     (sigv4_uri_encode with keep_slash) and sends the same string;
 *     S3 does not normalise or double-encode paths;
 *   - the query (as sent, without '?') is split on '&', each name and
 *     value percent-decoded then strictly re-encoded, "name" alone becomes
 *     "name=", pairs sorted by name then value;
 *   - header names are lower-cased, values trimmed with inner runs of
 *     spaces folded to one, duplicates joined with ',' in the order given,
 *     sorted by name; every header handed in is signed.
 */
#ifndef STRATA_SIGV4_H
#define STRATA_SIGV4_H

#include <stddef.h>
#include <time.h>

/* SHA-256 of an empty payload, the body hash of every body-less request. */
#define SIGV4_EMPTY_SHA256 \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"

struct sigv4_header {
  const char *name;      /* any case; signed lower-cased */
  const char *value;     /* trimmed and space-folded when signed */
};

/* Secrets: borrowed, never copied into any output by this module. */
struct sigv4_creds {
  const char *access_key;
  const char *secret_key;
  const char *session_token;   /* NULL, or sent as x-amz-security-token */
};

struct sigv4_request {
  const char *method;          /* "GET", "PUT", "POST" ... */
  const char *path;            /* URI-encoded path as sent, "/" at least */
  const char *query;           /* query as sent, no '?'; NULL or "" */
  const struct sigv4_header *headers;  /* all headers to sign; must hold
                                          host and x-amz-date */
  size_t nheaders;
  const char *payload_hash;    /* lowercase hex SHA-256 of the body, or
                                  SIGV4_UNSIGNED_PAYLOAD */
};

/*
 * Canonical request (task 1) into a malloc'd string (*out, caller frees).
 * Returns 0, or -1 when out of memory or the request is malformed
 * (a header without a name, too many headers).
 */
int sigv4_canonical_request(const struct sigv4_request *req, char **out);

/*
 * String to sign (task 2) for amz_date ("YYYYMMDDTHHMMSSZ"), region and
 * service, into a malloc'd string.  Returns 0 or -1.
 */
int sigv4_string_to_sign(const struct sigv4_request *req,
                         const char *amz_date, const char *region,
                         const char *service, char **out);

/*
 * The Authorization header value (without "Authorization: "), tasks 1-4:
 * "AWS4-HMAC-SHA256 Credential=<ak>/<date>/<region>/<service>/aws4_request,
 *  SignedHeaders=<list>, Signature=<hex>".  Writes at most outlen bytes
 * including the NUL.  Returns 0, or -1 (out of memory, malformed, or out
 * too small).
 */
int sigv4_authorization(const struct sigv4_creds *creds,
                        const struct sigv4_request *req,
                        const char *amz_date, const char *region,
                        const char *service, char *out, size_t outlen);

/* "YYYYMMDDTHHMMSSZ" for t (UTC) into out[17]. */
void sigv4_amz_date(time_t t, char out[17]);

/* Lowercase hex SHA-256 of n bytes into out[65]. */
void sigv4_sha256_hex(const void *data, size_t n, char out[65]);

/*
 * URI-encode n bytes of in, RFC 3986 unreserved characters kept, every
 * other byte %XX (upper hex); '/' kept when keep_slash.  Writes the NUL
 * ended result into out (cap bytes).  Returns the length written, or
 * (size_t)-1 when cap is too small.
 */
size_t sigv4_uri_encode(const char *in, size_t n, int keep_slash,
                        char *out, size_t cap);

#endif
