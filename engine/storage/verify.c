/*
 * verify.c - the pattern strata writes and checks on read-back, and the
 * random block picker.  Each 512-byte sector: 8 bytes magic, 8 bytes its
 * own file offset (little endian as the host stores it), then a body that
 * is the same in every sector.  The header catches misplaced and stale
 * data (the wrong offset), the body torn or zeroed sectors.
 */
#include <string.h>

#include "storage.h"

#define STG_MAGIC 0x5354524154413031ull  /* "STRATA01" */

static unsigned char body_byte(size_t i)
{
  /* not all one value: a stuck byte lane or a shifted copy shows */
  return (unsigned char)((i * 131u + 7u) & 0xff);
}

void stg_pattern_stamp(unsigned char *buf, size_t len, uint64_t off)
{
  const uint64_t magic = STG_MAGIC;
  for(size_t s = 0; s + STG_SECTOR <= len; s += STG_SECTOR) {
    uint64_t o = off + s;
    memcpy(buf + s, &magic, 8);
    memcpy(buf + s + 8, &o, 8);
  }
}

void stg_pattern_fill(unsigned char *buf, size_t len, uint64_t off)
{
  for(size_t s = 0; s + STG_SECTOR <= len; s += STG_SECTOR)
    for(size_t i = 16; i < STG_SECTOR; i++)
      buf[s + i] = body_byte(i);
  stg_pattern_stamp(buf, len, off);
}

uint64_t stg_pattern_check(const unsigned char *buf, size_t len,
                           uint64_t off, uint64_t *bad)
{
  unsigned char ref[STG_SECTOR];
  uint64_t nbad = 0;
  stg_pattern_fill(ref, sizeof(ref), 0);
  for(size_t s = 0; s + STG_SECTOR <= len; s += STG_SECTOR) {
    uint64_t magic, o;
    memcpy(&magic, buf + s, 8);
    memcpy(&o, buf + s + 8, 8);
    if(magic != STG_MAGIC || o != off + s ||
       memcmp(buf + s + 16, ref + 16, STG_SECTOR - 16)) {
      if(!nbad && bad)
        *bad = off + s;
      nbad++;
    }
  }
  return nbad;
}

uint64_t stg_rand_block(uint64_t *state, uint64_t nblocks)
{
  /* xorshift64* (Vigna 2016): fast, full period, no locks */
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return nblocks ? (x * 0x2545F4914F6CDD1Dull) % nblocks : 0;
}

const char *stg_rw_name(int rw)
{
  switch((enum stg_rw)rw) {
  case STG_READ: return "read";
  case STG_WRITE: return "write";
  case STG_RANDREAD: return "randread";
  case STG_RANDWRITE: return "randwrite";
  }
  return "?";
}

int stg_rw_parse(const char *name)
{
  for(int rw = STG_READ; rw <= STG_RANDWRITE; rw++)
    if(!strcmp(name, stg_rw_name(rw)))
      return rw;
  return -1;
}
