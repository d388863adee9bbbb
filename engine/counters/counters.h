/*
 * counters.h - the counter sampler and its sources, without Lua: the
 * /proc and sysfs parsers (procfs.h), NIC statistics (ethtool.h), NVML
 * gauges, a reader that keeps every source file open between snapshots,
 * and a sampler thread that snapshots them at a fixed interval, with
 * Prometheus endpoints scraped through engine/prom beside it.
 *
 * Names are dotted and stable (docs/counters.md): cpu.total.user,
 * softirq.NET_RX, intr.<irq>.<name>, ctxt, net.<if>.rx_bytes,
 * tcp.RetransSegs, rdma.<dev>.<port>.<counter>, prom.<src>.<metric>{...}.
 * CPU times are in seconds (jiffies / USER_HZ).
 *
 * Files, bottom up: set.c (named values) <- procfs.c, ethtool.c (the
 * parsers) <- one file per source's row (source.h, listed in
 * sources.def) <- reader.c (snapshots) <- sampler.c; none calls upward.
 */
#ifndef STRATA_COUNTERS_H
#define STRATA_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "ethtool.h"
#include "procfs.h"
#include "../prom/prom.h"   /* prom_fetch, prom_doc and struct http_req
                              * (http.h): ctr_scrape_prom, promsrc.c */
#include "set.h"

/* The bits a reader is asked for, for callers in C.  A name's bit is its
 * place in sources.def (source.h), so these follow that list and
 * counters_test checks each against ctr_source_bit; a source that only
 * specs ask for (by name) needs none here. */
enum ctr_source_bits {
  CTR_SRC_CPU = 1, CTR_SRC_CTXT = 2, CTR_SRC_SOFTIRQ = 4, CTR_SRC_INTR = 8,
  CTR_SRC_NET = 16, CTR_SRC_TCP = 32, CTR_SRC_RDMA = 64,
  CTR_SRC_ETHTOOL = 128, CTR_SRC_GPU = 256, CTR_SRC_DISK = 512
};

/* --- Snapshots (reader.c) ------------------------------------------- */

/* The bit of a source by its name in a spec's `sources = {...}`; 0 for
 * no such source. */
unsigned ctr_source_bit(const char *name);
/* The sources read when a spec names none. */
unsigned ctr_source_default(void);
/* The sources' names, ", " between, for a message. */
void ctr_source_names(char *buf, size_t len);

/* /proc/diskstats (diskstats.c): disk.<dev>.<field> per block device,
 * sectors as bytes; fields per the kernel's iostats.rst. */
int ctr_parse_diskstats(const char *text, struct ctr_set *s);

struct ctr_reader;

/* Open the files of the sources asked for under root ("" or "/" = this
 * host) once; ifaces as for ctr_snapshot (kept by pointer: it must
 * outlive the reader).  -1 with "path: strerror" in err. */
int ctr_reader_open(const char *root, unsigned sources, int per_cpu,
                    char *const *ifaces, struct ctr_reader **out,
                    char *err, size_t errlen);
/* One snapshot into s (appended), each file re-read with pread. */
int ctr_reader_read(struct ctr_reader *r, struct ctr_set *s, char *err,
                    size_t errlen);
void ctr_reader_close(struct ctr_reader **r);

/* One snapshot of the local sources under root ("" or "/" = this host):
 * a reader opened, read once and closed.
 * CTR_SRC_ETHTOOL reads the interfaces in ifaces (NULL-ended; NULL = every
 * interface with a device behind it); it needs the live host.
 * On failure -1 with "path: strerror" in err. */
int ctr_snapshot(const char *root, unsigned sources, int per_cpu,
                 char *const *ifaces, struct ctr_set *s, char *err,
                 size_t errlen);

/* Scrape url and add prom.<src>.<key> for samples whose name matches one
 * of the fnmatch patterns (none = all).  -1 with err on failure. */
int ctr_scrape_prom(const struct http_req *r, const char *src,
                    char *const *match, size_t nmatch, struct ctr_set *s,
                    char *err, size_t errlen);


/* --- Sampler thread -------------------------------------------------- */

struct ctr_prom_src {
  char *name, *url, *bearer, *ca_bundle;  /* bearer: the token itself */
  char **match;
  size_t nmatch;
  double timeout_s;
};

struct ctr_opts {
  double interval_s;
  unsigned sources;
  int per_cpu;
  const char *root;         /* "" = this host */
  size_t max_samples;       /* series cap before halving; 0 = 4096 */
  struct ctr_prom_src *prom;
  size_t nprom;
  double prom_interval_s;   /* 0 = max(interval, 1 s) */
  int intr_top;             /* keep the N interrupt rows that moved most */
  const char *intr_match;   /* or those whose name matches (fnmatch) */
  char *const *ethtool;     /* interfaces for CTR_SRC_ETHTOOL, or NULL */
};

struct ctr_sampler;

/* Take the first snapshot (and first scrapes) and start the thread(s).
 * -1 with err (a scrape failure names the URL and the step). */
int ctr_sampler_start(const struct ctr_opts *o, struct ctr_sampler **out,
                      char *err, size_t errlen);
/* Stop: final scrape, final snapshot, join, compute the result. */
void ctr_sampler_stop(struct ctr_sampler *s);
void ctr_sampler_free(struct ctr_sampler **s);

/* The result, valid after stop.  Series values: per-second rates over the
 * interval ending at t[j] for counters, the value for gauges, the
 * percentage for CTR_PCT; column i of row j is series[j * n + i]. */
struct ctr_result {
  double duration_s;
  size_t n;                /* names kept (see keep) */
  const char *const *names;
  const unsigned char *kinds;
  const unsigned char *keep;  /* 0 for interrupt rows filtered out */
  const double *delta, *rate;
  const double *min, *mean, *max;
  size_t nt;               /* series points (t[0] = 0 has no rate) */
  const double *t, *series;
  size_t ticks;            /* snapshots taken */
  double cpu_s;            /* CPU time of the sampler's threads (its cost) */
  size_t nerrors;
  const char *const *errors;  /* scrape failures during the run */
};
void ctr_sampler_result(const struct ctr_sampler *s, struct ctr_result *r);

/* Pure helpers, tested by counters_test.c. */
/* CPU percentages over an interval from the 8 CPU field deltas. */
void ctr_cpu_pct(const double d[CTR_CPU_FIELDS], double *busy, double *user,
                 double *system, double *iowait, double *irq,
                 double *softirq);
/* Per-second rate, NaN when dt <= 0; a counter that went backwards
 * (reset, wrap) counts from zero. */
double ctr_rate(double a, double b, double dt);

#endif
