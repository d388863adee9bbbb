/*
 * fuzz_http.c - libFuzzer harness for the reference S3-over-RDMA server's
 * request-head parser (fixtures/s3rdma/http.c): what any client sends.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct http_req rq;
  char *h = malloc(size + 1);

  if(!h)
    return 0;
  memcpy(h, data, size);
  h[size] = '\0';
  memset(&rq, 0, sizeof(rq));
  if(!http_parse_head(h, &rq)) {
    if(rq.nh > HTTP_MAX_HEADERS || rq.target[0] != '/')
      abort();
    (void)http_header(&rq, "content-length");
    (void)http_header(&rq, "x-amz-rdma-token");
  }
  free(h);
  return 0;
}
