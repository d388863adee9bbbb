/*
 * pattern.h - the bytes every S3-over-RDMA test moves: each 8-byte word of
 * an object is splitmix64(seed + word index), so any range of any object
 * can be generated or checked at memory speed without keeping a copy.
 * Checking every word is stronger than comparing one checksum, and it
 * names the first wrong byte.
 */
#ifndef STRATA_S3RDMA_PATTERN_H
#define STRATA_S3RDMA_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* The seed of object number obj of a run seeded with run_seed. */
uint64_t s3rdma_pattern_seed(uint64_t run_seed, uint64_t obj);
/* Fill len bytes at p with the object's bytes [off, off+len). */
void s3rdma_pattern_fill(void *p, uint64_t seed, uint64_t off, size_t len);
/* Check len bytes at p against [off, off+len): returns the index of the
 * first wrong byte, or -1 when all match. */
int64_t s3rdma_pattern_check(const void *p, uint64_t seed, uint64_t off,
                             size_t len);

#endif
