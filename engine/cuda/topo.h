/*
 * topo.h - GPU topology logic without hardware: the label of each GPU
 * pair as `nvidia-smi topo -m` prints it (X, NV#, PIX, PXB, PHB, NODE,
 * SYS), a parser for that command's output (fixtures, site baselines),
 * and the theoretical PCIe rate of a link.  No lua.h, no NVML calls:
 * tested against recorded fixtures in cuda_test.c and tests/gpu/.
 */
#ifndef STRATA_TOPO_H
#define STRATA_TOPO_H

#include <stddef.h>

#include "nvml.h"

/* NVML's nvmlGpuTopologyLevel_t values. */
enum topo_level {
  TOPO_INTERNAL = 0, TOPO_SINGLE = 10, TOPO_MULTIPLE = 20,
  TOPO_HOSTBRIDGE = 30, TOPO_NODE = 40, TOPO_SYSTEM = 50
};

/* NVML level -> PCIe label ("PIX", ...); "?" for an unknown level. */
const char *topo_level_label(int level);

/*
 * Number of active NVLinks from GPU i to GPU j: direct links whose remote
 * bus id is j's, or, when both sit on NVSwitches, i's links to switches.
 */
int topo_nvlinks(const struct nvml_inventory *inv, int i, int j);

/* The nvidia-smi label of pair (i, j) into out: "X", "NV18", "PXB" ... */
void topo_label(const struct nvml_inventory *inv, int i, int j,
                char *out, size_t len);

/* Parsed `nvidia-smi topo -m`: the GPU x GPU block and affinities. */
#define TOPO_LABEL_LEN 16
struct topo_table {
  int n;                                   /* GPUs */
  char label[NVML_GPU_MAX][NVML_GPU_MAX][TOPO_LABEL_LEN];
  char cpu_affinity[NVML_GPU_MAX][64];
  char numa_affinity[NVML_GPU_MAX][32];
  int nics;                                /* NIC rows seen (not kept) */
};

/*
 * Parse the text of `nvidia-smi topo -m`.  Returns 0, or -1 with err
 * naming the line ("line 3: ...").
 */
int topo_parse_smi(const char *text, struct topo_table *t, char *err,
                   size_t len);

/*
 * Theoretical data rate of a PCIe link in GB/s (1e9 bytes/s) for one
 * direction: generation 1-6, width lanes; line coding 8b/10b for gen 1-2,
 * 128b/130b for 3-5, FLIT (242/256) for 6.  0 for unknown input.
 */
double topo_pcie_gbps(int gen, int width);

#endif
