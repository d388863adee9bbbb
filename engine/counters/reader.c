/*
 * reader.c - snapshots of the local counter sources (counters.h).  A
 * reader opens every file once and re-reads it with pread at offset 0
 * (procfs and sysfs generate the text again there), so a sampler tick
 * costs the kernel's formatting and the parse, not path lookups.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "strata.h"
#include "nvml.h"

/* What one source keeps open between snapshots. */
struct ctr_src_io {
  int fd;                      /* its file, or -1 */
  char path[600];
  struct ctr_rdma_files rdma;
};

struct ctr_reader {
  char root[512];
  unsigned sources;
  int per_cpu;
  char *const *ifaces;
  struct ctr_src_io io[CTR_NSOURCES];
  char *buf;
  size_t cap;
  long tck;
};

/* The whole text of fd from offset 0 into r->buf, NUL ended. */
static int pread_all(struct ctr_reader *r, int fd)
{
  size_t n = 0;
  for(;;) {
    ssize_t got;
    if(!r->buf || r->cap - n < 4096) {
      size_t nc = r->cap ? r->cap * 2 : 65536;
      char *nb = realloc(r->buf, nc);
      if(!nb) {
        errno = ENOMEM;
        return -1;
      }
      r->buf = nb;
      r->cap = nc;
    }
    got = pread(fd, r->buf + n, r->cap - n - 1, (off_t)n);
    if(got < 0 && errno == EINTR)
      continue;
    if(got < 0)
      return -1;
    if(got == 0)
      break;
    n += (size_t)got;
  }
  r->buf[n] = '\0';
  return 0;
}

/* Interfaces with a device behind them (physical NICs, VFs, virtio). */
static int ethtool_all(struct ctr_set *s, char *err, size_t errlen)
{
  struct dirent **e = NULL;
  int n = scandir("/sys/class/net", &e, NULL, alphasort);
  for(int i = 0; i < n; i++) {
    char dev[400];
    if(e[i]->d_name[0] != '.') {
      (void)!snprintf(dev, sizeof(dev), "/sys/class/net/%s/device",
                      e[i]->d_name);
      if(!access(dev, F_OK) && ctr_read_ethtool(e[i]->d_name, s) &&
         errno == ENOMEM) {
        snprintf(err, errlen, "ethtool: out of memory");
        for(; i < n; i++)
          free(e[i]);
        free(e);
        return -1;
      }
    }
    free(e[i]);
  }
  free(e);
  return 0;
}

/* NVML gauges per GPU (gpu.<i>.<what>); no driver or no GPU adds nothing:
 * an absent source is empty, not an error.  NVML blocks ~20 ms per GPU
 * for the PCIe figures, so this source is opt-in. */
static int gpu_sample(struct ctr_set *s, char *err, size_t errlen)
{
  struct nvml_sample g[NVML_GPU_MAX];
  char nerr[256];
  int n = nvml_sample(g, NVML_GPU_MAX, nerr, sizeof(nerr));
  if(n == -NVML_ABSENT)
    return 0;
  if(n < 0) {
    snprintf(err, errlen, "nvml: %s", nerr);
    return -1;
  }
  for(int i = 0; i < n; i++) {
    const struct { const char *what; double v; } f[] = {
      { "util_pct", g[i].gpu_util_pct }, { "mem_util_pct", g[i].mem_util_pct },
      { "power_w", g[i].power_w }, { "sm_clock_mhz", g[i].sm_clock_mhz },
      { "pcie_tx_mbps", g[i].pcie_tx_mbps },
      { "pcie_rx_mbps", g[i].pcie_rx_mbps },
      { "mem_used_bytes", g[i].mem_used_bytes },
    };
    for(size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
      char name[96];
      snprintf(name, sizeof(name), "gpu.%u.%s", g[i].index, f[k].what);
      if(ctr_set_add(s, name, f[k].v, CTR_GAUGE)) {
        snprintf(err, errlen, "gpu counters: out of memory");
        return -1;
      }
    }
  }
  return 0;
}

/* --- The sources: open, read (and parse), close ----------------------- */

/*
 * One source: the names a spec's `sources = {...}` asks for it by (and
 * the bit each name sets; a second name with the same bit is an alias),
 * whether it is read when a spec names none, and its own open, read and
 * close; a file source names its file (under the root) and its parser.
 */
struct ctr_source {
  struct { const char *name; unsigned bit; } as[3];
  int by_default;
  const char *file;
  int (*parse)(struct ctr_reader *r, struct ctr_set *s);
  int (*open)(struct ctr_reader *r, const struct ctr_source *src,
              struct ctr_src_io *io, char *err, size_t errlen);
  int (*read)(struct ctr_reader *r, const struct ctr_source *src,
              struct ctr_src_io *io, struct ctr_set *s, char *err,
              size_t errlen);
  void (*close)(struct ctr_src_io *io);
};

