/*
 * prom.h - the Prometheus client: the text exposition format (version
 * 0.0.4) parsed in C, an exposition fetched over the shared HTTP layer
 * (engine/http) and sums over samples.  Used by the counters sampler, the S3 and S3-over-RDMA
 * workloads; Lua: require "strata.prom" (docs/prom.md).  No lua.h.
 */
#ifndef STRATA_PROM_H
#define STRATA_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

/* Every string of a parsed document (names, label names and values, HELP
 * texts) and every label array lives in the document's arena: a few large
 * blocks freed together by prom_doc_free, not one allocation each. */
struct prom_label {
  char *name, *value;
};
struct prom_sample {
  char *name;
  struct prom_label *labels;
  size_t nlabels;
  double value;
  int has_ts;
  int64_t ts_ms;
  long family;  /* index in prom_doc.fams, or -1 */
};
struct prom_family {
  char *name, *help;         /* help may be NULL */
  const char *type;          /* static text ("counter", ...) or NULL */
  size_t len;                /* strlen(name) */
};
struct prom_doc {
  struct prom_sample *s;
  size_t n, cap;
  struct prom_family *fams;
  size_t nfam, famcap;
  struct prom_block *mem;    /* the arena (prom.c) */
};

/* Parse text[0..len).  On malformed input returns -1 and writes
 * "line N: <what>" into err; doc then holds what came before (free it). */
int prom_parse(const char *text, size_t len, struct prom_doc *doc,
               char *err, size_t errlen);
void prom_doc_free(struct prom_doc *doc);
/* "name{a=\"x\",b=\"y\"}" with labels sorted by name and values escaped;
 * returns the length it needs (like snprintf). */
size_t prom_key(const struct prom_sample *s, char *buf, size_t len);
/* Counter-like (counter, histogram, summary, or an untyped name ending in
 * _total/_sum/_count/_bucket)? */
int prom_is_counter(const struct prom_doc *d, const struct prom_sample *s);

/* GET r->url and parse it into *doc (free with prom_doc_free).  -1 with
 * err "<step>: <detail>" (the steps of http_get, or "parse: line N: ..."). */
int prom_fetch(const struct http_req *r, struct prom_doc *doc, char *err,
               size_t errlen);
/* Sum of every sample named name, whatever its labels; *found (if given)
 * gets how many there were. */
double prom_sum(const struct prom_doc *d, const char *name, int *found);

#endif
