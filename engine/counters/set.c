/*
 * set.c - sets of named values (set.h).
 */
#include <stdlib.h>
#include <string.h>

#include "set.h"

void ctr_set_init(struct ctr_set *s)
{
  memset(s, 0, sizeof(*s));
}

void ctr_set_clear(struct ctr_set *s)
{
  s->n = 0;
}

void ctr_set_free(struct ctr_set *s)
{
  for(size_t i = 0; i < s->held; i++)
    free(s->names[i]);
  free(s->names);
  free(s->vals);
  free(s->kinds);
  ctr_set_init(s);
}

static int grow(struct ctr_set *s)
{
  size_t cap = s->cap ? s->cap * 2 : 64;
  char **n = realloc(s->names, cap * sizeof(*n));
  double *d;
  unsigned char *k;
  if(!n)
    return -1;
  s->names = n;
  d = realloc(s->vals, cap * sizeof(*d));
  if(!d)
    return -1;
  s->vals = d;
  k = realloc(s->kinds, cap);
  if(!k)
    return -1;
  s->kinds = k;
  s->cap = cap;
  return 0;
}

int ctr_set_add(struct ctr_set *s, const char *name, double v, int kind)
{
  if(s->n == s->cap && grow(s))
    return -1;
  if(s->n < s->held) {
    if(strcmp(s->names[s->n], name)) {
      char *d = strdup(name);
      if(!d)
        return -1;
      free(s->names[s->n]);
      s->names[s->n] = d;
    }
  }
  else {
    s->names[s->n] = strdup(name);
    if(!s->names[s->n])
      return -1;
    s->held = s->n + 1;
  }
  s->vals[s->n] = v;
  s->kinds[s->n] = (unsigned char)kind;
  s->n++;
  return 0;
}

/* Append src to dst[*at..cap-1), NUL ended, cut at the end. */
static void put(char *dst, size_t *at, size_t cap, const char *src)
{
  size_t k = strlen(src);
  if(k > cap - 1 - *at)
    k = cap - 1 - *at;
  memcpy(dst + *at, src, k);
  *at += k;
  dst[*at] = '\0';
}

int ctr_set_add2(struct ctr_set *s, const char *a, const char *b, double v,
                 int kind)
{
  return ctr_set_add3(s, a, b, NULL, v, kind);
}

/* a.b.c (a.b when c is NULL). */
int ctr_set_add3(struct ctr_set *s, const char *a, const char *b,
                 const char *c, double v, int kind)
{
  char name[512];
  size_t at = 0;
  name[0] = '\0';
  put(name, &at, sizeof(name), a);
  put(name, &at, sizeof(name), ".");
  put(name, &at, sizeof(name), b);
  if(c) {
    put(name, &at, sizeof(name), ".");
    put(name, &at, sizeof(name), c);
  }
  return ctr_set_add(s, name, v, kind);
}

long ctr_set_find(const struct ctr_set *s, const char *name)
{
  for(size_t i = 0; i < s->n; i++)
    if(!strcmp(s->names[i], name))
      return (long)i;
  return -1;
}
