/*
 * sse.h - an incremental parser of server-sent events (the WHATWG HTML
 * "event stream" format: lines end in LF, CRLF or CR; "data:" lines
 * accumulate, joined by LF; a blank line dispatches; lines starting with
 * ':' are comments; other fields are ignored).  Bytes are fed as they
 * arrive; each dispatched event's data goes to a callback.  No lua.h.
 */
#ifndef STRATA_LLM_SSE_H
#define STRATA_LLM_SSE_H

#include <stddef.h>

/* Called with one event's data (not NUL ended); return 0 to go on, -1 to
 * stop parsing (sse_feed then returns -1). */
typedef int (*sse_event_fn)(void *arg, const char *data, size_t n);

struct sse {
  char *line;          /* the line being read */
  size_t len, cap;
  char *data;          /* the event's data so far */
  size_t dlen, dcap;
  int has_data;        /* a data field was seen since the last dispatch */
  int last_cr;         /* previous byte was CR (a following LF is skipped) */
  size_t max;          /* line/data cap in bytes; 0 = 1 MiB */
  sse_event_fn fn;
  void *arg;
};

void sse_init(struct sse *p, sse_event_fn fn, void *arg);
/* Feed n bytes.  0, or -1 when the callback stopped, a line or event
 * passed the cap, or memory ran out. */
int sse_feed(struct sse *p, const char *b, size_t n);
/* End of stream: a pending event whose data has no blank line after it
 * is dispatched too (servers that close right after the last "data:"
 * line; vLLM's benchmark client accepts these).  0 or -1 as sse_feed. */
int sse_finish(struct sse *p);
void sse_free(struct sse *p);

#endif
