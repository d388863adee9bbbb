/*
 * counters.h - host counters without Lua: parsers for /proc/stat,
 * /proc/softirqs, /proc/interrupts, /proc/net/dev, /proc/net/snmp and the
 * RDMA port counters in sysfs; the Prometheus text exposition format; an
 * HTTP GET over libcurl with a hard timeout; and a sampler thread that
 * snapshots all of them at a fixed interval.
 *
 * Names are dotted and stable (docs/counters.md): cpu.total.user,
 * softirq.NET_RX, intr.<irq>.<name>, ctxt, net.<if>.rx_bytes,
 * tcp.RetransSegs, rdma.<dev>.<port>.<counter>, prom.<src>.<metric>{...}.
 * CPU times are in seconds (jiffies / USER_HZ).
 */
#ifndef STRATA_COUNTERS_H
#define STRATA_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

/* --- Sets of named values ------------------------------------------ */

enum ctr_kind {
  CTR_COUNTER,  /* monotonic: delta, rate, stats of per-interval rates */
  CTR_GAUGE,    /* level: delta = last - first, stats of the values */
  CTR_PCT       /* derived CPU percentage over an interval */
};

struct ctr_set {
  size_t n, cap;
  char **names;          /* owned */
  double *vals;
  unsigned char *kinds;  /* enum ctr_kind */
};

void ctr_set_init(struct ctr_set *s);
void ctr_set_clear(struct ctr_set *s);  /* n = 0, keeps the memory */
void ctr_set_free(struct ctr_set *s);
/* Append name = v; returns -1 when out of memory. */
int ctr_set_add(struct ctr_set *s, const char *name, double v, int kind);
/* Index of name, or -1 (linear: tests and small sets). */
long ctr_set_find(const struct ctr_set *s, const char *name);

/* --- Parsers (text NUL ended; append to s; -1 + errno on bad text) -- */

enum ctr_source {
  CTR_SRC_CPU = 1, CTR_SRC_SOFTIRQ = 2, CTR_SRC_INTR = 4, CTR_SRC_CTXT = 8,
  CTR_SRC_NET = 16, CTR_SRC_RDMA = 32, CTR_SRC_TCP = 64,
  CTR_SRC_ETHTOOL = 128, CTR_SRC_GPU = 256, CTR_SRC_DISK = 512
};

/* CPU fields, in /proc/stat order, as named in the series. */
#define CTR_CPU_FIELDS 8
extern const char *const ctr_cpu_fields[CTR_CPU_FIELDS];

/* /proc/stat: cpu.total.<f> (and cpu.cpuN.<f> when per_cpu) in seconds
 * when CTR_SRC_CPU is in want; ctxt, processes, intr.total for
 * CTR_SRC_CTXT. */
int ctr_parse_stat(const char *text, long clk_tck, unsigned want,
                   int per_cpu, struct ctr_set *s);
/* /proc/softirqs: softirq.<NAME>, summed over CPUs. */
int ctr_parse_softirqs(const char *text, struct ctr_set *s);
/* /proc/interrupts: intr.<irq>.<device> summed over CPUs (device: the
 * last word, [A-Za-z0-9_-] kept); intr.<NMI|LOC|...> for the named rows. */
int ctr_parse_interrupts(const char *text, struct ctr_set *s);
/* /proc/net/dev: net.<if>.{rx,tx}_{bytes,packets,errs,drop}. */
int ctr_parse_netdev(const char *text, struct ctr_set *s);
/* /proc/net/snmp Tcp: tcp.{ActiveOpens,InSegs,OutSegs,RetransSegs,...}. */
int ctr_parse_snmp(const char *text, struct ctr_set *s);
/* Every file in <root>/sys/class/infiniband/<dev>/ports/<p>/counters and
 * .../hw_counters: rdma.<dev>.<p>.<counter>.  No such directory:
 * nothing, returns 0. */
int ctr_read_rdma(const char *root, struct ctr_set *s);

/* /proc/diskstats (diskstats.c): disk.<dev>.<field> per block device,
 * sectors as bytes; fields per the kernel's iostats.rst. */
int ctr_parse_diskstats(const char *text, struct ctr_set *s);
/* Read <root>/proc/diskstats into s.  -1 with "path: what" in err. */
int ctr_read_disk(const char *root, struct ctr_set *s, char *err,
                  size_t errlen);

/* `ethtool -S <ifname>` through the ioctl: ethtool.<if>.<stat> (live
 * host only).  -1 with errno when the interface has no statistics. */
int ctr_read_ethtool(const char *ifname, struct ctr_set *s);

/* Read a whole file into *buf (grown as needed, NUL ended).  0 or -1. */
int ctr_read_file(const char *path, char **buf, size_t *cap, size_t *len);

/* One snapshot of the local sources under root ("" or "/" = this host).
 * CTR_SRC_ETHTOOL reads the interfaces in ifaces (NULL-ended; NULL = every
 * interface with a device behind it); it needs the live host.
 * On failure -1 with "path: strerror" in err. */
int ctr_snapshot(const char *root, unsigned sources, int per_cpu,
                 char *const *ifaces, struct ctr_set *s, char *err,
                 size_t errlen);

/* --- Prometheus text exposition format ------------------------------ */

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
  char *name, *type, *help;  /* type/help may be NULL */
};
struct prom_doc {
  struct prom_sample *s;
  size_t n, cap;
  struct prom_family *fams;
  size_t nfam, famcap;
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

/* --- HTTP GET (libcurl) --------------------------------------------- */

struct http_req {
  const char *url;
  double timeout_s;       /* whole transfer, connect included */
  const char *bearer;     /* token or NULL; never copied into messages */
  const char *ca_bundle;  /* or NULL */
  size_t max_bytes;       /* body cap; 0 = 64 MiB */
  int any_status;         /* HTTP >= 400 is not a failure: caller looks */
};

/* GET; *body malloc'd (NUL ended).  On failure -1 and err holds
 * "<step>: <detail>" (step: url, resolve, connect, tls, response,
 * status, body).  An HTTP status >= 400 is a failure unless any_status. */
int http_get(const struct http_req *r, char **body, size_t *len,
             long *status, char *err, size_t errlen);
/* url without "user:password@" into out. */
void http_safe_url(const char *url, char *out, size_t len);

/* GET r->url and parse it into *doc (free with prom_doc_free).  -1 with
 * err "<step>: <detail>" (the steps of http_get, or "parse: line N: ..."). */
int prom_fetch(const struct http_req *r, struct prom_doc *doc, char *err,
               size_t errlen);
/* Sum of every sample named name, whatever its labels; *found (if given)
 * gets how many there were. */
double prom_sum(const struct prom_doc *d, const char *name, int *found);

/* Scrape url and add prom.<src>.<key> for samples whose name matches one
 * of the fnmatch patterns (none = all).  -1 with err on failure. */
int prom_scrape_into(const struct http_req *r, const char *src,
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
