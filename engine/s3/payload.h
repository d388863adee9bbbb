/*
 * payload.h - object contents that need no per-object buffer: a shared
 * random pattern, with the key's index stamped into the first 16 bytes,
 * so any byte of any object can be regenerated and checked on GET.
 *
 * PUT reads through payload_source (a copy, as curl reading a buffer
 * would); GET bodies are consumed by payload_sink straight from curl's
 * receive buffer, as `curl -o /dev/null` does (no second copy), and
 * compared in place with the pattern when asked.
 */
#ifndef STRATA_S3_PAYLOAD_H
#define STRATA_S3_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#define PAYLOAD_PATTERN_MAX (8u << 20)

struct payload {
  char *pattern;          /* random bytes, len plen */
  size_t plen;
};

/* Fill a pattern of min(size, PAYLOAD_PATTERN_MAX) bytes from seed. */
int payload_init(struct payload *pl, uint64_t size, uint64_t seed);
void payload_free(struct payload *pl);

/* Byte range [off, off+n) of object `index` into out. */
void payload_fill(const struct payload *pl, uint64_t index, uint64_t off,
                  char *out, size_t n);

/* Compare n bytes at off of object `index` with p; 0 when equal. */
int payload_check(const struct payload *pl, uint64_t index, uint64_t off,
                  const char *p, size_t n);

/* A PUT body: object `index`, bytes [base, base + len). */
struct payload_src {
  const struct payload *pl;
  uint64_t index, base;
};
size_t payload_source(void *arg, uint64_t off, char *p, size_t n);

/* A GET destination: checks the bytes in place when verify is set
 * (mismatch counted, transfer goes on); nothing is copied. */
struct payload_dst {
  const struct payload *pl;
  uint64_t index, base;   /* object and the offset the reply starts at */
  int verify;
  int mismatch;
};
size_t payload_sink(void *arg, uint64_t off, const char *p, size_t n);

#endif
