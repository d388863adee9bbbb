/*
 * token.h - the 44-byte RDMA token of hipobj-rc-v2, as 88 lowercase hex.
 *
 * Layout, integers little-endian (../../docs/s3-rdma.md, "Token";
 * shared/S3RDMA-WIRE.md; ROCm/hipObject src/rdma/token.h):
 *   transport u8 (1 = RC) | qpn u32 | gid[16] | rkey u32 |
 *   addr u64 | len u64 | port u8 | lid u16
 * Only RC is spoken: hipObject's token.h also names 0x00 (its own DC
 * variant), which no peer of strata's uses.  NVIDIA cuObject's descriptor
 * (what AIStor takes) is a different thing altogether: cuobj_desc.h.
 * No lua.h: shared by the client, the reference server and the unit test.
 */
#ifndef STRATA_S3RDMA_TOKEN_H
#define STRATA_S3RDMA_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define S3RDMA_TOKEN_BYTES 44
#define S3RDMA_TOKEN_HEX 88
#define S3RDMA_TRANSPORT_RC 1

struct s3rdma_token {
  uint8_t transport;     /* S3RDMA_TRANSPORT_RC */
  uint32_t qpn;          /* 24 bits used */
  uint8_t gid[16];       /* network order, as ibv_gid.raw */
  uint32_t rkey;
  uint64_t addr;
  uint64_t len;
  uint8_t port;
  uint16_t lid;
};

/* Encode t as 88 lowercase hex digits + NUL into out[89]. */
void s3rdma_token_encode(const struct s3rdma_token *t, char out[89]);

/*
 * Decode exactly 88 hex digits (either case) at hex into *t.  Returns 0,
 * or -1 with why (a static string: "length", "not hex", "transport").
 * A transport byte other than RC (01) is refused.
 */
int s3rdma_token_decode(const char *hex, size_t n, struct s3rdma_token *t,
                        const char **why);


#endif
