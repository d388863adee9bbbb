/*
 * token.c - encode and decode the 44-byte hipobj-rc-v2 token (token.h).
 */
#include <string.h>

#include "token.h"
#include "strata.h"

static void put_le(uint8_t *p, uint64_t v, int n)
{
  for(int i = 0; i < n; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
  uint64_t v = 0;
  for(int i = n - 1; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

void s3rdma_token_encode(const struct s3rdma_token *t, char out[89])
{
  static const char digits[] = "0123456789abcdef";
  uint8_t b[S3RDMA_TOKEN_BYTES];

  b[0] = t->transport;
  put_le(b + 1, t->qpn, 4);
  memcpy(b + 5, t->gid, 16);
  put_le(b + 21, t->rkey, 4);
  put_le(b + 25, t->addr, 8);
  put_le(b + 33, t->len, 8);
  b[41] = t->port;
  put_le(b + 42, t->lid, 2);
  for(int i = 0; i < S3RDMA_TOKEN_BYTES; i++) {
    out[2 * i] = digits[b[i] >> 4];
    out[2 * i + 1] = digits[b[i] & 15];
  }
  out[S3RDMA_TOKEN_HEX] = '\0';
}

int s3rdma_token_decode(const char *hex, size_t n, struct s3rdma_token *t,
                        const char **why)
{
  uint8_t b[S3RDMA_TOKEN_BYTES];
  const char *dummy;

  if(!why)
    why = &dummy;
  if(n != S3RDMA_TOKEN_HEX) {
    *why = "length";
    return -1;
  }
  for(int i = 0; i < S3RDMA_TOKEN_BYTES; i++) {
    int hi = strata_hexval(hex[2 * i]), lo = strata_hexval(hex[2 * i + 1]);
    if(hi < 0 || lo < 0) {
      *why = "not hex";
      return -1;
    }
    b[i] = (uint8_t)(hi << 4 | lo);
  }
  if(b[0] != S3RDMA_TRANSPORT_RC) {
    *why = "transport";
    return -1;
  }
  memset(t, 0, sizeof(*t));
  t->transport = b[0];
  t->qpn = (uint32_t)get_le(b + 1, 4);
  memcpy(t->gid, b + 5, 16);
  t->rkey = (uint32_t)get_le(b + 21, 4);
  t->addr = get_le(b + 25, 8);
  t->len = get_le(b + 33, 8);
  t->port = b[41];
  t->lid = (uint16_t)get_le(b + 42, 2);
  return 0;
}
