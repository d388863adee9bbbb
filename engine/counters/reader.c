/*
 * reader.c - snapshots of the local counter sources (counters.h).  A
 * reader opens every file once and re-reads it with pread at offset 0
 * (procfs and sysfs generate the text again there), so a sampler tick
 * costs the kernel's formatting and the parse, not path lookups.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "source.h"
#include "strata.h"

/* The whole text of fd from offset 0 into r->buf, NUL ended. */
int ctr_pread_all(struct ctr_reader *r, int fd)
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

/* --- File sources ---------------------------------------------------- */

int ctr_file_open(struct ctr_reader *r, const struct ctr_source *src,
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

int ctr_file_open_optional(struct ctr_reader *r, const struct ctr_source *src,
                           struct ctr_src_io *io, char *err, size_t errlen)
{
  if(!ctr_file_open(r, src, io, err, errlen))
    return 0;
  if(r->root[0] && errno == ENOENT) {
    err[0] = '\0';
    return 0;
  }
  return -1;
}

/* Its text again (pread at offset 0), parsed; a file found absent at
 * open reads nothing. */
int ctr_file_read(struct ctr_reader *r, const struct ctr_source *src,
                  struct ctr_src_io *io, struct ctr_set *s, char *err,
                  size_t errlen)
{
  if(io->fd < 0)
    return 0;
  if(ctr_pread_all(r, io->fd)) {
    snprintf(err, errlen, "%s: %s", io->path, strerror(errno));
    return -1;
  }
  if(src->parse(r, io, s)) {
    snprintf(err, errlen, "%s: %s", io->path,
             errno == ENOMEM ? "out of memory" : "unexpected format");
    return -1;
  }
  return 0;
}

void ctr_file_close(struct ctr_src_io *io)
{
  if(io->fd >= 0)
    close(io->fd);
  io->fd = -1;
}

int ctr_nothing_open(struct ctr_reader *r, const struct ctr_source *src,
                     struct ctr_src_io *io, char *err, size_t errlen)
{
  (void)r, (void)src, (void)io, (void)err, (void)errlen;
  return 0;
}

void ctr_nothing_close(struct ctr_src_io *io)
{
  (void)io;
}

/* --- The list of sources (sources.def) ------------------------------- */

#define CTR_SOURCE(x) extern const struct ctr_source ctr_src_##x;
#include "sources.def"
#undef CTR_SOURCE
#define CTR_SOURCE(x) &ctr_src_##x,
static const struct ctr_source *const source_rows[] = {
#include "sources.def"
};
#undef CTR_SOURCE
#define NROWS (sizeof(source_rows) / sizeof(source_rows[0]))
#define NAS (sizeof(source_rows[0]->as) / sizeof(source_rows[0]->as[0]))

/* The bit of a row's k-th name: one bit per name that is not an alias,
 * in list order (counters.h's CTR_SRC_* follow it; counters_test checks). */
static unsigned name_bit(size_t row, size_t k)
{
  unsigned bit = 1;
  for(size_t i = 0; i <= row; i++)
    for(size_t j = 0; j < NAS && source_rows[i]->as[j].name; j++) {
      if(j && source_rows[i]->as[j].alias)
        bit >>= 1;  /* the same bit as the name before */
      if(i == row && j == k)
        return bit;
      bit <<= 1;
    }
  return 0;
}

/* The bits a row serves. */
static unsigned row_bits(size_t row)
{
  unsigned b = 0;
  for(size_t k = 0; k < NAS && source_rows[row]->as[k].name; k++)
    b |= name_bit(row, k);
  return b;
}

unsigned ctr_source_bit(const char *name)
{
  for(size_t i = 0; name && i < NROWS; i++)
    for(size_t k = 0; k < NAS && source_rows[i]->as[k].name; k++)
      if(!strcmp(name, source_rows[i]->as[k].name))
        return name_bit(i, k);
  return 0;
}

unsigned ctr_source_default(void)
{
  unsigned b = 0;
  for(size_t i = 0; i < NROWS; i++)
    if(source_rows[i]->by_default)
      b |= row_bits(i);
  return b;
}

void ctr_source_names(char *buf, size_t len)
{
  size_t n = 0;
  buf[0] = '\0';
  for(size_t i = 0; i < NROWS; i++)  /* one name per bit: no aliases */
    for(size_t k = 0; k < NAS && source_rows[i]->as[k].name; k++)
      if((!k || !source_rows[i]->as[k].alias) && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
                              source_rows[i]->as[k].name);
}

/* --- The reader ------------------------------------------------------ */

int ctr_reader_open(const char *root, unsigned want, int per_cpu,
                    char *const *ifaces, struct ctr_reader **out,
                    char *err, size_t errlen)
{
  struct ctr_reader *r = calloc(1, sizeof(*r));
  *out = NULL;
  if(r)
    r->io = calloc(NROWS, sizeof(*r->io));
  if(!r || !r->io) {
    free(r);
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
  r->nio = NROWS;
  for(size_t i = 0; i < NROWS; i++) {
    unsigned rb = row_bits(i);
    r->io[i].fd = -1;
    /* the row's own bits from 1 up: its first name is bit 1 */
    r->io[i].want = (want & rb) / (rb & -rb);
  }
  for(size_t i = 0; i < NROWS; i++)
    if(r->io[i].want &&
       source_rows[i]->open(r, source_rows[i], &r->io[i], err, errlen)) {
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
  for(size_t i = 0; i < r->nio; i++)
    source_rows[i]->close(&r->io[i]);
  free(r->io);
  free(r->buf);
  free(r);
  *rp = NULL;
}

int ctr_reader_read(struct ctr_reader *r, struct ctr_set *s, char *err,
                    size_t errlen)
{
  for(size_t i = 0; i < r->nio; i++)
    if(r->io[i].want &&
       source_rows[i]->read(r, source_rows[i], &r->io[i], s, err, errlen))
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