/* A file source: its file, open for the reader's life. */
static int file_open(struct ctr_reader *r, const struct ctr_source *src,
                     struct ctr_src_io *io, char *err, size_t errlen)
{
  snprintf(io->path, sizeof(io->path), "%s%s", r->root, src->file);
  io->fd = open(io->path, O_RDONLY | O_CLOEXEC);
  if(io->fd < 0) {
    snprintf(err, errlen, "%s: %s", io->path, strerror(errno));
    return -1;
  }
  return 0;
}

/* Its text again (pread at offset 0), parsed. */
static int file_read(struct ctr_reader *r, const struct ctr_source *src,
                     struct ctr_src_io *io, struct ctr_set *s, char *err,
                     size_t errlen)
{
  if(pread_all(r, io->fd)) {
    snprintf(err, errlen, "%s: %s", io->path, strerror(errno));
    return -1;
  }
  if(src->parse(r, s)) {
    snprintf(err, errlen, "%s: %s", io->path,
             errno == ENOMEM ? "out of memory" : "unexpected format");
    return -1;
  }
  return 0;
}

static void file_close(struct ctr_src_io *io)
{
  if(io->fd >= 0)
    close(io->fd);
  io->fd = -1;
}

static int stat_parse(struct ctr_reader *r, struct ctr_set *s)
{
  return ctr_parse_stat(r->buf, r->tck, r->sources, r->per_cpu, s);
}

static int softirqs_parse(struct ctr_reader *r, struct ctr_set *s)
{
  return ctr_parse_softirqs(r->buf, s);
}

static int interrupts_parse(struct ctr_reader *r, struct ctr_set *s)
{
  return ctr_parse_interrupts(r->buf, s);
}

static int netdev_parse(struct ctr_reader *r, struct ctr_set *s)
{
  return ctr_parse_netdev(r->buf, s);
}

static int snmp_parse(struct ctr_reader *r, struct ctr_set *s)
{
  return ctr_parse_snmp(r->buf, s);
}

