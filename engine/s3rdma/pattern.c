/*
 * pattern.c - generate and check object bytes (pattern.h).
 */
#include <string.h>

#include "pattern.h"

static inline uint64_t mix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t s3rdma_pattern_seed(uint64_t run_seed, uint64_t obj)
{
  return mix(run_seed ^ mix(obj + 1));
}

/* Byte i (0..7) of word w, little-endian. */
static inline uint8_t byte_at(uint64_t seed, uint64_t off)
{
  return (uint8_t)(mix(seed + off / 8) >> (8 * (off % 8)));
}

void s3rdma_pattern_fill(void *p, uint64_t seed, uint64_t off, size_t len)
{
  uint8_t *b = p;
  size_t i = 0;
  while(i < len && (off + i) % 8)
    b[i] = byte_at(seed, off + i), i++;
  for(; i + 8 <= len; i += 8) {
    uint64_t w = mix(seed + (off + i) / 8);
    memcpy(b + i, &w, 8);            /* little-endian host (x86, arm64) */
  }
  for(; i < len; i++)
    b[i] = byte_at(seed, off + i);
}

int64_t s3rdma_pattern_check(const void *p, uint64_t seed, uint64_t off,
                             size_t len)
{
  const uint8_t *b = p;
  size_t i = 0;
  for(; i < len && (off + i) % 8; i++)
    if(b[i] != byte_at(seed, off + i))
      return (int64_t)i;
  for(; i + 8 <= len; i += 8) {
    uint64_t w = mix(seed + (off + i) / 8), g;
    memcpy(&g, b + i, 8);
    if(g != w)
      break;
  }
  for(; i < len; i++)
    if(b[i] != byte_at(seed, off + i))
      return (int64_t)i;
  return -1;
}
