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

static const struct {
  unsigned src;
  const char *file;
} proc_files[CTR_PROC_FILES] = {
  { CTR_SRC_CPU | CTR_SRC_CTXT, "/proc/stat" },
  { CTR_SRC_SOFTIRQ, "/proc/softirqs" },
  { CTR_SRC_INTR, "/proc/interrupts" },
  { CTR_SRC_NET, "/proc/net/dev" },
  { CTR_SRC_TCP, "/proc/net/snmp" },
  { CTR_SRC_DISK, "/proc/diskstats" },   /* (read last) */
};
enum { DISK = CTR_PROC_FILES - 1 };

struct ctr_reader {
  char root[512];
  unsigned sources;
  int per_cpu;
  char *const *ifaces;
  int fd[CTR_PROC_FILES];
  char path[CTR_PROC_FILES][600];
  struct ctr_rdma_files rdma;
  char *buf;
  size_t cap;
  long tck;
};

int ctr_reader_open(const char *root, unsigned sources, int per_cpu,
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
  r->sources = sources;
  r->per_cpu = per_cpu;
  r->ifaces = ifaces;
  r->tck = sysconf(_SC_CLK_TCK);
  for(int i = 0; i < CTR_PROC_FILES; i++) {
    r->fd[i] = -1;
    if(!(sources & proc_files[i].src))
      continue;
    snprintf(r->path[i], sizeof(r->path[i]), "%s%s", r->root,
             proc_files[i].file);
    r->fd[i] = open(r->path[i], O_RDONLY | O_CLOEXEC);
    if(r->fd[i] < 0 && r->root[0] && errno == ENOENT &&
       proc_files[i].src == CTR_SRC_DISK)
      continue;   /* a recorded tree without it: no disks, like rdma */
    if(r->fd[i] < 0) {
      snprintf(err, errlen, "%s: %s", r->path[i], strerror(errno));
      ctr_reader_close(&r);
      return -1;
    }
  }
  if((sources & CTR_SRC_RDMA) && ctr_rdma_files_open(r->root, &r->rdma)) {
    snprintf(err, errlen, "rdma counters: out of memory");
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
  for(int i = 0; i < CTR_PROC_FILES; i++)
    if(r->fd[i] >= 0)
      close(r->fd[i]);
  ctr_rdma_files_free(&r->rdma);
  free(r->buf);
  free(r);
  *rp = NULL;
}

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

int ctr_reader_read(struct ctr_reader *r, struct ctr_set *s, char *err,
                    size_t errlen)
{
  int rc = 0;
  /* diskstats last, after the sysfs and library sources, as always */
  for(int i = 0; i < CTR_PROC_FILES - 1 && !rc; i++) {
    if(r->fd[i] < 0)
      continue;
    if(pread_all(r, r->fd[i])) {
      snprintf(err, errlen, "%s: %s", r->path[i], strerror(errno));
      return -1;
    }
    switch(i) {
    case 0:
      rc = ctr_parse_stat(r->buf, r->tck, r->sources, r->per_cpu, s);
      break;
    case 1: rc = ctr_parse_softirqs(r->buf, s); break;
    case 2: rc = ctr_parse_interrupts(r->buf, s); break;
    case 3: rc = ctr_parse_netdev(r->buf, s); break;
    default: rc = ctr_parse_snmp(r->buf, s); break;
    }
    if(rc)
      snprintf(err, errlen, "%s: %s", r->path[i],
               errno == ENOMEM ? "out of memory" : "unexpected format");
  }
  if(!rc && (r->sources & CTR_SRC_RDMA) &&
     ctr_rdma_files_read(&r->rdma, s)) {
    snprintf(err, errlen, "rdma counters: out of memory");
    rc = -1;
  }
  if(!rc && (r->sources & CTR_SRC_ETHTOOL) && !r->root[0]) {
    if(!r->ifaces)
      rc = ethtool_all(s, err, errlen);
    for(size_t i = 0; r->ifaces && r->ifaces[i] && !rc; i++)
      if(ctr_read_ethtool(r->ifaces[i], s)) {
        snprintf(err, errlen, "ethtool -S %s: %s", r->ifaces[i],
                 errno == EOPNOTSUPP ? "the driver has no statistics"
                                     : strerror(errno));
        rc = -1;
      }
  }
  if(!rc && (r->sources & CTR_SRC_GPU) && !r->root[0])
    rc = gpu_sample(s, err, errlen);
  if(!rc && r->fd[DISK] >= 0) {
    if(pread_all(r, r->fd[DISK]) || ctr_parse_diskstats(r->buf, s)) {
      snprintf(err, errlen, "%s: %s", r->path[DISK], errno == ENOMEM ?
               "out of memory" : errno == EINVAL ? "unexpected format" :
               strerror(errno));
      rc = -1;
    }
  }
  return rc;
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
