/*
 * sse.c - the event-stream parser of sse.h.
 */
#include <stdlib.h>
#include <string.h>

#include "sse.h"
#include "strata.h"

#define SSE_MAX_DEFAULT (1u << 20)

void sse_init(struct sse *p, sse_event_fn fn, void *arg)
{
  memset(p, 0, sizeof(*p));
  p->fn = fn;
  p->arg = arg;
}

void sse_free(struct sse *p)
{
  free(p->line);
  free(p->data);
  p->line = p->data = NULL;
  p->len = p->cap = p->dlen = p->dcap = 0;
}

static int grow(char **b, size_t *cap, size_t need, size_t max)
{
  if(need > *cap && need > max)
    return -1;
  return strata_reserve(b, cap, need, 256);
}

static int dispatch(struct sse *p)
{
  int rc = 0;
  if(p->has_data)
    rc = p->fn(p->arg, p->data ? p->data : "", p->dlen);
  p->dlen = 0;
  p->has_data = 0;
  return rc;
}

/* One complete line (without its end). */
static int line(struct sse *p, size_t max)
{
  const char *l = p->line ? p->line : "";
  size_t n = p->len, vn;
  const char *v;

  if(n == 0)
    return dispatch(p);
  if(l[0] == ':')
    return 0;
  v = memchr(l, ':', n);
  if(!v || (size_t)(v - l) != 4 || memcmp(l, "data", 4))
    return 0;   /* event, id, retry, unknown fields: not ours */
  v++;
  if(v < l + n && *v == ' ')
    v++;
  vn = (size_t)(l + n - v);
  if(grow(&p->data, &p->dcap, p->dlen + vn + 2, max))
    return -1;
  if(p->has_data)
    p->data[p->dlen++] = '\n';
  memcpy(p->data + p->dlen, v, vn);
  p->dlen += vn;
  p->has_data = 1;
  return 0;
}

int sse_feed(struct sse *p, const char *b, size_t n)
{
  size_t max = p->max ? p->max : SSE_MAX_DEFAULT;
  for(size_t i = 0; i < n; i++) {
    char c = b[i];
    if(c == '\n' && p->last_cr) {
      p->last_cr = 0;
      continue;
    }
    p->last_cr = c == '\r';
    if(c == '\n' || c == '\r') {
      int rc = line(p, max);
      p->len = 0;
      if(rc)
        return -1;
      continue;
    }
    if(grow(&p->line, &p->cap, p->len + 1, max))
      return -1;
    p->line[p->len++] = c;
  }
  return 0;
}

int sse_finish(struct sse *p)
{
  size_t max = p->max ? p->max : SSE_MAX_DEFAULT;
  if(p->len) {
    int rc = line(p, max);
    p->len = 0;
    if(rc)
      return -1;
  }
  return dispatch(p);
}
