/*
 * xml.c - element text out of S3 reply bodies (xml.h).
 */
#include <stdio.h>
#include <string.h>

#include "xml.h"

int s3_xml_tag(const char *xml, const char *tag, char *out, size_t cap)
{
  char open[80], close[80];
  const char *a, *b;
  size_t n;

  if(!xml || !cap)
    return -1;
  snprintf(open, sizeof(open), "<%s>", tag);
  snprintf(close, sizeof(close), "</%s>", tag);
  a = strstr(xml, open);
  if(!a)
    return -1;
  a += strlen(open);
  b = strstr(a, close);
  if(!b)
    return -1;
  n = (size_t)(b - a);
  if(n >= cap)
    return -1;
  memcpy(out, a, n);
  out[n] = '\0';
  return 0;
}

void s3_xml_error_code(const char *body, char *out, size_t cap)
{
  const char *a, *b;
  size_t n;

  if(!cap)
    return;
  out[0] = '\0';
  if(!body || !(a = strstr(body, "<Code>")))
    return;
  a += 6;
  if(!(b = strstr(a, "</Code>")))
    return;
  n = (size_t)(b - a);
  if(n >= cap)
    n = cap - 1;
  memcpy(out, a, n);
  out[n] = '\0';
}
