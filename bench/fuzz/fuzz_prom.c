/*
 * fuzz_prom.c - libFuzzer harness for the Prometheus text exposition
 * parser (engine/prom/prom.c): what any scraped endpoint sends.  Every
 * parsed sample is also keyed and classified, as the sampler does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct prom_doc doc;
  char err[256], key[512];

  memset(&doc, 0, sizeof(doc));
  (void)prom_parse((const char *)data, size, &doc, err, sizeof(err));
  for(size_t i = 0; i < doc.n; i++) {
    size_t need = prom_key(&doc.s[i], key, sizeof(key));
    if(need >= sizeof(key)) {
      char *big = malloc(need + 1);
      if(big) {
        if(prom_key(&doc.s[i], big, need + 1) != need)
          abort();
        free(big);
      }
    }
    (void)prom_is_counter(&doc, &doc.s[i]);
  }
  if(doc.n) {
    int found;
    (void)prom_sum(&doc, doc.s[0].name, &found);
  }
  prom_doc_free(&doc);
  return 0;
}
