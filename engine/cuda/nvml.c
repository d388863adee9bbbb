/*
 * nvml.c - the few NVML entry points strata uses, declared here (this
 * build machine has no nvml.h) and resolved with dlsym from
 * libnvidia-ml.so.1 on first use.  Types and enum values follow NVML's
 * public API (nvml.h of driver 5xx); every struct used is spelled out
 * below.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml.h"

/* --- NVML's types, as its API defines them ----------------------------- */
typedef int nvmlReturn_t;            /* NVML_SUCCESS = 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

struct nvmlPciInfo_st {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

struct nvmlMemory_st {
  unsigned long long total, free, used;
};

struct nvmlUtilization_st {
  unsigned int gpu, memory;
};

struct nvmlEventData_st {
  nvmlDevice_t device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1
#define NVML_PAGE_RETIREMENT_CAUSE_SBE 0
#define NVML_PAGE_RETIREMENT_CAUSE_DBE 1
#define NVML_EVENT_TYPE_XID 0x8ull

/* --- the function table ------------------------------------------------ */
#define NVML_FUNCS(X) \
  X(nvmlInit_v2, (void)) \
  X(nvmlErrorString, (nvmlReturn_t)) \
  X(nvmlSystemGetDriverVersion, (char *, unsigned)) \
  X(nvmlSystemGetNVMLVersion, (char *, unsigned)) \
  X(nvmlSystemGetCudaDriverVersion_v2, (int *)) \
  X(nvmlDeviceGetCount_v2, (unsigned *)) \
  X(nvmlDeviceGetHandleByIndex_v2, (unsigned, nvmlDevice_t *)) \
  X(nvmlDeviceGetName, (nvmlDevice_t, char *, unsigned)) \
  X(nvmlDeviceGetUUID, (nvmlDevice_t, char *, unsigned)) \
  X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t, struct nvmlPciInfo_st *)) \
  X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t, struct nvmlMemory_st *)) \
  X(nvmlDeviceGetEccMode, (nvmlDevice_t, int *, int *)) \
  X(nvmlDeviceGetTotalEccErrors, (nvmlDevice_t, int, int, \
                                  unsigned long long *)) \
  X(nvmlDeviceGetRetiredPages, (nvmlDevice_t, int, unsigned *, \
                                unsigned long long *)) \
  X(nvmlDeviceGetRetiredPagesPendingStatus, (nvmlDevice_t, int *)) \
  X(nvmlDeviceGetRemappedRows, (nvmlDevice_t, unsigned *, unsigned *, \
                                unsigned *, unsigned *)) \
  X(nvmlDeviceGetClockInfo, (nvmlDevice_t, int, unsigned *)) \
  X(nvmlDeviceGetMaxClockInfo, (nvmlDevice_t, int, unsigned *)) \
  X(nvmlDeviceGetApplicationsClock, (nvmlDevice_t, int, unsigned *)) \
  X(nvmlDeviceGetPersistenceMode, (nvmlDevice_t, int *)) \
  X(nvmlDeviceGetPowerUsage, (nvmlDevice_t, unsigned *)) \
  X(nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t, unsigned *)) \
  X(nvmlDeviceGetTemperature, (nvmlDevice_t, int, unsigned *)) \
  X(nvmlDeviceGetCurrPcieLinkGeneration, (nvmlDevice_t, unsigned *)) \
  X(nvmlDeviceGetCurrPcieLinkWidth, (nvmlDevice_t, unsigned *)) \
  X(nvmlDeviceGetMaxPcieLinkGeneration, (nvmlDevice_t, unsigned *)) \
  X(nvmlDeviceGetMaxPcieLinkWidth, (nvmlDevice_t, unsigned *)) \
  X(nvmlDeviceGetGpuMaxPcieLinkGeneration, (nvmlDevice_t, unsigned *)) \
  X(nvmlDeviceGetPcieReplayCounter, (nvmlDevice_t, unsigned *)) \
  X(nvmlDeviceGetPcieThroughput, (nvmlDevice_t, int, unsigned *)) \
  X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t, \
                                    struct nvmlUtilization_st *)) \
  X(nvmlDeviceGetNvLinkState, (nvmlDevice_t, unsigned, int *)) \
  X(nvmlDeviceGetNvLinkRemotePciInfo_v2, (nvmlDevice_t, unsigned, \
                                          struct nvmlPciInfo_st *)) \
  X(nvmlDeviceGetNvLinkRemoteDeviceType, (nvmlDevice_t, unsigned, int *)) \
  X(nvmlDeviceGetTopologyCommonAncestor, (nvmlDevice_t, nvmlDevice_t, \
                                          int *)) \
  X(nvmlDeviceGetCpuAffinity, (nvmlDevice_t, unsigned, unsigned long *)) \
  X(nvmlEventSetCreate, (nvmlEventSet_t *)) \
  X(nvmlDeviceRegisterEvents, (nvmlDevice_t, unsigned long long, \
                               nvmlEventSet_t)) \
  X(nvmlEventSetWait_v2, (nvmlEventSet_t, struct nvmlEventData_st *, \
                          unsigned)) \
  X(nvmlEventSetFree, (nvmlEventSet_t))

