/*
 * wire.h - the hipobj-rc-v2 control path on the wire, in one place: the
 * header names, the routes, the limits, and the parsers both the client
 * (rc_client.c) and the reference server (fixtures/s3rdma) use.
 * Facts: ../../../shared/S3RDMA-WIRE.md; choices: docs/s3-rdma.md.
 */
#ifndef STRATA_S3RDMA_WIRE_H
#define STRATA_S3RDMA_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define S3RDMA_PROTOCOL "hipobj-rc-v2"
#define S3RDMA_ROUTE_PREPARE "/.hipobj-rc/prepare"
#define S3RDMA_ROUTE_READY "/.hipobj-rc/ready"
#define S3RDMA_ROUTE_CANCEL "/.hipobj-rc/cancel"
#define S3RDMA_SIGN_SERVICE "hipobj"

/* Request and reply headers (matched case-insensitively). */
#define S3RDMA_H_PROTOCOL "x-amz-rdma-protocol"
#define S3RDMA_H_TOKEN "x-amz-rdma-token"
#define S3RDMA_H_REPLY "x-amz-rdma-reply"
#define S3RDMA_H_STATUS "x-amz-rdma-protocol-status"
#define S3RDMA_H_OP "x-amz-rdma-op"
#define S3RDMA_H_TARGET "x-amz-rdma-target"
#define S3RDMA_H_SIZE "x-amz-rdma-size"
#define S3RDMA_H_OFFSET "x-amz-rdma-offset"
#define S3RDMA_H_PSN "x-amz-rdma-psn"
#define S3RDMA_H_COOKIE "x-amz-rdma-cookie"
#define S3RDMA_H_SESSION "x-amz-rdma-session"
#define S3RDMA_H_QPN "x-amz-rdma-qpn"
#define S3RDMA_H_MR_ADDR "x-amz-rdma-mr-addr"
#define S3RDMA_H_MR_RKEY "x-amz-rdma-mr-rkey"
#define S3RDMA_H_BYTES "x-amz-rdma-bytes-transferred"
#define S3RDMA_H_ETAG "x-amz-rdma-etag"
#define S3RDMA_UNSUPPORTED "unsupported"

#define S3RDMA_SIZE_MAX 2147483647ull     /* PREPARE size: 1 .. 2^31-1 */
#define S3RDMA_SESSION_HEX 32
#define S3RDMA_SESSION_TTL_MS 10000       /* PREPARE without READY dies */

/*
 * Parse s as 1..maxdigits hex digits (either case, nothing else) into *v.
 * Returns 0 or -1.
 */
int s3rdma_parse_hex(const char *s, int maxdigits, uint64_t *v);
/* Parse s as 1..20 decimal digits into *v (no sign, no overflow). 0/-1. */
int s3rdma_parse_dec(const char *s, uint64_t *v);

/*
 * An x-amz-rdma-reply value: "200", "206", "501", "200:<88-hex token>" or
 * the legacy "ok"/"err" (200 / 500).  Sets *code and, when a token
 * follows, copies it into token[89] (else token[0] = 0).  Returns 0, or
 * -1 when the value is none of these.
 */
int s3rdma_reply_parse(const char *v, int *code, char token[89]);

/*
 * Whether an x-amz-rdma-reply code means the bytes moved: GET 200 or 206;
 * PUT / UploadPart 200 or 204, and 206 for a part (partial = a range or
 * a part).  Sources: minio/minio-cpp @769130e include/miniocpp/rdma.h
 * (kRDMAReplySuccess/NoContent/PartialContent, rdmaPut accepts 200|204,
 * rdmaGet 200|206); ROCm/hipObject @7bcffd0 src/rdma/v2-client.cpp
 * (READY's final reply: 200, or 204 for a PUT).  501 is a decline, never
 * success.
 */
int s3rdma_reply_ok(int put, int partial, int code);

/* A PREPARE target "/bucket/key[?partNumber=N[&uploadId=ID]]", split. */
struct s3rdma_target {
  char bucket[64];
  char key[1024];        /* raw (percent-decoded) key */
  int part;              /* 0 when no partNumber */
  char upload_id[128];   /* "" when none */
};

/*
 * Parse a target as sent (the path part percent-encoded).  Returns 0, or
 * -1 with why (static text) on a malformed one.
 */
int s3rdma_target_parse(const char *s, struct s3rdma_target *t,
                        const char **why);
/*
 * Build the target for bucket/key (key URI-encoded, '/' kept), with
 * ?partNumber=N&uploadId=ID when part > 0.  Returns 0, or -1 when out is
 * too small.
 */
int s3rdma_target_build(const char *bucket, const char *key, int part,
                        const char *upload_id, char *out, size_t cap);

#endif
