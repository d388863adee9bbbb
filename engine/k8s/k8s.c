/*
 * k8s.c - the service account token (k8s.h).  Tokens are JWTs of a few
 * KiB; the projected token file ends with no newline, a hand-made one
 * often does: both read the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"

#define K8S_TOKEN_MAX 65536

char *k8s_read_token(const char *path, char *err, size_t errlen)
{
  FILE *f = fopen(path, "r");
  char *buf, *s, *e;
  size_t n;
  if(!f) {
    snprintf(err, errlen, "token file %s: %s", path, strerror(errno));
    return NULL;
  }
  buf = malloc(K8S_TOKEN_MAX);
  if(!buf) {
    fclose(f);
    snprintf(err, errlen, "token file %s: out of memory", path);
    return NULL;
  }
  n = fread(buf, 1, K8S_TOKEN_MAX - 1, f);
  fclose(f);
  buf[n] = 0;
  s = buf;
  while(*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
    s++;
  e = s;
  while(*e && *e != '\r' && *e != '\n')
    e++;
  while(e > s && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  *e = 0;
  if(!*s) {
    free(buf);
    snprintf(err, errlen, "token file %s is empty", path);
    return NULL;
  }
  memmove(buf, s, (size_t)(e - s) + 1);
  return buf;
}
