/*
 * file.c - read a whole file (procfs, sysfs, configuration) into memory,
 * and grow a byte buffer as it is written.  One implementation of each for
 * every family: the sampler re-reads /proc each tick into a buffer it
 * keeps; other callers take a fresh one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "strata.h"

int strata_read_file(const char *path, size_t max, char **buf, size_t *cap,
                     size_t *len)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  size_t n = 0, own = 0, *c = cap ? cap : &own;

  if(!cap)
    *buf = NULL;
  if(len)
    *len = 0;
  if(fd < 0)
    return -1;
  for(;;) {
    ssize_t r;
    if(!*buf || *c - n < 4096) {
      size_t nc = *c ? *c * 2 : 16384;
      char *nb = realloc(*buf, nc);
      if(!nb) {
        close(fd);
        errno = ENOMEM;
        goto fail;
      }
      *buf = nb;
      *c = nc;
    }
    r = read(fd, *buf + n, *c - n - 1);
    if(r < 0) {
      int e = errno;
      if(e == EINTR)
        continue;
      close(fd);
      errno = e;
      goto fail;
    }
    if(r == 0)
      break;
    n += (size_t)r;
    if(max && n > max) {
      close(fd);
      errno = EFBIG;
      goto fail;
    }
  }
  close(fd);
  (*buf)[n] = '\0';
  if(len)
    *len = n;
  return 0;
fail:
  if(!cap) {
    free(*buf);
    *buf = NULL;
  }
  return -1;
}

int strata_reserve(char **p, size_t *cap, size_t need, size_t first)
{
  size_t nc;
  char *q;
  if(need <= *cap)
    return 0;
  nc = *cap ? *cap : (first ? first : 64);
  while(nc < need)
    nc *= 2;
  q = realloc(*p, nc);
  if(!q) {
    errno = ENOMEM;
    return -1;
  }
  *p = q;
  *cap = nc;
  return 0;
}
