/*
 * procfs.h - parsers of /proc/stat, /proc/softirqs, /proc/interrupts,
 * /proc/net/dev, /proc/net/snmp and the RDMA port counters in sysfs.
 * Text in (NUL ended), named values appended to a set (set.h); -1 with
 * errno on text that is not what the kernel writes.  Names: docs/counters.md.
 */
#ifndef STRATA_COUNTERS_PROCFS_H
#define STRATA_COUNTERS_PROCFS_H

#include "set.h"

/* First whitespace-separated word of p into key (cut at len - 1);
 * returns what follows it. */
const char *ctr_word(const char *p, char *key, size_t len);
/* The next line of *p (advanced past it) into line, NUL ended: 1, or -1
 * when it was longer than len - 1 (cut to fit), 0 at the end.  Parsers
 * that refuse a long line (it is not what the kernel writes) check -1. */
int ctr_next_line(const char **p, char *line, size_t len);
/* Up to max unsigned decimals from p; returns how many were read. */
int ctr_numbers(const char *p, unsigned long long *v, int max);

/* CPU fields, in /proc/stat order, as named in the series. */
#define CTR_CPU_FIELDS 8
extern const char *const ctr_cpu_fields[CTR_CPU_FIELDS];

/* Which parts of /proc/stat ctr_parse_stat keeps (the "cpu" and "ctxt"
 * names of its source row, procsrc.c). */
#define CTR_STAT_CPU 1u
#define CTR_STAT_CTXT 2u

/* /proc/stat: cpu.total.<f> (and cpu.cpuN.<f> when per_cpu) in seconds
 * when CTR_STAT_CPU is in want; ctxt, processes, intr.total for
 * CTR_STAT_CTXT. */
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

/* The RDMA port counter files under <root>/sys/class/infiniband/<dev>/
 * ports/<p>/{counters,hw_counters}, opened once and re-read with pread
 * (a sysfs attribute is generated again at offset 0). */
struct ctr_rdma_files {
  int *fd;
  char **name;             /* rdma.<dev>.<p>.<counter> */
  size_t n, cap;
};
/* No such directory: an empty list, 0.  -1 only when out of memory. */
int ctr_rdma_files_open(const char *root, struct ctr_rdma_files *f);
int ctr_rdma_files_read(const struct ctr_rdma_files *f, struct ctr_set *s);
void ctr_rdma_files_free(struct ctr_rdma_files *f);
/* Open, read once, close: rdma.<dev>.<p>.<counter> into s. */
int ctr_read_rdma(const char *root, struct ctr_set *s);

/* Read a whole file into *buf (grown as needed, NUL ended).  0 or -1. */
int ctr_read_file(const char *path, char **buf, size_t *cap, size_t *len);

#endif
