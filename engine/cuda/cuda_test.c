/*
 * cuda_test.c - hardware-free checks of the cuda family's core: topology
 * labels from NVML facts, the `nvidia-smi topo -m` parser, PCIe rates,
 * the check kernel's host reference, and the no-GPU path (a missing
 * driver is CUDA_ABSENT with a reason, never a crash or CUDA_FAILED).
 * On a GPU host the same binary checks the fork guard.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cuda.h"
#include "nvml.h"
#include "topo.h"

static void check_label(const struct nvml_inventory *inv, int i, int j,
                        const char *want)
{
  char got[TOPO_LABEL_LEN];
  topo_label(inv, i, j, got, sizeof(got));
  CHECKF(!strcmp(got, want), "label (%d,%d): got %s, want %s", i, j, got,
         want);
}

static void add_link(struct nvml_gpu *g, int l, const char *remote, int type)
{
  g->link_active[l] = 1;
  g->nvlinks++;
  snprintf(g->link_remote[l], sizeof(g->link_remote[l]), "%s", remote);
  g->link_remote_type[l] = type;
}

static void test_labels(void)
{
  struct nvml_inventory *inv = calloc(1, sizeof(*inv));
  static const char *bus[4] = { "0000:18:00.0", "0000:2a:00.0",
                                "0000:9a:00.0", "0000:ab:00.0" };
  /* 4 GPUs: 0-1 two direct NVLinks; 0,1 under one switch (PXB), 2,3 on
   * the other socket; 2-3 share a host bridge. */
  inv->count = 4;
  for(int i = 0; i < 4; i++) {
    snprintf(inv->gpu[i].bus_id, sizeof(inv->gpu[i].bus_id), "%s", bus[i]);
    for(int l = 0; l < NVML_LINK_MAX; l++)
      inv->gpu[i].link_remote_type[l] = -1;
  }
  add_link(&inv->gpu[0], 0, bus[1], 0);
  add_link(&inv->gpu[0], 1, bus[1], 0);
  add_link(&inv->gpu[1], 0, bus[0], 0);
  add_link(&inv->gpu[1], 1, bus[0], 0);
  for(int i = 0; i < 4; i++)
    for(int j = 0; j < 4; j++)
      inv->level[i][j] = i == j ? TOPO_INTERNAL
        : (i / 2 != j / 2) ? TOPO_SYSTEM
        : i < 2 ? TOPO_MULTIPLE : TOPO_HOSTBRIDGE;
  check_label(inv, 0, 0, "X");
  check_label(inv, 0, 1, "NV2");
  check_label(inv, 1, 0, "NV2");
  check_label(inv, 0, 2, "SYS");
  check_label(inv, 2, 3, "PHB");
  check_label(inv, 3, 1, "SYS");
  CHECK(topo_nvlinks(inv, 0, 1) == 2);
  CHECK(topo_nvlinks(inv, 2, 3) == 0);

  /* NVSwitch: every GPU's 18 links go to switches -> NV18 everywhere. */
  memset(inv, 0, sizeof(*inv));
  inv->count = 2;
  for(int i = 0; i < 2; i++) {
    snprintf(inv->gpu[i].bus_id, sizeof(inv->gpu[i].bus_id), "%s", bus[i]);
    for(int l = 0; l < NVML_LINK_MAX; l++)
      add_link(&inv->gpu[i], l, "0000:00:00.0", 2);
  }
  inv->level[0][1] = inv->level[1][0] = TOPO_NODE;
  check_label(inv, 0, 1, "NV18");
  /* Unknown level and a level label. */
  inv->gpu[1].nvlinks = 0;
  memset(inv->gpu[1].link_active, 0, sizeof(inv->gpu[1].link_active));
  check_label(inv, 0, 1, "NODE");
  inv->level[0][1] = -1;
  check_label(inv, 0, 1, "?");
  CHECK(!strcmp(topo_level_label(TOPO_SINGLE), "PIX"));
  free(inv);
}

static const char smi_text[] =
  "\t\033[4mGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\tNUMA Affinity\t"
  "GPU NUMA ID\033[0m\n"
  "GPU0\t X \tNV18\tSYS\tPIX\t0-55,112-167\t0\t\tN/A\n"
  "GPU1\tNV18\t X \tSYS\tNODE\t0-55,112-167\t0\t\tN/A\n"
  "GPU2\tSYS\tSYS\t X \tSYS\t56-111,168-223\t1\t\tN/A\n"
  "NIC0\tPIX\tNODE\tSYS\t X \t\t\t\t\n"
  "\n"
  "Legend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe\n"
  "\n"
  "NIC Legend:\n\n  NIC0: mlx5_0\n";

static void test_parse(void)
{
  struct topo_table *t = malloc(sizeof(*t));
  char err[256];
  CHECK(topo_parse_smi(smi_text, t, err, sizeof(err)) == 0);
  CHECK(t->n == 3);
  CHECK(t->nics == 1);
  CHECK(!strcmp(t->label[0][0], "X"));
  CHECK(!strcmp(t->label[0][1], "NV18"));
  CHECK(!strcmp(t->label[2][1], "SYS"));
  CHECK(!strcmp(t->cpu_affinity[2], "56-111,168-223"));
  CHECK(!strcmp(t->numa_affinity[1], "0"));
  /* A truncated row names its line. */
  CHECK(topo_parse_smi("\tGPU0\tGPU1\nGPU0\t X \n", t, err,
                       sizeof(err)) < 0);
  CHECK(strstr(err, "line 2") != NULL);
  CHECK(topo_parse_smi("no topology here\n", t, err, sizeof(err)) < 0);
  CHECK(topo_parse_smi("\tGPU0\tGPU1\nGPU0\t X \tPIX\n", t, err,
                       sizeof(err)) < 0);  /* a row missing */
  free(t);
}

