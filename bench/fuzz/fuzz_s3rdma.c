/*
 * fuzz_s3rdma.c - libFuzzer harness for the S3-over-RDMA control-path
 * codecs (engine/s3rdma): the RDMA token, cuObject's RDMA descriptor (the
 * token AIStor takes), the x-amz-rdma-reply value, the PREPARE target, the
 * hex/decimal header values.  The first byte picks the codec (4 is
 * unused: it was the Prometheus instant-query reply, read in Lua now by
 * lib/s3rdma.lua).  What decodes must encode back to the same thing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cuobj_desc.h"
#include "token.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *s;
  const char *why;

  if(size < 1)
    return 0;
  s = malloc(size);
  if(!s)
    return 0;
  memcpy(s, data + 1, size - 1);
  s[size - 1] = '\0';
  switch(data[0] % 6) {
  case 0: {
    struct s3rdma_token t;
    char back[89];
    if(!s3rdma_token_decode((const char *)data + 1, size - 1, &t, &why)) {
      s3rdma_token_encode(&t, back);
      if(size - 1 != 88 || strncasecmp(back, (const char *)data + 1, 88))
        abort();
    }
    break;
  }
  case 1: {
    int code;
    char token[89];
    if(!s3rdma_reply_parse(s, &code, token) && (code < 100 || code > 599))
      abort();
    break;
  }
  case 2: {
    struct s3rdma_target t, t2;
    char built[4096];
    if(!s3rdma_target_parse(s, &t, &why) &&
       !s3rdma_target_build(t.bucket, t.key, t.part, t.upload_id, built,
                            sizeof(built))) {
      if(s3rdma_target_parse(built, &t2, &why) || strcmp(t.key, t2.key) ||
         strcmp(t.bucket, t2.bucket) || t.part != t2.part)
        abort();
    }
    break;
  }
  case 3: {
    uint64_t v;
    (void)s3rdma_parse_hex(s, 16, &v);
    (void)s3rdma_parse_dec(s, &v);
    break;
  }
  case 5: {
    struct s3rdma_cuobj_desc d;
    char why[128], tok[160];
    if(!s3rdma_cuobj_desc_parse((const char *)data + 1, size - 1, &d, why,
                                sizeof(why))) {
      if(size - 1 != S3RDMA_CUOBJ_DESC_LEN)
        abort();
      if(s3rdma_cuobj_token_form(s, S3RDMA_CONTRACT_SUFFIX, d.addr, d.size,
                                 tok, sizeof(tok), why, sizeof(why)) ||
         strlen(tok) != S3RDMA_CUOBJ_DESC_LEN + S3RDMA_CUOBJ_SUFFIX_LEN)
        abort();
    }
    break;
  }
  default:
    break;
  }
  free(s);
  return 0;
}
