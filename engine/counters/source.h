/*
 * source.h - what a counter source is, for the files that define one
 * (reader.c reads them; counters.h is the public side).
 *
 * A source is one file: it defines its row as one exported
 *   const struct ctr_source ctr_src_<name>;
 * and sources.def names it with one line, CTR_SOURCE(<name>), in the order
 * a snapshot reads the sources.  The bit of each name a spec may ask for
 * (`sources = {...}`) is its place in that list (reader.c), so nothing
 * else changes when a source is added: CMake builds every .c here and
 * every *_test.c here is a unit test (CMakeLists.txt).
 */
#ifndef STRATA_COUNTERS_SOURCE_H
#define STRATA_COUNTERS_SOURCE_H

#include <stddef.h>

#include "set.h"

/* What one source keeps open between snapshots. */
struct ctr_src_io {
  int fd;                      /* its file, or -1 */
  char path[600];
  unsigned want;               /* which of its names were asked for: bit k
                                * for as[k] (an alias shares the bit of the
                                * name before it) */
  void *priv;                  /* anything else it keeps (its close frees) */
};

struct ctr_reader {
  char root[512];              /* "" = this host, else a recorded tree */
  unsigned sources;
  int per_cpu;
  char *const *ifaces;
  size_t nio;
  struct ctr_src_io *io;       /* one per row of the list */
  char *buf;                   /* the text of the file just read */
  size_t cap;
  long tck;
};

struct ctr_source;
typedef int ctr_src_open_fn(struct ctr_reader *r, const struct ctr_source *src,
                            struct ctr_src_io *io, char *err, size_t errlen);
typedef int ctr_src_read_fn(struct ctr_reader *r, const struct ctr_source *src,
                            struct ctr_src_io *io, struct ctr_set *s,
                            char *err, size_t errlen);

/*
 * One source: the names a spec asks for it by (a name with alias set is
 * a second name for the one before it), whether it is read when a spec
 * names none, and its own open, read and close; a file source names its
 * file (under the root) and its parser of r->buf and uses the ctr_file_*
 * functions below.
 */
struct ctr_source {
  struct { const char *name; int alias; } as[3];
  int by_default;
  const char *file;
  int (*parse)(struct ctr_reader *r, struct ctr_src_io *io,
               struct ctr_set *s);
  ctr_src_open_fn *open;
  ctr_src_read_fn *read;
  void (*close)(struct ctr_src_io *io);
};

/* The whole text of fd from offset 0 into r->buf, NUL ended.  0 or -1
 * with errno. */
int ctr_pread_all(struct ctr_reader *r, int fd);

/* A file source: src->file under the root, open for the reader's life,
 * read again with pread and parsed by src->parse. */
ctr_src_open_fn ctr_file_open;
ctr_src_read_fn ctr_file_read;
void ctr_file_close(struct ctr_src_io *io);
#define CTR_FILE_SOURCE ctr_file_open, ctr_file_read, ctr_file_close
/* Its file may be absent in a recorded tree (no disks there, like no
 * rdma): then the source reads nothing. */
ctr_src_open_fn ctr_file_open_optional;

/* Nothing to keep open (an ioctl or a library asked each time). */
ctr_src_open_fn ctr_nothing_open;
void ctr_nothing_close(struct ctr_src_io *io);

#endif
