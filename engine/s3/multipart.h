/*
 * multipart.h - S3 multipart upload on one connection: create, upload a
 * part, complete, abort.  Each call fills *resp (s3_resp_free after) and
 * returns 0 on a 2xx reply, -1 otherwise (resp says why: transport
 * failure, or the HTTP status and S3 error code).
 */
#ifndef STRATA_S3_MULTIPART_H
#define STRATA_S3_MULTIPART_H

#include "s3.h"
#include "xml.h"

struct s3_part {
  int number;            /* 1 .. 10000 */
  char etag[80];         /* as the server returned it, quotes included */
};

/* Start an upload; its id is copied into id (cap bytes). */
int s3_mp_create(struct s3_conn *c, const char *bucket, const char *key,
                 char *id, size_t cap, struct s3_resp *resp);

/* Upload part `number` from body/len (or req-style source when body is
 * NULL: source/source_arg); its ETag is copied into etag[80]. */
int s3_mp_part(struct s3_conn *c, const char *bucket, const char *key,
               const char *id, int number, const void *body, uint64_t len,
               s3_source_fn source, void *source_arg, char etag[80],
               struct s3_resp *resp);

/* Complete with the parts in the order given. */
int s3_mp_complete(struct s3_conn *c, const char *bucket, const char *key,
                   const char *id, const struct s3_part *parts, size_t n,
                   struct s3_resp *resp);

/* Abort the upload (204 expected). */
int s3_mp_abort(struct s3_conn *c, const char *bucket, const char *key,
                const char *id, struct s3_resp *resp);

#endif