static int rdma_open(struct ctr_reader *r, const struct ctr_source *src,
                     struct ctr_src_io *io, char *err, size_t errlen)
{
  (void)src;
  if(ctr_rdma_files_open(r->root, &io->rdma)) {
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
  if(ctr_rdma_files_read(&io->rdma, s)) {
    snprintf(err, errlen, "rdma counters: out of memory");
    return -1;
  }
  return 0;
}

static void rdma_close(struct ctr_src_io *io)
{
  ctr_rdma_files_free(&io->rdma);
}

/* Nothing to keep open: the ethtool ioctl and NVML are asked each time. */
static int nothing_open(struct ctr_reader *r, const struct ctr_source *src,
                        struct ctr_src_io *io, char *err, size_t errlen)
{
  (void)r, (void)src, (void)io, (void)err, (void)errlen;
  return 0;
}

static void nothing_close(struct ctr_src_io *io)
{
  (void)io;
}

/* The live host only (not a recorded tree). */
static int ethtool_read(struct ctr_reader *r, const struct ctr_source *src,
                        struct ctr_src_io *io, struct ctr_set *s, char *err,
                        size_t errlen)
{
  int rc = 0;
  (void)src, (void)io;
  if(r->root[0])
    return 0;
  if(!r->ifaces)
    rc = ethtool_all(s, err, errlen);
  for(size_t i = 0; r->ifaces && r->ifaces[i] && !rc; i++)
    if(ctr_read_ethtool(r->ifaces[i], s)) {
      snprintf(err, errlen, "ethtool -S %s: %s", r->ifaces[i],
               errno == EOPNOTSUPP ? "the driver has no statistics"
                                   : strerror(errno));
      rc = -1;
    }
  return rc;
}

static int gpu_read(struct ctr_reader *r, const struct ctr_source *src,
                    struct ctr_src_io *io, struct ctr_set *s, char *err,
                    size_t errlen)
{
  (void)src, (void)io;
  return r->root[0] ? 0 : gpu_sample(s, err, errlen);
}

/* A recorded tree without diskstats has no disks, like one without rdma:
 * not an error there. */
static int disk_open(struct ctr_reader *r, const struct ctr_source *src,
                     struct ctr_src_io *io, char *err, size_t errlen)
{
  if(!file_open(r, src, io, err, errlen))
    return 0;
  if(r->root[0] && errno == ENOENT) {
    err[0] = '\0';
    return 0;
  }
  return -1;
}

static int disk_read(struct ctr_reader *r, const struct ctr_source *src,
                     struct ctr_src_io *io, struct ctr_set *s, char *err,
                     size_t errlen)
{
  (void)src;
  if(io->fd < 0)
    return 0;
  if(pread_all(r, io->fd) || ctr_parse_diskstats(r->buf, s)) {
    snprintf(err, errlen, "%s: %s", io->path, errno == ENOMEM ?
             "out of memory" : errno == EINVAL ? "unexpected format" :
             strerror(errno));
    return -1;
  }
  return 0;
}

/* In the order a snapshot reads them: diskstats last, after the sysfs and
 * library sources, as always.  A new source is a row here, its functions
 * above and its bit in counters.h. */
#define FILE_SRC file_open, file_read, file_close
static const struct ctr_source source_rows[CTR_NSOURCES] = {
  { { { "cpu", CTR_SRC_CPU }, { "ctxt", CTR_SRC_CTXT } }, 1,
    "/proc/stat", stat_parse, FILE_SRC },
  { { { "softirq", CTR_SRC_SOFTIRQ } }, 1,
    "/proc/softirqs", softirqs_parse, FILE_SRC },
  { { { "interrupts", CTR_SRC_INTR }, { "intr", CTR_SRC_INTR } }, 1,
    "/proc/interrupts", interrupts_parse, FILE_SRC },
  { { { "net", CTR_SRC_NET } }, 1, "/proc/net/dev", netdev_parse, FILE_SRC },
  { { { "tcp", CTR_SRC_TCP } }, 1, "/proc/net/snmp", snmp_parse, FILE_SRC },
  { { { "rdma", CTR_SRC_RDMA } }, 1, NULL, NULL,
    rdma_open, rdma_read, rdma_close },
  { { { "ethtool", CTR_SRC_ETHTOOL } }, 0, NULL, NULL,
    nothing_open, ethtool_read, nothing_close },
  { { { "gpu", CTR_SRC_GPU } }, 0, NULL, NULL,
    nothing_open, gpu_read, nothing_close },
  { { { "disk", CTR_SRC_DISK } }, 1, "/proc/diskstats", NULL,
    disk_open, disk_read, file_close },
};
#define NAS (sizeof(source_rows[0].as) / sizeof(source_rows[0].as[0]))

/* The bits a row serves. */
static unsigned row_bits(const struct ctr_source *src)
{
  unsigned b = 0;
  for(size_t k = 0; k < NAS; k++)
    b |= src->as[k].bit;
  return b;
}

unsigned ctr_source_bit(const char *name)
{
  for(size_t i = 0; name && i < CTR_NSOURCES; i++)
    for(size_t k = 0; k < NAS && source_rows[i].as[k].name; k++)
      if(!strcmp(name, source_rows[i].as[k].name))
        return source_rows[i].as[k].bit;
  return 0;
}

unsigned ctr_source_default(void)
{
  unsigned b = 0;
  for(size_t i = 0; i < CTR_NSOURCES; i++)
    if(source_rows[i].by_default)
      b |= row_bits(&source_rows[i]);
  return b;
}

void ctr_source_names(char *buf, size_t len)
{
  size_t n = 0;
  buf[0] = '\0';
  /* by bit, one name each (an alias's bit is listed once) */
  for(unsigned bit = 1; bit; bit <<= 1) {
    const char *nm = NULL;
    for(size_t i = 0; i < CTR_NSOURCES && !nm; i++)
      for(size_t k = 0; k < NAS && !nm; k++)
        if(source_rows[i].as[k].name && source_rows[i].as[k].bit == bit)
          nm = source_rows[i].as[k].name;
    if(nm && n < len)
      n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", nm);
  }
}

/* --- The reader ------------------------------------------------------ */

int ctr_reader_open(const char *root, unsigned want, int per_cpu,
                    char *const *ifaces, struct ctr_reader **out,
                    char *err, size_t errlen)
{
  struct ctr_reader *r = calloc(1, sizeof(*r));
  *out = NULL;
  if(!r) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if(!root || !strcmp(root, "/"))
    root = "";
  snprintf(r->root, sizeof(r->root), "%s", root);
  r->sources = want;
  r->per_cpu = per_cpu;
  r->ifaces = ifaces;
  r->tck = sysconf(_SC_CLK_TCK);
  for(int i = 0; i < CTR_NSOURCES; i++)
    r->io[i].fd = -1;
  for(int i = 0; i < CTR_NSOURCES; i++)
    if((want & row_bits(&source_rows[i])) &&
       source_rows[i].open(r, &source_rows[i], &r->io[i], err, errlen)) {
      ctr_reader_close(&r);
      return -1;
    }
  *out = r;
  return 0;
}

void ctr_reader_close(struct ctr_reader **rp)
{
  struct ctr_reader *r = rp ? *rp : NULL;
  if(!r)
    return;
  for(int i = 0; i < CTR_NSOURCES; i++)
    source_rows[i].close(&r->io[i]);
  free(r->buf);
  free(r);
  *rp = NULL;
}

int ctr_reader_read(struct ctr_reader *r, struct ctr_set *s, char *err,
                    size_t errlen)
{
  for(int i = 0; i < CTR_NSOURCES; i++)
    if((r->sources & row_bits(&source_rows[i])) &&
       source_rows[i].read(r, &source_rows[i], &r->io[i], s, err, errlen))
      return -1;
  return 0;
}

int ctr_snapshot(const char *root, unsigned sources, int per_cpu,
                 char *const *ifaces, struct ctr_set *s, char *err,
                 size_t errlen)
{
  struct ctr_reader *r;
  int rc;
  if(ctr_reader_open(root, sources, per_cpu, ifaces, &r, err, errlen))
    return -1;
  rc = ctr_reader_read(r, s, err, errlen);
  ctr_reader_close(&r);
  return rc;
}
