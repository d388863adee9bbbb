/*
 * multipart.c - S3 multipart upload requests (multipart.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multipart.h"

static int ok(enum s3_fail f, const struct s3_resp *r)
{
  return f == S3_OK && r->status >= 200 && r->status < 300;
}

/* Encode an upload id for a query value (ids may hold '+', '/', '='). */
static int enc_id(const char *id, char *out, size_t cap)
{
  return sigv4_uri_encode(id, strlen(id), 0, out, cap) == (size_t)-1 ? -1
                                                                      : 0;
}

/* enc_id, or r says why not (the request is never sent). */
static int enc_id_for(const char *id, char *out, size_t cap,
                      struct s3_resp *r)
{
  if(!enc_id(id, out, cap))
    return 0;
  memset(r, 0, sizeof(*r));
  snprintf(r->error, sizeof(r->error), "upload id too long");
  return -1;
}

int s3_mp_create(struct s3_conn *c, const char *bucket, const char *key,
                 char *id, size_t cap, struct s3_resp *r)
{
  struct s3_req q = { 0 };
  q.method = "POST";
  q.bucket = bucket;
  q.key = key;
  q.query = "uploads";
  if(!ok(s3_perform(c, &q, r), r))
    return -1;
  if(s3_xml_tag(r->body, "UploadId", id, cap)) {
    snprintf(r->error, sizeof(r->error), "reply has no <UploadId>");
    r->fail = S3_ERR_TRANSPORT;
    return -1;
  }
  return 0;
}

int s3_mp_part(struct s3_conn *c, const char *bucket, const char *key,
               const char *id, int number, const void *body, uint64_t len,
               s3_source_fn source, void *source_arg, char etag[80],
               struct s3_resp *r)
{
  struct s3_req q = { 0 };
  char query[600], eid[512];

  if(enc_id_for(id, eid, sizeof(eid), r))
    return -1;
  snprintf(query, sizeof(query), "partNumber=%d&uploadId=%s", number, eid);
  q.method = "PUT";
  q.bucket = bucket;
  q.key = key;
  q.query = query;
  q.body = body;
  q.body_len = len;
  q.source = body ? NULL : source;
  q.source_arg = source_arg;
  if(!ok(s3_perform(c, &q, r), r))
    return -1;
  if(s3_resp_header(r, "etag", etag, 80) < 0)
    etag[0] = '\0';
  return 0;
}

int s3_mp_complete(struct s3_conn *c, const char *bucket, const char *key,
                   const char *id, const struct s3_part *parts, size_t n,
                   struct s3_resp *r)
{
  struct s3_req q = { 0 };
  char query[600], eid[512];
  size_t cap = 128 + n * 160, o = 0;
  char *xml = malloc(cap);
  int rc = -1;

  memset(r, 0, sizeof(*r));
  if(!xml || enc_id(id, eid, sizeof(eid))) {
    snprintf(r->error, sizeof(r->error), "out of memory or id too long");
    free(xml);
    return -1;
  }
  o += (size_t)snprintf(xml + o, cap - o, "<CompleteMultipartUpload>");
  for(size_t i = 0; i < n; i++)
    o += (size_t)snprintf(xml + o, cap - o,
                          "<Part><PartNumber>%d</PartNumber>"
                          "<ETag>%s</ETag></Part>", parts[i].number,
                          parts[i].etag);
  o += (size_t)snprintf(xml + o, cap - o, "</CompleteMultipartUpload>");
  snprintf(query, sizeof(query), "uploadId=%s", eid);
  q.method = "POST";
  q.bucket = bucket;
  q.key = key;
  q.query = query;
  q.body = xml;
  q.body_len = o;
  if(ok(s3_perform(c, &q, r), r)) {
    /* a 200 may still carry an <Error> body (S3 documents this) */
    if(r->body && strstr(r->body, "<Error>")) {
      s3_xml_tag(r->body, "Code", r->code, sizeof(r->code));
      snprintf(r->error, sizeof(r->error), "complete failed: %s", r->code);
    }
    else
      rc = 0;
  }
  free(xml);
  return rc;
}

int s3_mp_abort(struct s3_conn *c, const char *bucket, const char *key,
                const char *id, struct s3_resp *r)
{
  struct s3_req q = { 0 };
  char query[600], eid[512];
  if(enc_id_for(id, eid, sizeof(eid), r))
    return -1;
  snprintf(query, sizeof(query), "uploadId=%s", eid);
  q.method = "DELETE";
  q.bucket = bucket;
  q.key = key;
  q.query = query;
  return ok(s3_perform(c, &q, r), r) ? 0 : -1;
}
