/*
 * procfs.c - the /proc and sysfs counter parsers (procfs.h).  Every
 * parser reads text (recorded fixtures in tests, live files in the
 * sampler) and appends named values without printf or scanf: a snapshot
 * of a few hundred values is parsed in tens of microseconds, and names
 * the set already holds are not allocated again (set.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "strata.h"

const char *const ctr_cpu_fields[CTR_CPU_FIELDS] = {
  "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"
};

int ctr_read_file(const char *path, char **buf, size_t *cap, size_t *len)
{
  return strata_read_file(path, 0, buf, cap, len);
}

int ctr_next_line(const char **p, char *line, size_t len)
{
  const char *s = *p, *e;
  size_t n;
  int fit = 1;
  if(!*s)
    return 0;
  e = strchr(s, '\n');
  n = e ? (size_t)(e - s) : strlen(s);
  *p = e ? e + 1 : s + n;
  if(n >= len) {
    n = len - 1;
    fit = -1;
  }
  memcpy(line, s, n);
  line[n] = '\0';
  return fit;
}

/* Keep [A-Za-z0-9_-] of a device name; others become '_'. */
static void clean_name(char *s)
{
  for(; *s; s++)
    if(!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
      *s = '_';
}

const char *ctr_word(const char *p, char *key, size_t len)
{
  size_t n = 0;
  while(*p == ' ' || *p == '\t')
    p++;
  while(*p && *p != ' ' && *p != '\t') {
    if(n + 1 < len)
      key[n++] = *p;
    p++;
  }
  key[n] = '\0';
  return p;
}

int ctr_numbers(const char *p, unsigned long long *v, int max)
{
  int got = 0;
  while(got < max) {
    char *e;
    while(*p == ' ' || *p == '\t')
      p++;
    if(!isdigit((unsigned char)*p))
      break;
    v[got++] = strtoull(p, &e, 10);
    p = e;
  }
  return got;
}

int ctr_parse_stat(const char *text, long clk_tck, unsigned want,
                   int per_cpu, struct ctr_set *s)
{
  char line[65536];  /* a row per IRQ is ~11 bytes a CPU */
  const char *p = text;
  int saw_cpu = 0;

  if(clk_tck <= 0)
    clk_tck = 100;
  while(ctr_next_line(&p, line, sizeof(line))) {
    char key[64];
    const char *rest = ctr_word(line, key, sizeof(key));
    if(!key[0])
      continue;
    if(!strncmp(key, "cpu", 3)) {
      char grp[80];
      unsigned long long v[CTR_CPU_FIELDS] = { 0 };
      if(!(want & CTR_STAT_CPU))
        continue;
      if(ctr_numbers(rest, v, CTR_CPU_FIELDS) < 4) {
        errno = EINVAL;
        return -1;
      }
      if(key[3] == '\0')
        strcpy(grp, "cpu.total");
      else if(per_cpu)
        (void)!snprintf(grp, sizeof(grp), "cpu.%s", key);
      else
        continue;
      for(int i = 0; i < CTR_CPU_FIELDS; i++)
        if(ctr_set_add2(s, grp, ctr_cpu_fields[i],
                        (double)v[i] / (double)clk_tck, CTR_COUNTER))
          return -1;
      saw_cpu = saw_cpu || key[3] == '\0';
    }
    else if(want & CTR_STAT_CTXT) {
      unsigned long long v;
      const char *name = NULL;
      if(!strcmp(key, "ctxt"))
        name = "ctxt";
      else if(!strcmp(key, "processes"))
        name = "processes";
      else if(!strcmp(key, "intr"))
        name = "intr.total";
      if(!name)
        continue;
      if(ctr_numbers(rest, &v, 1) != 1) {
        errno = EINVAL;
        return -1;
      }
      if(ctr_set_add(s, name, (double)v, CTR_COUNTER))
        return -1;
    }
  }
  if((want & CTR_STAT_CPU) && !saw_cpu) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

/* Sum the decimal columns after the "NAME:" head; *end = rest of line. */
static double sum_cols(const char *p, int ncpu, const char **end)
{
  double sum = 0;
  for(int i = 0; i < ncpu; i++) {
    char *e;
    unsigned long long v;
    while(*p == ' ' || *p == '\t')
      p++;
    if(!isdigit((unsigned char)*p))
      break;
    v = strtoull(p, &e, 10);
    sum += (double)v;
    p = e;
  }
  if(end)
    *end = p;
  return sum;
}

static int count_cpus(const char *header)
{
  int n = 0;
  const char *p = header;
  while((p = strstr(p, "CPU"))) {
    n++;
    p += 3;
  }
  return n;
}

/*
 * One line of a per-CPU table (/proc/softirqs, /proc/interrupts): the
 * first line is the CPU header (sets *ncpu), then "<name>: <counts...>".
 * Returns 1 with *name (cleaned) and *cols set, 0 for a line to skip, -1
 * (errno EINVAL) for a header without CPUs.
 */
static int cpu_row(char *line, int *ncpu, char **name, char **cols)
{
  char *colon;
  if(*ncpu < 0) {
    *ncpu = count_cpus(line);
    if(*ncpu == 0) {
      errno = EINVAL;
      return -1;
    }
    return 0;
  }
  colon = strchr(line, ':');
  if(!colon)
    return 0;
  *colon = '\0';
  *name = line;
  while(**name == ' ')
    (*name)++;
  clean_name(*name);
  *cols = colon + 1;
  return 1;
}

int ctr_parse_softirqs(const char *text, struct ctr_set *s)
{
  char line[65536];  /* a row per IRQ is ~11 bytes a CPU */
  const char *p = text;
  int ncpu = -1;

  while(ctr_next_line(&p, line, sizeof(line))) {
    char *name, *cols;
    int r = cpu_row(line, &ncpu, &name, &cols);
    if(r < 0)
      return -1;
    if(r == 0)
      continue;
    if(ctr_set_add2(s, "softirq", name, sum_cols(cols, ncpu, NULL),
                     CTR_COUNTER))
      return -1;
  }
  if(ncpu < 0) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

int ctr_parse_interrupts(const char *text, struct ctr_set *s)
{
  char line[65536];  /* a row per IRQ is ~11 bytes a CPU */
  const char *p = text;
  int ncpu = -1;

  while(ctr_next_line(&p, line, sizeof(line))) {
    char *irq, *cols, *rest, *dev;
    const char *after;
    double v;
    size_t n;
    int r = cpu_row(line, &ncpu, &irq, &cols);
    if(r < 0)
      return -1;
    if(r == 0)
      continue;
    v = sum_cols(cols, ncpu, &after);
    rest = (char *)after;
    n = strlen(rest);
    while(n && isspace((unsigned char)rest[n - 1]))
      rest[--n] = '\0';
    if(!isdigit((unsigned char)*irq)) {
      /* NMI, LOC, ERR, MIS ...: the description is prose, keep the tag */
      if(ctr_set_add2(s, "intr", irq, v, CTR_COUNTER))
        return -1;
      continue;
    }
    dev = strrchr(rest, ' ');
    dev = dev ? dev + 1 : rest;
    if(!*dev)
      dev = "none";
    clean_name(dev);
    if(ctr_set_add3(s, "intr", irq, dev, v, CTR_COUNTER))
      return -1;
  }
  if(ncpu < 0) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

int ctr_parse_netdev(const char *text, struct ctr_set *s)
{
  static const char *const cols[16] = {
    "rx_bytes", "rx_packets", "rx_errs", "rx_drop", "rx_fifo", "rx_frame",
    "rx_compressed", "rx_multicast", "tx_bytes", "tx_packets", "tx_errs",
    "tx_drop", "tx_fifo", "tx_colls", "tx_carrier", "tx_compressed"
  };
  /* the columns worth a series; the rest are noise on modern NICs */
  static const int keep[] = { 0, 1, 2, 3, 8, 9, 10, 11 };
  char line[1024];
  const char *p = text;
  int lineno = 0;

  while(ctr_next_line(&p, line, sizeof(line))) {
    char *colon, *ifn = line, *q;
    unsigned long long v[16];
    char grp[96];
    if(++lineno <= 2)
      continue;
    colon = strchr(line, ':');
    if(!colon) {
      errno = EINVAL;
      return -1;
    }
    *colon = '\0';
    while(*ifn == ' ')
      ifn++;
    q = colon + 1;
    for(int i = 0; i < 16; i++) {
      char *e;
      v[i] = strtoull(q, &e, 10);
      if(e == q) {
        errno = EINVAL;
        return -1;
      }
      q = e;
    }
    clean_name(ifn);
    (void)!snprintf(grp, sizeof(grp), "net.%.80s", ifn);
    for(size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
      if(ctr_set_add2(s, grp, cols[keep[i]], (double)v[keep[i]],
                       CTR_COUNTER))
        return -1;
  }
  return 0;
}

int ctr_parse_snmp(const char *text, struct ctr_set *s)
{
  char head[2048], vals[2048];
  const char *p = text;

  while(ctr_next_line(&p, head, sizeof(head))) {
    char *hs, *vs, *h, *v;
    if(strncmp(head, "Tcp:", 4))
      continue;
    if(!ctr_next_line(&p, vals, sizeof(vals)) || strncmp(vals, "Tcp:", 4)) {
      errno = EINVAL;
      return -1;
    }
    h = strtok_r(head + 4, " ", &hs);
    v = strtok_r(vals + 4, " ", &vs);
    while(h && v) {
      /* RtoAlgorithm, RtoMin, RtoMax, MaxConn, CurrEstab are levels */
      int gauge = !strncmp(h, "Rto", 3) || !strcmp(h, "MaxConn") ||
                  !strcmp(h, "CurrEstab");
      if(ctr_set_add2(s, "tcp", h, strtod(v, NULL),
                       gauge ? CTR_GAUGE : CTR_COUNTER))
        return -1;
      h = strtok_r(NULL, " ", &hs);
      v = strtok_r(NULL, " ", &vs);
    }
    return 0;
  }
  return 0;
}

static int list_dir(const char *path, struct dirent ***out)
{
  return scandir(path, out, NULL, alphasort);
}

static void free_list(struct dirent **l, int n)
{
  for(int i = 0; i < n; i++)
    free(l[i]);
  free(l);
}

void ctr_rdma_files_free(struct ctr_rdma_files *f)
{
  for(size_t i = 0; i < f->n; i++) {
    close(f->fd[i]);
    free(f->name[i]);
  }
  free(f->fd);
  free(f->name);
  memset(f, 0, sizeof(*f));
}

static int rdma_keep(struct ctr_rdma_files *f, int fd, const char *dev,
                     const char *port, const char *ctr)
{
  char name[512];
  int *nfd;
  char **nn;
  if(f->n == f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 64;
    nfd = realloc(f->fd, cap * sizeof(*nfd));
    if(!nfd)
      return -1;
    f->fd = nfd;
    nn = realloc(f->name, cap * sizeof(*nn));
    if(!nn)
      return -1;
    f->name = nn;
    f->cap = cap;
  }
  (void)!snprintf(name, sizeof(name), "rdma.%.150s.%.50s.%.250s", dev, port,
                  ctr);
  f->name[f->n] = strdup(name);
  if(!f->name[f->n])
    return -1;
  f->fd[f->n++] = fd;
  return 0;
}

int ctr_rdma_files_open(const char *root, struct ctr_rdma_files *f)
{
  static const char *const sub[2] = { "counters", "hw_counters" };
  char base[512], path[1024];
  int bn;
  struct dirent **devs = NULL;
  int nd, rc = 0;

  memset(f, 0, sizeof(*f));
  bn = snprintf(base, sizeof(base), "%s/sys/class/infiniband", root);
  if(bn < 0 || (size_t)bn >= sizeof(base))
    return 0;
  nd = list_dir(base, &devs);
  if(nd < 0)
    return 0;  /* no RDMA stack: nothing to count */
  for(int i = 0; i < nd && !rc; i++) {
    struct dirent **ports = NULL;
    int np;
    if(devs[i]->d_name[0] == '.')
      continue;
    (void)!snprintf(path, sizeof(path), "%s/%s/ports", base,
                    devs[i]->d_name);
    np = list_dir(path, &ports);
    for(int j = 0; j < np && !rc; j++) {
      if(ports[j]->d_name[0] == '.')
        continue;
      for(int k = 0; k < 2 && !rc; k++) {
        struct dirent **cs = NULL;
        char dir[1400];
        int nc;
        (void)!snprintf(dir, sizeof(dir), "%s/%s/%s", path, ports[j]->d_name,
                        sub[k]);
        nc = list_dir(dir, &cs);
        for(int m = 0; m < nc && !rc; m++) {
          char file[1700];
          int fd;
          if(cs[m]->d_name[0] == '.' || !strcmp(cs[m]->d_name, "lifespan"))
            continue;
          (void)!snprintf(file, sizeof(file), "%s/%s", dir, cs[m]->d_name);
          fd = open(file, O_RDONLY | O_CLOEXEC);
          if(fd < 0)
            continue;  /* some counters are root-only or write-only */
          if(rdma_keep(f, fd, devs[i]->d_name, ports[j]->d_name,
                       cs[m]->d_name)) {
            close(fd);
            rc = -1;
          }
        }
        if(nc > 0)
          free_list(cs, nc);
      }
    }
    if(np > 0)
      free_list(ports, np);
  }
  free_list(devs, nd);
  if(rc)
    ctr_rdma_files_free(f);
  return rc;
}

int ctr_rdma_files_read(const struct ctr_rdma_files *f, struct ctr_set *s)
{
  for(size_t i = 0; i < f->n; i++) {
    char buf[64];
    ssize_t r = pread(f->fd[i], buf, sizeof(buf) - 1, 0);
    if(r <= 0)
      continue;
    buf[r] = '\0';
    if(!isdigit((unsigned char)buf[0]))
      continue;
    if(ctr_set_add(s, f->name[i], strtod(buf, NULL), CTR_COUNTER))
      return -1;
  }
  return 0;
}

int ctr_read_rdma(const char *root, struct ctr_set *s)
{
  struct ctr_rdma_files f;
  int rc;
  if(ctr_rdma_files_open(root, &f))
    return -1;
  rc = ctr_rdma_files_read(&f, s);
  ctr_rdma_files_free(&f);
  return rc;
}
