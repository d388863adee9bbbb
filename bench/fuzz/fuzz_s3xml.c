/*
 * fuzz_s3xml.c - libFuzzer harness for what strata reads out of S3 reply
 * bodies (engine/s3/xml.c): an element's text and an error's <Code>.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *body = malloc(size + 1), out[256], code[64];
  static const char *const tags[] = { "UploadId", "Code", "Message", "ETag" };

  if(!body)
    return 0;
  memcpy(body, data, size);
  body[size] = '\0';   /* the client NUL-ends every body it keeps */
  for(size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
    if(!s3_xml_tag(body, tags[i], out, sizeof(out)) &&
       strlen(out) >= sizeof(out))
      abort();
  }
  (void)s3_xml_tag(body, "Code", out, 1);
  s3_xml_error_code(body, code, sizeof(code));
  if(strlen(code) >= sizeof(code))
    abort();
  free(body);
  return 0;
}
