/*
 * cuobj_desc.c - check, decode and frame cuObject descriptors
 * (cuobj_desc.h).
 */
#include <stdio.h>
#include <string.h>

#include "cuobj_desc.h"
#include "strata.h"

/* Field widths and names, in order (the last one, gid, 32 hex). */
static const struct { int width; const char *name; } fields[] = {
  { 16, "addr" }, { 8, "size" }, { 8, "rkey" }, { 4, "lid" }, { 6, "qp" },
  { 1, "gid_present" }, { 32, "gid" }
};
#define NFIELDS (int)(sizeof(fields) / sizeof(fields[0]))

static uint64_t hexval(const char *p, int n)
{
  uint64_t v = 0;
  for(int i = 0; i < n; i++)
    v = v << 4 | (uint64_t)strata_hexval(p[i]);
  return v;
}

int s3rdma_cuobj_desc_parse(const char *s, size_t n,
                            struct s3rdma_cuobj_desc *d, char *why,
                            size_t cap)
{
  const char *p = s;
  if(n != S3RDMA_CUOBJ_DESC_LEN) {
    snprintf(why, cap, "length %zu, expected exactly %d", n,
             S3RDMA_CUOBJ_DESC_LEN);
    return -1;
  }
  memset(d, 0, sizeof(*d));
  for(int f = 0; f < NFIELDS; f++) {
    int w = fields[f].width;
    for(int i = 0; i < w; i++)
      if(strata_hexval(p[i]) < 0 || (f == 5 && p[i] != '0' && p[i] != '1')) {
        snprintf(why, cap, "field %d (%s) is not %d %s", f + 1,
                 fields[f].name, w, f == 5 ? "digit 0 or 1" :
                 "hex digits");
        return -1;
      }
    if(f < NFIELDS - 1 && p[w] != ':') {
      snprintf(why, cap, "no ':' after field %d (%s)", f + 1,
               fields[f].name);
      return -1;
    }
    switch(f) {
    case 0: d->addr = hexval(p, w); break;
    case 1: d->size = (uint32_t)hexval(p, w); break;
    case 2: d->rkey = (uint32_t)hexval(p, w); break;
    case 3: d->lid = (uint16_t)hexval(p, w); break;
    case 4: d->qpn = (uint32_t)hexval(p, w); break;
    case 5: d->gid_present = p[0] == '1'; break;
    default:
      for(int i = 0; i < 16; i++)
        d->gid[i] = (uint8_t)hexval(p + 2 * i, 2);
    }
    p += w + 1;
  }
  return 0;
}

int s3rdma_cuobj_token_form(const char *desc, enum s3rdma_token_contract c,
                            uint64_t buf, uint64_t size, char *out,
                            size_t cap, char *why, size_t wcap)
{
  struct s3rdma_cuobj_desc d;
  int w;
  if(s3rdma_cuobj_desc_parse(desc, strlen(desc), &d, why, wcap))
    return -1;
  if(c == S3RDMA_CONTRACT_SUFFIX)
    w = snprintf(out, cap, "%s:%016llx:%016llx", desc,
                 (unsigned long long)buf, (unsigned long long)size);
  else
    w = snprintf(out, cap, "%s", desc);
  if(w < 0 || (size_t)w >= cap) {
    snprintf(why, wcap, "token buffer too small");
    return -1;
  }
  return 0;
}

void s3rdma_cuobj_desc_describe(const struct s3rdma_cuobj_desc *d,
                                char *out, size_t cap)
{
  char gid[33] = "none";
  if(d->gid_present)
    for(int i = 0; i < 16; i++)
      snprintf(gid + 2 * i, 3, "%02x", d->gid[i]);
  snprintf(out, cap, "addr=0x%llx size=%u rkey=0x%x lid=0x%x qp=0x%x "
           "gid=%s", (unsigned long long)d->addr, d->size, d->rkey, d->lid,
           d->qpn, gid);
}
