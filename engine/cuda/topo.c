/*
 * topo.c - see topo.h.  The labels follow nvidia-smi's legend:
 *   X    = self
 *   SYS  = path crosses the SMP interconnect between NUMA nodes
 *   NODE = path crosses host bridges within one NUMA node
 *   PHB  = path crosses a PCIe host bridge (typically the CPU)
 *   PXB  = path crosses several PCIe bridges (no host bridge)
 *   PIX  = path crosses at most one PCIe bridge
 *   NV#  = path over a bonded set of # NVLinks
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

const char *topo_level_label(int level)
{
  switch(level) {
  case TOPO_INTERNAL:
    return "X";
  case TOPO_SINGLE:
    return "PIX";
  case TOPO_MULTIPLE:
    return "PXB";
  case TOPO_HOSTBRIDGE:
    return "PHB";
  case TOPO_NODE:
    return "NODE";
  case TOPO_SYSTEM:
    return "SYS";
  default:
    return "?";
  }
}

int topo_nvlinks(const struct nvml_inventory *inv, int i, int j)
{
  const struct nvml_gpu *a = &inv->gpu[i];
  const struct nvml_gpu *b = &inv->gpu[j];
  int direct = 0, a_sw = 0, b_sw = 0;

  for(int l = 0; l < NVML_LINK_MAX; l++) {
    if(a->link_active[l]) {
      if(a->link_remote_type[l] == 2)
        a_sw++;
      else if(b->bus_id[0] && !strcmp(a->link_remote[l], b->bus_id))
        direct++;
    }
    if(b->link_active[l] && b->link_remote_type[l] == 2)
      b_sw++;
  }
  if(direct)
    return direct;
  return (a_sw && b_sw) ? a_sw : 0;
}

void topo_label(const struct nvml_inventory *inv, int i, int j,
                char *out, size_t len)
{
  int nv;
  if(i == j) {
    snprintf(out, len, "X");
    return;
  }
  nv = topo_nvlinks(inv, i, j);
  if(nv > 0)
    snprintf(out, len, "NV%d", nv);
  else
    snprintf(out, len, "%s", topo_level_label(inv->level[i][j]));
}

double topo_pcie_gbps(int gen, int width)
{
  static const double gts[] = { 0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };
  double coding;
  if(gen < 1 || gen > 6 || width < 1)
    return 0;
  coding = gen <= 2 ? 0.8 : gen <= 5 ? 128.0 / 130.0 : 242.0 / 256.0;
  return gts[gen] * width * coding / 8.0;
}

/* Split line at tabs into cells (trimmed of spaces); returns the count. */
static int split_tabs(char *line, char **cell, int max)
{
  int n = 0;
  char *p = line;
  while(n < max) {
    char *tab = strchr(p, '\t');
    char *s = p, *e;
    if(tab)
      *tab = '\0';
    while(*s == ' ')
      s++;
    e = s + strlen(s);
    while(e > s && (e[-1] == ' ' || e[-1] == '\r'))
      *--e = '\0';
    cell[n++] = s;
    if(!tab)
      break;
    p = tab + 1;
  }
  return n;
}

/* Drop ANSI escapes in place: nvidia-smi underlines its header even
 * when writing to a file ("\033[4mGPU0 ... \033[0m"). */
static void strip_ansi(char *s)
{
  char *w = s;
  for(char *r = s; *r; r++) {
    if(*r == '\033' && r[1] == '[') {
      r += 2;
      while(*r && !(*r >= '@' && *r <= '~'))
        r++;
      if(!*r)
        break;
      continue;
    }
    *w++ = *r;
  }
  *w = '\0';
}

int topo_parse_smi(const char *text, struct topo_table *t, char *err,
                   size_t len)
{
  char *copy = strdup(text);
  char *save = NULL, *line;
  char *head[NVML_GPU_MAX + 8];
  int nhead = 0, lineno = 0, result = -1;
  int cpu_col = -1, numa_col = -1, gpus = 0, rows = 0;

  memset(t, 0, sizeof(*t));
  if(!copy) {
    snprintf(err, len, "out of memory");
    return -1;
  }
  strip_ansi(copy);
  for(line = strtok_r(copy, "\n", &save); line;
      line = strtok_r(NULL, "\n", &save)) {
    char *cell[NVML_GPU_MAX + 8];
    int n;
    lineno++;
    if(!strncmp(line, "Legend", 6))
      break;
    if(nhead == 0) {
      /* The header: a leading tab, then GPU0 GPU1 ... NIC0 ... */
      if(!strstr(line, "GPU0"))
        continue;
      nhead = split_tabs(line, head, NVML_GPU_MAX + 8);
      for(int c = 0; c < nhead; c++) {
        if(!strncmp(head[c], "GPU", 3) && head[c][3] >= '0' &&
           head[c][3] <= '9')
          gpus++;
        else if(!strcmp(head[c], "CPU Affinity"))
          cpu_col = c;
        else if(!strcmp(head[c], "NUMA Affinity"))
          numa_col = c;
      }
      if(gpus == 0 || gpus > NVML_GPU_MAX) {
        snprintf(err, len, "line %d: no GPU columns in the header",
                 lineno);
        goto out;
      }
      continue;
    }
    n = split_tabs(line, cell, NVML_GPU_MAX + 8);
    if(n == 1 && cell[0][0] == '\0')
      continue;
    if(!strncmp(cell[0], "NIC", 3) || !strncmp(cell[0], "mlx", 3)) {
      t->nics++;
      continue;
    }
    if(strncmp(cell[0], "GPU", 3))
      continue;
    if(rows >= gpus) {
      snprintf(err, len, "line %d: more GPU rows than columns", lineno);
      goto out;
    }
    if(n < gpus + 1) {
      snprintf(err, len, "line %d: %d cells, expected at least %d",
               lineno, n, gpus + 1);
      goto out;
    }
    for(int c = 0; c < gpus; c++)
      snprintf(t->label[rows][c], TOPO_LABEL_LEN, "%s", cell[c + 1]);
    if(cpu_col > 0 && cpu_col < n)
      snprintf(t->cpu_affinity[rows], sizeof(t->cpu_affinity[0]), "%s",
               cell[cpu_col]);
    if(numa_col > 0 && numa_col < n)
      snprintf(t->numa_affinity[rows], sizeof(t->numa_affinity[0]), "%s",
               cell[numa_col]);
    rows++;
  }
  if(nhead == 0) {
    snprintf(err, len, "no header line with GPU0");
    goto out;
  }
  if(rows != gpus) {
    snprintf(err, len, "%d GPU rows for %d GPU columns", rows, gpus);
    goto out;
  }
  t->n = gpus;
  result = 0;
out:
  free(copy);
  return result;
}
