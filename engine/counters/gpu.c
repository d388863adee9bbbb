/*
 * gpu.c - the "gpu" counter source: NVML gauges per GPU, gpu.<i>.<what>
 * (engine/sys/nvml.h), on the live host only.
 */
#include <stdio.h>

#include "nvml.h"
#include "source.h"

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

static int gpu_read(struct ctr_reader *r, const struct ctr_source *src,
                    struct ctr_src_io *io, struct ctr_set *s, char *err,
                    size_t errlen)
{
  (void)src, (void)io;
  return r->root[0] ? 0 : gpu_sample(s, err, errlen);
}

const struct ctr_source ctr_src_gpu = {
  { { "gpu", 0 } }, 0, NULL, NULL, ctr_nothing_open, gpu_read,
  ctr_nothing_close
};
