/*
 * nvml.h - GPU inventory and sampling through NVML, loaded at run time
 * from libnvidia-ml.so.1 (dlopen): a binary built here starts on a host
 * with no NVIDIA driver and reports the absence instead of failing.
 *
 * No lua.h here.  NVML is safe to use in the runner's parent (it is not
 * CUDA): the counter sampler may call nvml_sample() from its thread.
 */
#ifndef STRATA_NVML_H
#define STRATA_NVML_H

#include <stddef.h>

#define NVML_GPU_MAX 64
#define NVML_LINK_MAX 18  /* NVML_NVLINK_MAX_LINKS */

/* Return codes of the functions below. */
enum nvml_status {
  NVML_OK = 0,
  NVML_ABSENT = 1,   /* no library, no driver, no GPU: the caller SKIPs */
  NVML_FAILED = 2    /* the library answered with an error */
};

/* Unknown numbers read -1 (NVML said NOT_SUPPORTED or similar). */
struct nvml_gpu {
  unsigned index;
  char name[96];
  char uuid[96];
  char bus_id[32];          /* normalised like sysfs: "0000:18:00.0" */
  unsigned pci_device_id;   /* device << 16 | vendor */
  long long mem_total;      /* bytes */
  long long mem_used;
  int ecc_enabled;          /* 1, 0, -1 */
  long long ecc_corrected_volatile, ecc_uncorrected_volatile;
  long long ecc_corrected_aggregate, ecc_uncorrected_aggregate;
  long long retired_sbe, retired_dbe;  /* retired pages by cause */
  int retired_pending;
  long long remapped_corr, remapped_unc;
  int remap_pending, remap_failure;
  int sm_clock, mem_clock, sm_clock_max, mem_clock_max;  /* MHz */
  int sm_clock_app, mem_clock_app;   /* applications clocks, MHz */
  int persistence;                   /* 1, 0, -1 */
  double power_w, power_limit_w;
  int temp_c;
  int pcie_gen, pcie_width;          /* current (drops when idle) */
  int pcie_gen_max, pcie_width_max;  /* device and slot together */
  int pcie_gen_gpu_max;              /* the GPU's own maximum */
  long long pcie_replay;
  int numa_node;                     /* sysfs numa_node, -1 none */
  char cpu_affinity[256];            /* cpulist, "0-15,32-47" */
  int nvlinks;                       /* active links */
  int link_active[NVML_LINK_MAX];
  char link_remote[NVML_LINK_MAX][32];  /* remote bus id, normalised */
  int link_remote_type[NVML_LINK_MAX];  /* 0 GPU, 1 IBMNPU, 2 switch */
};

struct nvml_inventory {
  char driver[80];
  char nvml_version[80];
  int cuda_driver;          /* e.g. 13000, -1 unknown */
  int count;
  struct nvml_gpu gpu[NVML_GPU_MAX];
  int level[NVML_GPU_MAX][NVML_GPU_MAX];  /* common ancestor, NVML enum */
};

/* One sample of one GPU for the counter sampler. */
struct nvml_sample {
  unsigned index;
  double gpu_util_pct, mem_util_pct;
  double power_w;
  double sm_clock_mhz;
  double pcie_tx_mbps, pcie_rx_mbps;  /* MB/s (NVML reports KB/s) */
  double mem_used_bytes;
};

/*
 * Fill *inv (caller allocates; about 100 KB, put it on the heap).
 * Returns an nvml_status; on failure err holds the reason.
 * Loads and initialises NVML once per process.
 */
int nvml_inventory(struct nvml_inventory *inv, char *err, size_t len);

/*
 * Sample up to max GPUs into out.  Returns the number of GPUs sampled
 * (>= 0), or -NVML_ABSENT / -NVML_FAILED with err set.  The PCIe
 * throughput counters block for about 20 ms per GPU inside NVML.
 */
int nvml_sample(struct nvml_sample *out, int max, char *err, size_t len);

/*
 * Xid events: register for critical Xid events on every GPU and wait up
 * to wait_ms for any; *xids gets the count, first the first Xid code.
 * NVML only reports Xids that happen while registered; past ones live
 * in the kernel log (nvml_kmsg_xids).  Returns an nvml_status.
 */
int nvml_watch_xids(int wait_ms, int *xids, long long *first,
                    char *err, size_t len);

/*
 * Count "NVRM: Xid" lines in the kernel log (/dev/kmsg, non-blocking).
 * Returns the count (>= 0), or -1 with err set (not readable).  line
 * (if not NULL) gets the last such line.
 */
int nvml_kmsg_xids(char *line, size_t line_len, char *err, size_t len);

/* Normalise an NVML bus id ("00000000:18:00.0") to sysfs form. */
void nvml_bus_id_norm(const char *in, char *out, size_t len);

#endif
