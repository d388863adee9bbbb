/*
 * fetch.c - a Prometheus exposition fetched over the shared HTTP layer
 * (engine/http) and parsed; sums over samples.
 */
#include <stdlib.h>
#include <string.h>

#include "prom.h"

int prom_fetch(const struct http_req *r, struct prom_doc *doc, char *err,
               size_t errlen)
{
  char *body = NULL, perrbuf[256];
  size_t len;
  long status;
  int rc = 0;

  memset(doc, 0, sizeof(*doc));
  if(http_get(r, &body, &len, &status, err, errlen))
    return -1;
  if(prom_parse(body, len, doc, perrbuf, sizeof(perrbuf))) {
    snprintf(err, errlen, "parse: %s", perrbuf);
    prom_doc_free(doc);
    rc = -1;
  }
  free(body);
  return rc;
}

double prom_sum(const struct prom_doc *d, const char *name, int *found)
{
  double sum = 0;
  int n = 0;
  for(size_t i = 0; i < d->n; i++)
    if(!strcmp(d->s[i].name, name)) {
      sum += d->s[i].value;
      n++;
    }
  if(found)
    *found = n;
  return sum;
}
