/*
 * prom.c - read a Prometheus instant-query reply (prom.h).
 */
#include <stdlib.h>
#include <string.h>

#include "prom.h"

int s3rdma_prom_query_value(const char *json, double *out)
{
  const char *p = strstr(json, "\"result\"");
  char *end;
  if(!p || !(p = strstr(p, "\"value\"")) || !(p = strchr(p, '[')) ||
     !(p = strchr(p, ',')))
    return -1;
  p++;
  while(*p == ' ' || *p == '"')
    p++;
  *out = strtod(p, &end);
  return end == p ? -1 : 0;
}
