/*
 * promsrc.c - the sampler's Prometheus source: an endpoint scraped
 * through engine/prom, its samples as prom.<src>.<name{labels}> values.
 */
#include <fnmatch.h>
#include <stdio.h>

#include "counters.h"

int ctr_scrape_prom(const struct http_req *r, const char *src,
                    char *const *match, size_t nmatch, struct ctr_set *s,
                    char *err, size_t errlen)
{
  struct prom_doc d;
  char name[1200];
  size_t at = (size_t)snprintf(name, 160, "prom.%.150s.", src);
  int rc = -1;

  if(prom_fetch(r, &d, err, errlen))
    return -1;
  for(size_t i = 0; i < d.n; i++) {
    int ok = nmatch == 0;
    for(size_t m = 0; m < nmatch && !ok; m++)
      ok = fnmatch(match[m], d.s[i].name, 0) == 0;
    if(!ok)
      continue;
    /* "prom.<src>.<key>", the key cut at 1023 bytes as before */
    prom_key(&d.s[i], name + at, 1024);
    if(ctr_set_add(s, name, d.s[i].value,
                   prom_is_counter(&d, &d.s[i]) ? CTR_COUNTER : CTR_GAUGE)) {
      snprintf(err, errlen, "parse: out of memory");
      goto out;
    }
  }
  rc = 0;
out:
  prom_doc_free(&d);
  return rc;
}
