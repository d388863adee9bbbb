/*
 * payload.c - regenerable object contents (payload.h).
 */
#include <stdlib.h>
#include <string.h>

#include "payload.h"

#define STAMP 16

int payload_init(struct payload *pl, uint64_t size, uint64_t seed)
{
  uint64_t x = seed ? seed : 0x9e3779b97f4a7c15ull;
  size_t n = size < PAYLOAD_PATTERN_MAX ? (size_t)size : PAYLOAD_PATTERN_MAX;
  if(n < 64)
    n = 64;
  pl->plen = n;
  pl->pattern = malloc(n);
  if(!pl->pattern)
    return -1;
  for(size_t i = 0; i + 8 <= n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    memcpy(pl->pattern + i, &x, 8);
  }
  return 0;
}

void payload_free(struct payload *pl)
{
  free(pl->pattern);
  pl->pattern = NULL;
}

/* The first STAMP bytes of every object: "strata" + index, fixed width. */
static void stamp(uint64_t index, char out[STAMP])
{
  memcpy(out, "strata:", 7);
  for(int i = 0; i < 9; i++)
    out[7 + i] = "0123456789abcdef"[(index >> (4 * (8 - i))) & 15];
}

void payload_fill(const struct payload *pl, uint64_t index, uint64_t off,
                  char *out, size_t n)
{
  size_t done = 0;
  while(done < n) {
    uint64_t o = off + done;
    size_t at = (size_t)(o % pl->plen);
    size_t k = pl->plen - at;
    if(k > n - done)
      k = n - done;
    memcpy(out + done, pl->pattern + at, k);
    done += k;
  }
  if(off < STAMP) {
    char s[STAMP];
    size_t k = STAMP - (size_t)off;
    stamp(index, s);
    memcpy(out, s + off, k < n ? k : n);
  }
}

/* Compare in place against the pattern (no regenerated copy: checking
 * costs one read of the received bytes, not a fill plus a compare). */
int payload_check(const struct payload *pl, uint64_t index, uint64_t off,
                  const char *p, size_t n)
{
  size_t done = 0;
  if(off < STAMP && n) {
    char s[STAMP];
    size_t k = STAMP - (size_t)off;
    if(k > n)
      k = n;
    stamp(index, s);
    if(memcmp(s + off, p, k))
      return -1;
    done = k;
  }
  while(done < n) {
    size_t at = (size_t)((off + done) % pl->plen);
    size_t k = pl->plen - at;
    if(k > n - done)
      k = n - done;
    if(memcmp(pl->pattern + at, p + done, k))
      return -1;
    done += k;
  }
  return 0;
}

size_t payload_source(void *arg, uint64_t off, char *p, size_t n)
{
  struct payload_src *s = arg;
  payload_fill(s->pl, s->index, s->base + off, p, n);
  return n;
}

size_t payload_sink(void *arg, uint64_t off, const char *p, size_t n)
{
  struct payload_dst *d = arg;
  if(d->verify && !d->mismatch &&
     payload_check(d->pl, d->index, d->base + off, p, n))
    d->mismatch = 1;
  return n;
}
