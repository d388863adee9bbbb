/*
 * single.c - one S3 request carrying x-amz-rdma-token (single.h).
 */
#include <stdio.h>
#include <string.h>

#include "single.h"
#include "strata.h"
#include "wire.h"

enum s3rdma_status s3rdma_single_transfer(struct s3_conn *c,
                                          const struct s3rdma_single *q,
                                          struct s3rdma_outcome *o)
{
  struct sigv4_header h[3];
  struct s3_req rq;
  struct s3_resp r;
  char range[64], query[256], v[200], tok[89], st[64] = "";
  size_t nh = 0;
  uint64_t t0 = strata_now_ns(), n64;
  int code = 0;

  memset(o, 0, sizeof(*o));
  memset(&rq, 0, sizeof(rq));
  h[nh++] = (struct sigv4_header){ S3RDMA_H_TOKEN, q->token };
  if(!q->put && q->ranged) {
    snprintf(range, sizeof(range), "bytes=%llu-%llu",
             (unsigned long long)q->offset,
             (unsigned long long)(q->offset + q->size - 1));
    h[nh++] = (struct sigv4_header){ "range", range };
  }
  rq.method = q->put ? "PUT" : "GET";
  rq.bucket = q->bucket;
  rq.key = q->key;
  if(q->part > 0) {
    snprintf(query, sizeof(query), "partNumber=%d&uploadId=%s", q->part,
             q->upload_id ? q->upload_id : "");
    rq.query = query;
  }
  rq.headers = h;
  rq.nheaders = nh;
  rq.payload_hash = SIGV4_UNSIGNED_PAYLOAD;
  rq.dst = v;                    /* an RDMA reply has no body */
  rq.dst_cap = 0;
  o->step = "request";
  s3_perform(c, &rq, &r);
  o->ready_status = r.status;
  o->total_ns = strata_now_ns() - t0;
  if(r.fail == S3_ERR_OVERFLOW) {
    snprintf(o->error, sizeof(o->error), "RDMA not proven: %s %s/%s "
             "answered with the object in the HTTP body (silent TCP "
             "fallback)", rq.method, q->bucket, q->key);
    s3_resp_free(&r);
    return o->status = S3RDMA_FAILED;
  }
  if(r.fail != S3_OK) {
    snprintf(o->error, sizeof(o->error), "%s %s/%s: %s: %s", rq.method,
             q->bucket, q->key, s3_strfail(r.fail), r.error);
    s3_resp_free(&r);
    return o->status = S3RDMA_FAILED;
  }
  (void)s3_resp_header(&r, S3RDMA_H_STATUS, st, sizeof(st));
  if(s3_resp_header(&r, S3RDMA_H_REPLY, v, sizeof(v)) >= 0 &&
     !s3rdma_reply_parse(v, &code, tok))
    o->rdma_reply = code;
  if(r.status == 501 || code == 501) {
    snprintf(o->error, sizeof(o->error), "declined: HTTP %ld%s%s%s%s",
             r.status, r.code[0] ? " " : "", r.code,
             st[0] ? ", protocol status " : "", st);
    s3_resp_free(&r);
    return o->status = S3RDMA_DECLINED;
  }
  if(r.status / 100 != 2) {
    snprintf(o->error, sizeof(o->error), "%s %s/%s: HTTP %ld %s",
             rq.method, q->bucket, q->key, r.status, r.code);
    s3_resp_free(&r);
    return o->status = S3RDMA_FAILED;
  }
  /* x-amz-rdma-bytes-transferred absent: the whole length moved (an
   * older AIStor; minio-cpp rdmaGet does the same) */
  o->bytes_reported = q->size;
  if(s3_resp_header(&r, S3RDMA_H_BYTES, v, sizeof(v)) >= 0 &&
     s3rdma_parse_dec(v, &n64))
    o->bytes_reported = 0;
  else if(s3_resp_header(&r, S3RDMA_H_BYTES, v, sizeof(v)) >= 0)
    o->bytes_reported = n64;
  (void)s3_resp_header(&r, "etag", o->etag, sizeof(o->etag));
  if(q->put && !o->rdma_reply && o->etag[0] && r.status == 200)
    o->rdma_reply = 200;         /* the plain-200-with-ETag PUT form */
  o->reply_ok = s3rdma_reply_ok(q->put, q->ranged || q->part > 0,
                                o->rdma_reply) &&
                o->bytes_reported == q->size && r.bytes_in == 0;
  s3_resp_free(&r);
  o->step = "done";
  if(!o->reply_ok) {
    snprintf(o->error, sizeof(o->error), "RDMA not proven: HTTP %ld, "
             "x-amz-rdma-reply %d, bytes-transferred %llu of %llu",
             o->ready_status, o->rdma_reply,
             (unsigned long long)o->bytes_reported,
             (unsigned long long)q->size);
    return o->status = S3RDMA_FAILED;
  }
  return o->status = S3RDMA_OK;
}
