/*
 * rc_client.h - the client side of hipobj-rc-v2: one transfer (GET, ranged
 * GET, PUT or UploadPart) through PREPARE -> connect -> READY, with the
 * data moved by RDMA WRITE WITH IMMEDIATE, and every witness of it kept.
 *
 * One struct s3rdma_rc per thread: its own CQ, RC QP (reset and
 * reconnected for every transfer: each server session has a fresh QP) and
 * control connection (SigV4-signed POSTs on the s3 family's client).  The
 * device and the registered buffer are the caller's.  No lua.h.
 */
#ifndef STRATA_S3RDMA_RC_CLIENT_H
#define STRATA_S3RDMA_RC_CLIENT_H

#include <stdint.h>

#include "s3.h"
#include "verbs.h"

enum s3rdma_status {
  S3RDMA_OK = 0,         /* the server moved the bytes and said so */
  S3RDMA_DECLINED,       /* 501: the server will not do RDMA for this */
  S3RDMA_FAILED          /* anything else: see step and error */
};

struct s3rdma_rc {
  struct verbs_dev *dev;         /* borrowed */
  struct ibv_cq *cq;
  struct ibv_qp *qp;
  struct s3_conn *conn;          /* control path */
  int used;                      /* qp left RESET at least once */
  uint64_t landing_grace_ns;     /* wait for the IMM after READY's reply */
  uint64_t put_grace_ns;         /* PUT: READY out -> WRITE posted */
  char host[256];                /* the Host sent and signed on the
                                    control path ("" = the endpoint's) */
};

/* hipObject's client waits 100 ms after READY is out before its PUT
 * WRITE (ROCm/hipObject @7bcffd0 src/rdma/v2-client.cpp, kPutGraceMs). */
#define S3RDMA_PUT_GRACE_NS 100000000ull

/* One transfer to run. */
struct s3rdma_xfer {
  int put;                       /* 0 GET, 1 PUT / UploadPart */
  const char *bucket, *key;
  int part;                      /* UploadPart number, 0 for none */
  const char *upload_id;
  uint64_t size;                 /* bytes to move (1 .. 2^31-1) */
  uint64_t offset;               /* object offset (ranged GET) */
  int has_offset;                /* send x-amz-rdma-offset */
  struct verbs_buf *buf;         /* registered local buffer ... */
  uint64_t buf_off;              /* ... and where in it */
};

/* What happened, witness by witness. */
struct s3rdma_outcome {
  enum s3rdma_status status;
  const char *step;              /* "prepare", "connect", "ready", "data" */
  char error[640];               /* why, when not OK (no secrets) */
  long prepare_status;           /* HTTP status of PREPARE */
  long ready_status;             /* HTTP status of READY */
  int rdma_reply;                /* x-amz-rdma-reply code, 0 if absent */
  int reply_ok;                  /* witness 1: the server said it moved it */
  uint64_t bytes_reported;       /* x-amz-rdma-bytes-transferred (the
                                    size when the header is absent) */
  int posted_after_ready;        /* PUT: the WRITE went out after READY */
  int landed_ok;                 /* witness 2: completion seen, imm ok,
                                    byte count == size */
  uint64_t bytes_landed;         /* GET: RECV byte_len; PUT: size written */
  char etag[80];                 /* PUT / UploadPart */
  uint64_t total_ns;
};


/*
 * Make the per-thread state on dev (borrowed) with the control path on
 * cfg (borrowed; region/service as the caller set them).  Returns a
 * verbs_code (VERBS_OK) with verbs_errmsg() set on failure.
 */
enum verbs_code s3rdma_rc_open(struct s3rdma_rc *rc, struct verbs_dev *dev,
                               const struct s3_config *cfg);
/* Release; NULL-safe, idempotent. */
void s3rdma_rc_close(struct s3rdma_rc *rc);

/*
 * Send and sign the control path's Host without the endpoint's port (1,
 * the default: shared/S3RDMA-WIRE.md, "`host` without port", as the
 * hipobj-rc-v2 reference client signs) or as the endpoint names it (0).
 */
void s3rdma_rc_host_no_port(struct s3rdma_rc *rc, const char *endpoint,
                            int no_port);

/*
 * Run one transfer; fills *o and returns o->status.  On a failure after
 * PREPARE succeeded, sends CANCEL (best effort).  The caller checks the
 * landed bytes (pattern.h) for GET; PUT is checked by reading back.
 */
enum s3rdma_status s3rdma_rc_transfer(struct s3rdma_rc *rc,
                                      const struct s3rdma_xfer *x,
                                      struct s3rdma_outcome *o);

#endif