static void test_pcie(void)
{
  CHECK(fabs(topo_pcie_gbps(5, 16) - 63.015) < 0.01);
  CHECK(fabs(topo_pcie_gbps(4, 16) - 31.508) < 0.01);
  CHECK(fabs(topo_pcie_gbps(3, 8) - 7.877) < 0.01);
  CHECK(fabs(topo_pcie_gbps(1, 1) - 0.25) < 1e-9);
  CHECK(fabs(topo_pcie_gbps(6, 16) - 121.0) < 0.01);
  CHECK(topo_pcie_gbps(0, 16) == 0);
  CHECK(topo_pcie_gbps(7, 16) == 0);
  CHECK(topo_pcie_gbps(5, 0) == 0);
}

static void test_misc(void)
{
  char out[32];
  /* splitmix64's first output from state 0 (Vigna's reference). */
  CHECK(cuda_mix(0) == 0xe220a8397b1dcdafull);
  nvml_bus_id_norm("00000000:1B:00.0", out, sizeof(out));
  CHECK(!strcmp(out, "0000:1b:00.0"));
  nvml_bus_id_norm("0000:1b:00.0", out, sizeof(out));
  CHECK(!strcmp(out, "0000:1b:00.0"));
}

/* Whatever the host: OK or ABSENT with a reason, never a crash. */
/*
 * The dma-buf export range (issue 9 section 5): a cudaMalloc(n) range is
 * n bytes long, and the old export clamped the page-rounded end to it,
 * asking the driver for a range that does not end on a page (refused
 * with CUDA_ERROR_INVALID_VALUE for 2, 4095, 4097, 65535 bytes on an
 * H200).  Now the allocation is whole 64 KiB units and a range that
 * would leave the allocation is refused here, with the reason.
 */
static void test_dmabuf_range(void)
{
  const uint64_t page = 4096, base = 0x7f0000200000ull;
  uint64_t start = 0, length = 0;
  static const uint64_t sizes[] = { 1, 2, 128, 4095, 4096, 4097, 65535,
                                    65536, 65537, (64u << 20) + 1 };
  for(size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    uint64_t n = sizes[i], asize = cuda_alloc_size(n);
    CHECK(asize >= n && asize % CUDA_ALLOC_ALIGN == 0);
    CHECK(asize - n < CUDA_ALLOC_ALIGN);
    CHECK(cuda_dmabuf_range(base, n, base, asize, page, &start,
                            &length) == 0);
    CHECK(start == base && length % page == 0 && length >= n);
    CHECK(length - n < page);
    /* the old allocation (exactly n bytes): refused unless whole pages */
    CHECK((cuda_dmabuf_range(base, n, base, n, page, &start, &length) ==
           0) == (n % page == 0));
  }
  CHECK(cuda_alloc_size(0) == 0);
  /* an inner pointer: the range starts on its page, offset kept */
  CHECK(cuda_dmabuf_range(base + 5000, 10, base, 65536, page, &start,
                          &length) == 0);
  CHECK(start == base + 4096 && length == 4096);
  /* a range past the allocation's end is refused */
  CHECK(cuda_dmabuf_range(base + 65530, 10, base, 65536, page, &start,
                          &length) == -1);
}

static void test_host(void)
{
  char err[512] = "";
  int n = -1, s;
  struct nvml_inventory *inv = malloc(sizeof(*inv));

  s = nvml_inventory(inv, err, sizeof(err));
  printf("nvml: status %d, %d GPUs%s%s\n", s, inv->count, s ? ": " : "",
         s ? err : "");
  CHECK(s == NVML_OK || s == NVML_ABSENT);
  CHECK(s == NVML_OK || err[0]);
  free(inv);

  err[0] = '\0';
  s = cuda_probe_forked(&n, err, sizeof(err));
  printf("cuda probe: status %d, %d devices%s%s\n", s, n, s ? ": " : "",
         s ? err : "");
  CHECK(s == CUDA_OK || s == CUDA_ABSENT);
  CHECK(s == CUDA_OK || err[0]);
#ifndef STRATA_HAVE_CUDA
  CHECK(s == CUDA_ABSENT && strstr(err, "built without CUDA"));
#endif
  if(s == CUDA_OK) {
    /* Initialise here, then a forked child must refuse to use CUDA. */
    pid_t pid;
    int st = 0;
    CHECK(cuda_count(&n, err, sizeof(err)) == CUDA_OK);
    /* the probe no longer forks once CUDA is up in this process */
    CHECK(cuda_probe_forked(&n, err, sizeof(err)) == CUDA_OK && n > 0);
    pid = fork();
    if(pid == 0)
      _exit(cuda_count(&n, err, sizeof(err)) == CUDA_FAILED ? 0 : 1);
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  else {
    void *p = NULL;
    struct cuda_copy_opts o = { .dir = CUDA_COPY_H2D, .size = 4096,
                                .repeats = 1 };
    struct cuda_copy_result r;
    CHECK(cuda_alloc(0, 4096, CUDA_MEM_DEVICE, &p, err, sizeof(err)) ==
          CUDA_ABSENT && p == NULL);
    CHECK(cuda_copy_bw(&o, &r, err, sizeof(err)) == CUDA_ABSENT);
  }
}

int main(void)
{
  test_labels();
  test_parse();
  test_pcie();
  test_misc();
  test_dmabuf_range();
  test_host();
  return check_result("cuda_test");
}
