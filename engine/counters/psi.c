/*
 * psi.c - the "psi" counter source: Linux pressure stall information,
 * /proc/pressure/{cpu,memory,io}, per the kernel's
 * Documentation/accounting/psi.rst (torvalds/linux @010e85f9):
 *
 *   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *
 * "some": the share of time at least some tasks stalled on the resource;
 * "full": all non-idle tasks at once.  avg10/60/300 are that share in %
 * over 10/60/300 s windows (gauges: psi.<res>.<some|full>.avg10); total
 * is the stall time in microseconds (a counter: psi.<res>.<line>.total_us,
 * whose rate is stalled us per second).  A kernel without CONFIG_PSI, or
 * booted with psi=0, has no /proc/pressure: no series, never an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "source.h"

static const char *const res[3] = { "cpu", "memory", "io" };

/* One line's "key=value" words into <grp>.<key>: avgN gauges, total
 * the counter total_us.  -1 with EINVAL on a word psi.rst does not
 * describe, ENOMEM. */
static int psi_values(const char *q, const char *grp, struct ctr_set *s)
{
  for(;;) {
    char kv[64], *eq, *num_end;
    double v;
    int rc;
    q = ctr_word(q, kv, sizeof(kv));
    if(!kv[0])
      return 0;
    eq = strchr(kv, '=');
    if(!eq || eq[1] == '\0')
      break;
    *eq = '\0';
    v = strtod(eq + 1, &num_end);
    if(*num_end)
      break;
    if(!strcmp(kv, "total"))
      rc = ctr_set_add2(s, grp, "total_us", v, CTR_COUNTER);
    else if(!strcmp(kv, "avg10") || !strcmp(kv, "avg60") ||
            !strcmp(kv, "avg300"))
      rc = ctr_set_add2(s, grp, kv, v, CTR_GAUGE);
    else
      break;
    if(rc)
      return -1;
  }
  errno = EINVAL;
  return -1;
}

/* One file's lines into psi.<resource>.<some|full>.<key>. */
static int psi_parse(const char *resource, const char *text,
                     struct ctr_set *s)
{
  const char *p = text;
  char line[256];
  int got;
  while((got = ctr_next_line(&p, line, sizeof(line))) != 0) {
    char word[8], grp[64];
    const char *q;
    if(got < 0) {
      errno = EINVAL;
      return -1;
    }
    q = ctr_word(line, word, sizeof(word));
    if(!word[0])
      continue;  /* an empty line */
    if(strcmp(word, "some") && strcmp(word, "full")) {
      errno = EINVAL;
      return -1;
    }
    snprintf(grp, sizeof(grp), "psi.%s.%s", resource, word);
    if(psi_values(q, grp, s))
      return -1;
  }
  return 0;
}

struct psi_files {
  int fd[3];   /* -1: that file is absent */
  char path[3][600];
};

static void psi_close(struct ctr_src_io *io)
{
  struct psi_files *f = io->priv;
  for(int i = 0; f && i < 3; i++)
    if(f->fd[i] >= 0)
      close(f->fd[i]);
  free(f);
  io->priv = NULL;
}

/* Each file that exists, kept open; an absent one (ENOENT: no PSI in this
 * kernel, or a recorded tree without it) gives no series. */
static int psi_open(struct ctr_reader *r, const struct ctr_source *src,
                    struct ctr_src_io *io, char *err, size_t errlen)
{
  struct psi_files *f = calloc(1, sizeof(*f));
  (void)src;
  if(!f) {
    snprintf(err, errlen, "psi: out of memory");
    return -1;
  }
  io->priv = f;
  for(int i = 0; i < 3; i++) {
    snprintf(f->path[i], sizeof(f->path[i]), "%s/proc/pressure/%s", r->root,
             res[i]);
    f->fd[i] = open(f->path[i], O_RDONLY | O_CLOEXEC);
    if(f->fd[i] < 0 && errno != ENOENT) {
      snprintf(err, errlen, "%s: %s", f->path[i], strerror(errno));
      return -1;
    }
  }
  return 0;
}

static int psi_read(struct ctr_reader *r, const struct ctr_source *src,
                    struct ctr_src_io *io, struct ctr_set *s, char *err,
                    size_t errlen)
{
  struct psi_files *f = io->priv;
  (void)src;
  for(int i = 0; i < 3; i++) {
    if(f->fd[i] < 0)
      continue;
    if(ctr_pread_all(r, f->fd[i]) || psi_parse(res[i], r->buf, s)) {
      snprintf(err, errlen, "%s: %s", f->path[i], errno == ENOMEM ?
               "out of memory" : errno == EINVAL ? "unexpected format" :
               strerror(errno));
      return -1;
    }
  }
  return 0;
}

const struct ctr_source ctr_src_psi = {
  { { "psi", 0 } }, 0, NULL, NULL, psi_open, psi_read, psi_close
};