#define DECLARE(name, args) nvmlReturn_t (*name) args;
static struct {
  NVML_FUNCS(DECLARE)
} fn;
#undef DECLARE

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t loaded_pid;     /* the process that ran nvmlInit */
static int load_status = -1; /* nvml_status once tried */
static char load_err[256];

static const char *nvml_text(nvmlReturn_t r)
{
  const char *(*es)(nvmlReturn_t) = (const char *(*)(nvmlReturn_t))
    (void *)fn.nvmlErrorString;
  return es ? es(r) : "NVML error";
}

/* dlopen + nvmlInit, once per process (a forked child initialises
 * again: NVML handles are not promised to survive fork). */
static int nvml_load(char *err, size_t len)
{
  int status;
  pthread_mutex_lock(&load_lock);
  if(load_status < 0 || loaded_pid != getpid()) {
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    loaded_pid = getpid();
    if(!h) {
      const char *e = dlerror();
      snprintf(load_err, sizeof(load_err),
               "libnvidia-ml.so.1 not loadable (no NVIDIA driver): %s",
               e ? e : "dlopen failed");
      load_status = NVML_ABSENT;
    }
    else {
      nvmlReturn_t r;
#define RESOLVE(name, args) \
      *(void **)&fn.name = dlsym(h, #name);
      NVML_FUNCS(RESOLVE)
#undef RESOLVE
      if(!fn.nvmlInit_v2 || !fn.nvmlDeviceGetCount_v2 ||
         !fn.nvmlDeviceGetHandleByIndex_v2) {
        snprintf(load_err, sizeof(load_err),
                 "libnvidia-ml.so.1 lacks nvmlInit_v2 (driver too old)");
        load_status = NVML_ABSENT;
      }
      else if((r = fn.nvmlInit_v2()) != NVML_SUCCESS) {
        snprintf(load_err, sizeof(load_err), "nvmlInit: %s (%d)",
                 nvml_text(r), r);
        load_status = (r == NVML_ERROR_DRIVER_NOT_LOADED ||
                       r == NVML_ERROR_LIBRARY_NOT_FOUND)
                      ? NVML_ABSENT : NVML_FAILED;
      }
      else
        load_status = NVML_OK;
    }
  }
  status = load_status;
  if(status != NVML_OK)
    snprintf(err, len, "%s", load_err);
  pthread_mutex_unlock(&load_lock);
  return status;
}

/* Call an optional entry point: a missing one reads NOT_SUPPORTED. */
#define CALL(name, ...) \
  (fn.name ? fn.name(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

void nvml_bus_id_norm(const char *in, char *out, size_t len)
{
  const char *p = in;
  size_t n = 0;
  /* NVML writes an 8-digit domain; sysfs uses 4.  Keep the last 4. */
  const char *colon = strchr(in, ':');
  if(colon && colon - in > 4)
    p = colon - 4;
  for(; *p && n + 1 < len; p++)
    out[n++] = (char)tolower((unsigned char)*p);
  if(len)
    out[n] = '\0';
}

static int read_sysfs_int(const char *bus, const char *attr, int def)
{
  char path[128];
  FILE *f;
  int v = def;
  snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bus, attr);
  f = fopen(path, "r");
  if(!f)
    return def;
  if(fscanf(f, "%d", &v) != 1)
    v = def;
  fclose(f);
  return v;
}

/* Bit mask of unsigned longs -> cpulist text "0-15,32-47". */
static void mask_to_list(const unsigned long *m, unsigned words,
                         char *out, size_t len)
{
  size_t n = 0;
  int start = -1;
  unsigned bits = words * 8 * (unsigned)sizeof(unsigned long);
  out[0] = '\0';
  for(unsigned b = 0; b <= bits; b++) {
    int set = b < bits &&
      (m[b / (8 * sizeof(unsigned long))] >>
       (b % (8 * sizeof(unsigned long)))) & 1ul;
    if(set && start < 0)
      start = (int)b;
    if(!set && start >= 0) {
      int w;
      if((int)b - 1 == start)
        w = snprintf(out + n, len - n, "%s%d", n ? "," : "", start);
      else
        w = snprintf(out + n, len - n, "%s%d-%d", n ? "," : "", start,
                     (int)b - 1);
      if(w < 0 || (size_t)w >= len - n)
        return;
      n += (size_t)w;
      start = -1;
    }
  }
}

static long long get_ll(nvmlReturn_t r, unsigned long long v)
{
  return r == NVML_SUCCESS ? (long long)v : -1;
}

static int get_u(nvmlReturn_t r, unsigned v)
{
  return r == NVML_SUCCESS ? (int)v : -1;
}

static void read_gpu(nvmlDevice_t d, unsigned i, struct nvml_gpu *g)
{
  struct nvmlPciInfo_st pci;
  struct nvmlMemory_st mem;
  unsigned long long v;
  unsigned u, u2, u3, u4;
  int cur, pend;
  unsigned long mask[16];
  nvmlReturn_t r;

  memset(g, 0, sizeof(*g));
  g->index = i;
  if(CALL(nvmlDeviceGetName, d, g->name, sizeof(g->name)) != NVML_SUCCESS)
    snprintf(g->name, sizeof(g->name), "?");
  if(CALL(nvmlDeviceGetUUID, d, g->uuid, sizeof(g->uuid)) != NVML_SUCCESS)
    snprintf(g->uuid, sizeof(g->uuid), "?");
  memset(&pci, 0, sizeof(pci));
  if(CALL(nvmlDeviceGetPciInfo_v3, d, &pci) == NVML_SUCCESS) {
    nvml_bus_id_norm(pci.busId, g->bus_id, sizeof(g->bus_id));
    g->pci_device_id = pci.pciDeviceId;
  }
  r = CALL(nvmlDeviceGetMemoryInfo, d, &mem);
  g->mem_total = get_ll(r, mem.total);
  g->mem_used = get_ll(r, mem.used);
  r = CALL(nvmlDeviceGetEccMode, d, &cur, &pend);
  g->ecc_enabled = r == NVML_SUCCESS ? cur : -1;
  r = CALL(nvmlDeviceGetTotalEccErrors, d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
           NVML_VOLATILE_ECC, &v);
  g->ecc_corrected_volatile = get_ll(r, v);
  r = CALL(nvmlDeviceGetTotalEccErrors, d,
           NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &v);
  g->ecc_uncorrected_volatile = get_ll(r, v);
  r = CALL(nvmlDeviceGetTotalEccErrors, d, NVML_MEMORY_ERROR_TYPE_CORRECTED,
           NVML_AGGREGATE_ECC, &v);
  g->ecc_corrected_aggregate = get_ll(r, v);
  r = CALL(nvmlDeviceGetTotalEccErrors, d,
           NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &v);
  g->ecc_uncorrected_aggregate = get_ll(r, v);
  u = 0;  /* count only: a NULL address array asks for the size */
  r = CALL(nvmlDeviceGetRetiredPages, d, NVML_PAGE_RETIREMENT_CAUSE_SBE,
           &u, NULL);
  g->retired_sbe = (r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE)
                   ? (long long)u : -1;
  u = 0;
  r = CALL(nvmlDeviceGetRetiredPages, d, NVML_PAGE_RETIREMENT_CAUSE_DBE,
           &u, NULL);
  g->retired_dbe = (r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE)
                   ? (long long)u : -1;
  r = CALL(nvmlDeviceGetRetiredPagesPendingStatus, d, &pend);
  g->retired_pending = r == NVML_SUCCESS ? pend : -1;
  r = CALL(nvmlDeviceGetRemappedRows, d, &u, &u2, &u3, &u4);
  g->remapped_corr = r == NVML_SUCCESS ? (long long)u : -1;
  g->remapped_unc = r == NVML_SUCCESS ? (long long)u2 : -1;
  g->remap_pending = r == NVML_SUCCESS ? (int)u3 : -1;
  g->remap_failure = r == NVML_SUCCESS ? (int)u4 : -1;
  r = CALL(nvmlDeviceGetClockInfo, d, NVML_CLOCK_SM, &u);
  g->sm_clock = get_u(r, u);
  r = CALL(nvmlDeviceGetClockInfo, d, NVML_CLOCK_MEM, &u);
  g->mem_clock = get_u(r, u);
  r = CALL(nvmlDeviceGetMaxClockInfo, d, NVML_CLOCK_SM, &u);
  g->sm_clock_max = get_u(r, u);
  r = CALL(nvmlDeviceGetMaxClockInfo, d, NVML_CLOCK_MEM, &u);
  g->mem_clock_max = get_u(r, u);
  /* the clocks set for applications (nvidia-smi -ac) and persistence
   * mode (-pm): settings a fleet's nodes should share (H4's golden) */
  r = CALL(nvmlDeviceGetApplicationsClock, d, NVML_CLOCK_SM, &u);
  g->sm_clock_app = get_u(r, u);
  r = CALL(nvmlDeviceGetApplicationsClock, d, NVML_CLOCK_MEM, &u);
  g->mem_clock_app = get_u(r, u);
  r = CALL(nvmlDeviceGetPersistenceMode, d, &cur);
  g->persistence = r == NVML_SUCCESS ? cur : -1;
  r = CALL(nvmlDeviceGetPowerUsage, d, &u);
  g->power_w = r == NVML_SUCCESS ? u / 1000.0 : -1;
  r = CALL(nvmlDeviceGetEnforcedPowerLimit, d, &u);
  g->power_limit_w = r == NVML_SUCCESS ? u / 1000.0 : -1;
  r = CALL(nvmlDeviceGetTemperature, d, NVML_TEMPERATURE_GPU, &u);
  g->temp_c = get_u(r, u);
  r = CALL(nvmlDeviceGetCurrPcieLinkGeneration, d, &u);
  g->pcie_gen = get_u(r, u);
  r = CALL(nvmlDeviceGetCurrPcieLinkWidth, d, &u);
  g->pcie_width = get_u(r, u);
  r = CALL(nvmlDeviceGetMaxPcieLinkGeneration, d, &u);
  g->pcie_gen_max = get_u(r, u);
  r = CALL(nvmlDeviceGetMaxPcieLinkWidth, d, &u);
  g->pcie_width_max = get_u(r, u);
  r = CALL(nvmlDeviceGetGpuMaxPcieLinkGeneration, d, &u);
  g->pcie_gen_gpu_max = get_u(r, u);
  r = CALL(nvmlDeviceGetPcieReplayCounter, d, &u);
  g->pcie_replay = r == NVML_SUCCESS ? (long long)u : -1;
  g->numa_node = g->bus_id[0] ? read_sysfs_int(g->bus_id, "numa_node", -1)
                              : -1;
  memset(mask, 0, sizeof(mask));
  if(CALL(nvmlDeviceGetCpuAffinity, d, 16, mask) == NVML_SUCCESS)
    mask_to_list(mask, 16, g->cpu_affinity, sizeof(g->cpu_affinity));
  for(unsigned l = 0; l < NVML_LINK_MAX; l++) {
    int active = 0, type = -1;
    g->link_remote_type[l] = -1;
    if(CALL(nvmlDeviceGetNvLinkState, d, l, &active) != NVML_SUCCESS)
      continue;
    g->link_active[l] = active != 0;
    if(!active)
      continue;
    g->nvlinks++;
    memset(&pci, 0, sizeof(pci));
    if(CALL(nvmlDeviceGetNvLinkRemotePciInfo_v2, d, l, &pci) ==
       NVML_SUCCESS)
      nvml_bus_id_norm(pci.busId, g->link_remote[l],
                       sizeof(g->link_remote[l]));
    if(CALL(nvmlDeviceGetNvLinkRemoteDeviceType, d, l, &type) ==
       NVML_SUCCESS)
      g->link_remote_type[l] = type;
  }
}

int nvml_inventory(struct nvml_inventory *inv, char *err, size_t len)
{
  nvmlDevice_t dev[NVML_GPU_MAX];
  unsigned n = 0;
  nvmlReturn_t r;
  int status = nvml_load(err, len);

  memset(inv, 0, sizeof(*inv));
  if(status != NVML_OK)
    return status;
  if(CALL(nvmlSystemGetDriverVersion, inv->driver, sizeof(inv->driver)))
    snprintf(inv->driver, sizeof(inv->driver), "?");
  if(CALL(nvmlSystemGetNVMLVersion, inv->nvml_version,
          sizeof(inv->nvml_version)))
    snprintf(inv->nvml_version, sizeof(inv->nvml_version), "?");
  if(CALL(nvmlSystemGetCudaDriverVersion_v2, &inv->cuda_driver))
    inv->cuda_driver = -1;
  r = fn.nvmlDeviceGetCount_v2(&n);
  if(r != NVML_SUCCESS) {
    snprintf(err, len, "nvmlDeviceGetCount: %s (%d)", nvml_text(r), r);
    return NVML_FAILED;
  }
  if(n > NVML_GPU_MAX)
    n = NVML_GPU_MAX;
  for(unsigned i = 0; i < n; i++) {
    r = fn.nvmlDeviceGetHandleByIndex_v2(i, &dev[i]);
    if(r != NVML_SUCCESS) {
      snprintf(err, len, "nvmlDeviceGetHandleByIndex(%u): %s (%d)", i,
               nvml_text(r), r);
      return NVML_FAILED;
    }
    read_gpu(dev[i], i, &inv->gpu[i]);
  }
  inv->count = (int)n;
  for(unsigned i = 0; i < n; i++)
    for(unsigned j = 0; j < n; j++) {
      int lvl = -1;
      if(i == j)
        lvl = 0;
      else if(CALL(nvmlDeviceGetTopologyCommonAncestor, dev[i], dev[j],
                   &lvl) != NVML_SUCCESS)
        lvl = -1;
      inv->level[i][j] = lvl;
    }
  return NVML_OK;
}

int nvml_sample(struct nvml_sample *out, int max, char *err, size_t len)
{
  unsigned n = 0;
  nvmlReturn_t r;
  int status = nvml_load(err, len);

  if(status != NVML_OK)
    return -status;
  r = fn.nvmlDeviceGetCount_v2(&n);
  if(r != NVML_SUCCESS) {
    snprintf(err, len, "nvmlDeviceGetCount: %s (%d)", nvml_text(r), r);
    return -NVML_FAILED;
  }
  if((int)n > max)
    n = (unsigned)max;
  for(unsigned i = 0; i < n; i++) {
    struct nvml_sample *s = &out[i];
    struct nvmlUtilization_st u;
    struct nvmlMemory_st m;
    nvmlDevice_t d;
    unsigned v;
    r = fn.nvmlDeviceGetHandleByIndex_v2(i, &d);
    if(r != NVML_SUCCESS) {
      snprintf(err, len, "nvmlDeviceGetHandleByIndex(%u): %s (%d)", i,
               nvml_text(r), r);
      return -NVML_FAILED;
    }
    s->index = i;
    r = CALL(nvmlDeviceGetUtilizationRates, d, &u);
    s->gpu_util_pct = r == NVML_SUCCESS ? (double)u.gpu : -1;
    s->mem_util_pct = r == NVML_SUCCESS ? (double)u.memory : -1;
    r = CALL(nvmlDeviceGetPowerUsage, d, &v);
    s->power_w = r == NVML_SUCCESS ? v / 1000.0 : -1;
    r = CALL(nvmlDeviceGetClockInfo, d, NVML_CLOCK_SM, &v);
    s->sm_clock_mhz = r == NVML_SUCCESS ? (double)v : -1;
    r = CALL(nvmlDeviceGetPcieThroughput, d, NVML_PCIE_UTIL_TX_BYTES, &v);
    s->pcie_tx_mbps = r == NVML_SUCCESS ? v / 1000.0 : -1;
    r = CALL(nvmlDeviceGetPcieThroughput, d, NVML_PCIE_UTIL_RX_BYTES, &v);
    s->pcie_rx_mbps = r == NVML_SUCCESS ? v / 1000.0 : -1;
    r = CALL(nvmlDeviceGetMemoryInfo, d, &m);
    s->mem_used_bytes = r == NVML_SUCCESS ? (double)m.used : -1;
  }
  return (int)n;
}

int nvml_watch_xids(int wait_ms, int *xids, long long *first,
                    char *err, size_t len)
{
  nvmlEventSet_t set = NULL;
  unsigned n = 0;
  int registered = 0;
  nvmlReturn_t r;
  int status = nvml_load(err, len);

  *xids = 0;
  *first = -1;
  if(status != NVML_OK)
    return status;
  if(!fn.nvmlEventSetCreate || !fn.nvmlEventSetWait_v2) {
    snprintf(err, len, "NVML has no event API");
    return NVML_ABSENT;
  }
  r = fn.nvmlEventSetCreate(&set);
  if(r != NVML_SUCCESS) {
    snprintf(err, len, "nvmlEventSetCreate: %s (%d)", nvml_text(r), r);
    return NVML_FAILED;
  }
  if(fn.nvmlDeviceGetCount_v2(&n) != NVML_SUCCESS)
    n = 0;
  for(unsigned i = 0; i < n; i++) {
    nvmlDevice_t d;
    if(fn.nvmlDeviceGetHandleByIndex_v2(i, &d) == NVML_SUCCESS &&
       CALL(nvmlDeviceRegisterEvents, d, NVML_EVENT_TYPE_XID, set) ==
       NVML_SUCCESS)
      registered++;
  }
  if(!registered) {
    CALL(nvmlEventSetFree, set);
    snprintf(err, len, "Xid events not supported on these GPUs");
    return NVML_ABSENT;
  }
  for(;;) {
    struct nvmlEventData_st ev;
    memset(&ev, 0, sizeof(ev));
    r = fn.nvmlEventSetWait_v2(set, &ev, (unsigned)wait_ms);
    if(r != NVML_SUCCESS)
      break;  /* NVML_ERROR_TIMEOUT: nothing more */
    if(ev.eventType & NVML_EVENT_TYPE_XID) {
      if(*xids == 0)
        *first = (long long)ev.eventData;
      (*xids)++;
    }
    wait_ms = 0;
  }
  CALL(nvmlEventSetFree, set);
  return NVML_OK;
}

int nvml_kmsg_xids(char *line, size_t line_len, char *err, size_t len)
{
  char buf[8192];
  int count = 0;
  int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

  if(line && line_len)
    line[0] = '\0';
  if(fd < 0) {
    snprintf(err, len, "/dev/kmsg: %s", strerror(errno));
    return -1;
  }
  for(;;) {
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    if(n < 0) {
      if(errno == EPIPE)  /* overwritten records: keep reading */
        continue;
      if(errno == EAGAIN)
        break;
      snprintf(err, len, "/dev/kmsg: %s", strerror(errno));
      close(fd);
      return -1;
    }
    if(n == 0)
      break;
    buf[n] = '\0';
    if(strstr(buf, "NVRM: Xid")) {
      const char *msg = strchr(buf, ';');
      count++;
      if(line && line_len) {
        snprintf(line, line_len, "%s", msg ? msg + 1 : buf);
        line[strcspn(line, "\n")] = '\0';
      }
    }
  }
  close(fd);
  return count;
}
