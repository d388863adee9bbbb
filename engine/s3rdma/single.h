/*
 * single.h - the one-round-trip S3-over-RDMA contract (cuObject / AIStor):
 * GetObject / PutObject / UploadPart carrying x-amz-rdma-token, signed,
 * x-amz-content-sha256: UNSIGNED-PAYLOAD, Content-Length: 0, empty body.
 * The server moves the bytes itself and answers x-amz-rdma-reply: 200
 * (206 for a range or a part; a PUT may answer a plain 200 + ETag); a GET
 * also carries x-amz-rdma-bytes-transferred.  501 = declined.  No lua.h.
 */
#ifndef STRATA_S3RDMA_SINGLE_H
#define STRATA_S3RDMA_SINGLE_H

#include <stdint.h>

#include "rc_client.h"
#include "s3.h"

struct s3rdma_single {
  int put;
  const char *bucket, *key;
  int part;
  const char *upload_id;
  uint64_t size, offset;
  int ranged;                /* GET with Range: offset..offset+size-1 */
  const char *token;         /* sent verbatim */
};

/*
 * Send the request on c; fill o (reply_ok: the reply header says the
 * bytes moved; bytes_reported from x-amz-rdma-bytes-transferred, or size
 * for a PUT answered with an ETag).  501 -> S3RDMA_DECLINED with the
 * X-Amz-Rdma-Protocol-Status in the error text.  landed_ok stays 0: the
 * caller checks the bytes.
 */
enum s3rdma_status s3rdma_single_transfer(struct s3_conn *c,
                                          const struct s3rdma_single *q,
                                          struct s3rdma_outcome *o);

#endif
