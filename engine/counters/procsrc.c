/*
 * procsrc.c - the counter sources over procfs.c's parsers: /proc/stat
 * (cpu, ctxt), /proc/softirqs, /proc/interrupts, /proc/net/dev,
 * /proc/net/snmp and the RDMA port counters in sysfs, one row each
 * (source.h; listed in sources.def).
 */
#include <stdio.h>
#include <stdlib.h>

#include "procfs.h"
#include "source.h"

/* io->want: bit 1 for "cpu", bit 2 for "ctxt" (CTR_STAT_*). */
static int stat_parse(struct ctr_reader *r, struct ctr_src_io *io,
                      struct ctr_set *s)
{
  return ctr_parse_stat(r->buf, r->tck, io->want, r->per_cpu, s);
}

const struct ctr_source ctr_src_stat = {
  { { "cpu", 0 }, { "ctxt", 0 } }, 1, "/proc/stat", stat_parse,
  CTR_FILE_SOURCE
};

static int softirqs_parse(struct ctr_reader *r, struct ctr_src_io *io,
                          struct ctr_set *s)
{
  (void)io;
  return ctr_parse_softirqs(r->buf, s);
}

const struct ctr_source ctr_src_softirqs = {
  { { "softirq", 0 } }, 1, "/proc/softirqs", softirqs_parse, CTR_FILE_SOURCE
};

static int interrupts_parse(struct ctr_reader *r, struct ctr_src_io *io,
                            struct ctr_set *s)
{
  (void)io;
  return ctr_parse_interrupts(r->buf, s);
}

const struct ctr_source ctr_src_interrupts = {
  { { "interrupts", 0 }, { "intr", 1 } }, 1, "/proc/interrupts",
  interrupts_parse, CTR_FILE_SOURCE
};

static int netdev_parse(struct ctr_reader *r, struct ctr_src_io *io,
                        struct ctr_set *s)
{
  (void)io;
  return ctr_parse_netdev(r->buf, s);
}

const struct ctr_source ctr_src_netdev = {
  { { "net", 0 } }, 1, "/proc/net/dev", netdev_parse, CTR_FILE_SOURCE
};

static int snmp_parse(struct ctr_reader *r, struct ctr_src_io *io,
                      struct ctr_set *s)
{
  (void)io;
  return ctr_parse_snmp(r->buf, s);
}

const struct ctr_source ctr_src_snmp = {
  { { "tcp", 0 } }, 1, "/proc/net/snmp", snmp_parse, CTR_FILE_SOURCE
};

/* The port counter files, opened once (no such directory: none). */
static int rdma_open(struct ctr_reader *r, const struct ctr_source *src,
                     struct ctr_src_io *io, char *err, size_t errlen)
{
  struct ctr_rdma_files *f = calloc(1, sizeof(*f));
  (void)src;
  io->priv = f;
  if(!f || ctr_rdma_files_open(r->root, f)) {
    snprintf(err, errlen, "rdma counters: out of memory");
    return -1;
  }
  return 0;
}

static int rdma_read(struct ctr_reader *r, const struct ctr_source *src,
                     struct ctr_src_io *io, struct ctr_set *s, char *err,
                     size_t errlen)
{
  (void)r, (void)src;
  if(ctr_rdma_files_read(io->priv, s)) {
    snprintf(err, errlen, "rdma counters: out of memory");
    return -1;
  }
  return 0;
}

static void rdma_close(struct ctr_src_io *io)
{
  if(io->priv)
    ctr_rdma_files_free(io->priv);
  free(io->priv);
  io->priv = NULL;
}

const struct ctr_source ctr_src_rdma = {
  { { "rdma", 0 } }, 1, NULL, NULL, rdma_open, rdma_read, rdma_close
};
