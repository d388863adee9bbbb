/*
 * cuobj_desc.h - NVIDIA cuObject's RDMA descriptor, the x-amz-rdma-token
 * that AIStor takes: 81 characters, colon separated,
 *
 *   <addr:16>:<size:8>:<rkey:8>:<lid:4>:<qp:6>:<gid_present:1>:<gid:32>
 *
 * hex (gid_present a decimal digit).  Sources: the format string in
 * libcufile.so.1.18.0 (minio/minio-cpp @769130e vendor/cuobj/lib/x86_64,
 * `strings`: "%016llx:%08x:%08x:%04x:%06x:%d:%016lx%016lx", which
 * cuFileRDMADescStrGet prints), and minio/rdma-training @9d96166
 * docs/troubleshooting.md section 3 (the 81-char layout).
 *
 * The contract with AIStor changed on 2026-08-07: releases from then on
 * take the descriptor exactly as produced and answer 500 "unexpected
 * suffix on client RDMA token ... expected exactly 81" to anything
 * longer; older releases required ":<addr:16>:<size:16>" appended (the
 * buffer address and size, minio-cpp before @769130e: "%s:%016lx:%016lx").
 * No lua.h.
 */
#ifndef STRATA_S3RDMA_CUOBJ_DESC_H
#define STRATA_S3RDMA_CUOBJ_DESC_H

#include <stddef.h>
#include <stdint.h>

#define S3RDMA_CUOBJ_DESC_LEN 81
#define S3RDMA_CUOBJ_SUFFIX_LEN 34        /* ":<16 hex>:<16 hex>" */

/* Which x-amz-rdma-token form the site's AIStor takes (site key
 * s3rdma.token_contract). */
enum s3rdma_token_contract {
  S3RDMA_CONTRACT_CURRENT = 0,   /* the descriptor verbatim (>= 2026-08-07) */
  S3RDMA_CONTRACT_SUFFIX         /* + ":<addr>:<size>" (older releases) */
};

struct s3rdma_cuobj_desc {
  uint64_t addr;         /* buffer address the server moves to / from */
  uint32_t size;         /* transfer size (a 32-bit field) */
  uint32_t rkey;
  uint16_t lid;
  uint32_t qpn;          /* 24 bits: the client's DC target */
  int gid_present;       /* 0 or 1 */
  uint8_t gid[16];       /* network order */
};

/*
 * Check that s (n bytes) is exactly one descriptor and decode it.
 * Returns 0, or -1 with why ("length 115, expected exactly 81", "field 3
 * (rkey) is not 8 hex digits", ...).
 */
int s3rdma_cuobj_desc_parse(const char *s, size_t n,
                            struct s3rdma_cuobj_desc *d, char *why,
                            size_t cap);

/*
 * The x-amz-rdma-token to send for descriptor desc (validated first)
 * under contract c: the descriptor verbatim, or with ":%016llx:%016llx"
 * of buf and size appended.  Writes a NUL-ended string into out (cap >=
 * 116).  Returns 0, or -1 with why.
 */
int s3rdma_cuobj_token_form(const char *desc, enum s3rdma_token_contract c,
                            uint64_t buf, uint64_t size, char *out,
                            size_t cap, char *why, size_t wcap);

/* "addr=0x... size=N rkey=0x... lid=0x... qp=0x... gid=<32 hex>|none" */
void s3rdma_cuobj_desc_describe(const struct s3rdma_cuobj_desc *d,
                                char *out, size_t cap);

#endif
