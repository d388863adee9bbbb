/*
 * prom.c - the Prometheus text exposition format (version 0.0.4), parsed
 * fully in C: # HELP / # TYPE, other comments, label values with \\ \" \n
 * escapes, NaN / +Inf / -Inf, optional millisecond timestamps; histogram
 * and summary series come out as plain samples tied to their family.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"

/* --- The arena ------------------------------------------------------ */

/* A parse used to make one allocation per sample name, label name and
 * label value and one label array per sample (~2 000 for the 581 samples
 * of the Ceph mgr fixture); these blocks hold them all, the first sized
 * from the text, so a scrape makes a handful (docs/counters.md). */
struct prom_block {
  struct prom_block *next;
  size_t used, cap;
  _Alignas(max_align_t) unsigned char data[];
};

/* At least n bytes free at the head block, at a multiple of align (a
 * power of two); the caller writes there and then takes what it used
 * with arena_take.  A new block is no smaller than hint. */
static void *arena_room(struct prom_doc *d, size_t n, size_t hint,
                        size_t align)
{
  struct prom_block *b = d->mem;
  size_t at = b ? (b->used + align - 1) & ~(align - 1) : 0;
  if(b && at + n <= b->cap) {
    b->used = at;
    return b->data + at;
  }
  size_t cap = hint > n ? hint : n;
  if(b && cap < b->cap)
    cap = b->cap;  /* later blocks no smaller than the first */
  struct prom_block *nb = malloc(sizeof(*nb) + cap);
  if(!nb)
    return NULL;
  nb->next = b;
  nb->used = 0;
  nb->cap = cap;
  d->mem = nb;
  return nb->data;
}

static void arena_take(struct prom_doc *d, size_t n)
{
  d->mem->used += n;
}

/* --- Parser ---------------------------------------------------------- */

struct pp {
  const char *p, *end;  /* the current line, without its newline */
  long line;
  char *err;
  size_t errlen;
  struct prom_doc *d;
  size_t hint;               /* first arena block: from the text's length */
  struct prom_label *lab;    /* one sample's labels while parsed */
  size_t labcap;
  uint32_t *fh;              /* family index + 1 by name_hash, 0 = free */
  size_t fhcap;              /* a power of two */
};

/* A copy of s[0..n) in the arena, NUL-terminated. */
static char *arena_strndup(struct pp *x, const char *s, size_t n)
{
  char *o = arena_room(x->d, n + 1, x->hint, 1);
  if(!o)
    return NULL;
  memcpy(o, s, n);
  o[n] = '\0';
  arena_take(x->d, n + 1);
  return o;
}

static int perr(struct pp *x, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

static int perr(struct pp *x, const char *fmt, ...)
{
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  snprintf(x->err, x->errlen, "line %ld: %s", x->line, msg);
  errno = EINVAL;
  return -1;
}

static void skip_ws(struct pp *x)
{
  while(x->p < x->end && (*x->p == ' ' || *x->p == '\t'))
    x->p++;
}

/* Name characters: 1 first or later [a-zA-Z_], 2 later only [0-9], 4 a
 * metric's colon anywhere (a table: isalnum looks up the locale's). */
static const unsigned char name_class[256] = {
  ['0'] = 2, ['1'] = 2, ['2'] = 2, ['3'] = 2, ['4'] = 2, ['5'] = 2,
  ['6'] = 2, ['7'] = 2, ['8'] = 2, ['9'] = 2, [':'] = 4, ['_'] = 1,
  ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
  ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1,
  ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
  ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
  ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1,
  ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1,
  ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1,
  ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1,
  ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

/* [a-zA-Z_:][a-zA-Z0-9_:]* (colon only when metric): its span, or 0. */
static size_t name_span(struct pp *x, int metric)
{
  const char *s = x->p;
  unsigned first = metric ? 1 | 4 : 1, later = first | 2;
  if(x->p >= x->end || !(name_class[(unsigned char)*x->p] & first))
    return 0;
  x->p++;
  while(x->p < x->end && (name_class[(unsigned char)*x->p] & later))
    x->p++;
  return (size_t)(x->p - s);
}

/* The same, copied into the arena; NULL when there is none (or no
 * memory: the callers report both as a bad name, the text is then not
 * worth a second message). */
static char *take_name(struct pp *x, int metric)
{
  const char *s = x->p;
  size_t n = name_span(x, metric);
  return n ? arena_strndup(x, s, n) : NULL;
}

/* The rest of the token (up to blank or end), as a bounded string. */
static int take_token(struct pp *x, char *tok, size_t len)
{
  const char *s = x->p;
  size_t n;
  while(x->p < x->end && *x->p != ' ' && *x->p != '\t')
    x->p++;
  n = (size_t)(x->p - s);
  if(n == 0 || n >= len)
    return -1;
  memcpy(tok, s, n);
  tok[n] = '\0';
  return 0;
}

static int parse_value(const char *tok, double *v)
{
  char *e;
  if(!strcmp(tok, "NaN") || !strcmp(tok, "nan")) {
    *v = NAN;
    return 0;
  }
  if(!strcmp(tok, "+Inf") || !strcmp(tok, "Inf") || !strcmp(tok, "+inf")) {
    *v = INFINITY;
    return 0;
  }
  if(!strcmp(tok, "-Inf") || !strcmp(tok, "-inf")) {
    *v = -INFINITY;
    return 0;
  }
  /* strtod would take hex, "infinity", "nan(...)": Prometheus does not */
  for(const char *c = tok; *c; c++)
    if(!strchr("0123456789+-.eE", *c))
      return -1;
  errno = 0;
  *v = strtod(tok, &e);
  return (*e || e == tok) ? -1 : 0;
}

/* A name's hash from its length and its first and last 8 bytes, in
 * constant time: the families are indexed by it while a text is parsed,
 * so each sample's lookup is a probe, not a scan of every family (a miss,
 * such as a name with a _total suffix, scanned all of them).  Names that
 * differ only in the middle collide and are told apart by memcmp. */
static uint32_t name_hash(const char *s, size_t n)
{
  uint64_t a = 0, b = 0, h;
  memcpy(&a, s, n < 8 ? n : 8);
  if(n > 8)
    memcpy(&b, s + n - 8, 8);
  h = a * 0x9E3779B97F4A7C15ull ^ b * 0xC2B2AE3D27D4EB4Full ^
      (uint64_t)n * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (uint32_t)h;
}

static long find_family(const struct pp *x, const char *name, size_t n)
{
  const struct prom_doc *d = x->d;
  /* the last family first: a family's samples follow its HELP and TYPE */
  if(d->nfam && d->fams[d->nfam - 1].len == n &&
     !memcmp(d->fams[d->nfam - 1].name, name, n))
    return (long)d->nfam - 1;
  if(!x->fhcap)
    return -1;
  for(size_t i = name_hash(name, n) & (x->fhcap - 1);; i = (i + 1) &
      (x->fhcap - 1)) {
    uint32_t f = x->fh[i];
    if(!f)
      return -1;
    if(d->fams[f - 1].len == n && !memcmp(d->fams[f - 1].name, name, n))
      return (long)f - 1;
  }
}

/* Index family f (kept at most half full: a probe ends at a free slot). */
static int index_family(struct pp *x, size_t f)
{
  const struct prom_doc *d = x->d;
  if(2 * (f + 1) > x->fhcap) {
    size_t cap = x->fhcap ? x->fhcap * 2 : 256;
    uint32_t *nh = calloc(cap, sizeof(*nh));
    if(!nh)
      return -1;
    free(x->fh);
    x->fh = nh;
    x->fhcap = cap;
    for(size_t i = 0; i < f; i++)
      if(index_family(x, i))
        return -1;
  }
  size_t i = name_hash(d->fams[f].name, d->fams[f].len) & (x->fhcap - 1);
  while(x->fh[i])
    i = (i + 1) & (x->fhcap - 1);
  x->fh[i] = (uint32_t)f + 1;
  return 0;
}

static long family_of(const struct pp *x, const char *name, size_t n)
{
  static const struct { const char *s; size_t n; } sfx[] = {
    { "_bucket", 7 }, { "_sum", 4 }, { "_count", 6 }, { "_total", 6 },
    { "_created", 8 }, { "_gsum", 5 }, { "_gcount", 7 }, { "_info", 5 }
  };
  long f = find_family(x, name, n);
  if(f >= 0)
    return f;
  for(size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
    size_t k = sfx[i].n;
    if(n > k && !memcmp(name + n - k, sfx[i].s, k)) {
      f = find_family(x, name, n - k);
      if(f >= 0)
        return f;
    }
  }
  return -1;
}

static struct prom_family *family_get(struct pp *x, const char *name,
                                     size_t n)
{
  struct prom_doc *d = x->d;
  long f = find_family(x, name, n);
  struct prom_family *fam;
  if(f >= 0)
    return &d->fams[f];
  if(d->nfam >= UINT32_MAX - 1)
    return NULL;
  if(d->nfam == d->famcap) {
    size_t cap = d->famcap ? d->famcap * 2 : 32;
    struct prom_family *nf = realloc(d->fams, cap * sizeof(*nf));
    if(!nf)
      return NULL;
    d->fams = nf;
    d->famcap = cap;
  }
  fam = &d->fams[d->nfam];
  memset(fam, 0, sizeof(*fam));
  fam->name = arena_strndup(x, name, n);
  if(!fam->name)
    return NULL;
  fam->len = n;
  if(index_family(x, d->nfam))
    return NULL;
  d->nfam++;
  return fam;
}

/* HELP text: escapes \\ and \n only. */
static char *unescape_help(struct pp *x, const char *s, size_t n)
{
  char *out = arena_room(x->d, n + 1, x->hint, 1), *o = out;
  if(!out)
    return NULL;
  for(size_t i = 0; i < n; i++) {
    if(s[i] == '\\' && i + 1 < n && (s[i + 1] == '\\' || s[i + 1] == 'n')) {
      *o++ = s[i + 1] == 'n' ? '\n' : '\\';
      i++;
    }
    else
      *o++ = s[i];
  }
  *o = '\0';
  arena_take(x->d, (size_t)(o - out) + 1);
  return out;
}

static int parse_comment(struct pp *x)
{
  char kw[8];
  const char *name;
  size_t n;
  struct prom_family *fam;
  x->p++;  /* '#' */
  skip_ws(x);
  if(x->end - x->p < 5 || (strncmp(x->p, "HELP ", 5) &&
                           strncmp(x->p, "TYPE ", 5) &&
                           strncmp(x->p, "HELP\t", 5) &&
                           strncmp(x->p, "TYPE\t", 5)))
    return 0;  /* a plain comment */
  memcpy(kw, x->p, 4);
  kw[4] = '\0';
  x->p += 5;
  skip_ws(x);
  name = x->p;
  n = name_span(x, 1);
  if(!n)
    return perr(x, "# %s without a metric name", kw);
  fam = family_get(x, name, n);
  if(!fam)
    return perr(x, "out of memory");
  if(x->p < x->end && *x->p != ' ' && *x->p != '\t')
    return perr(x, "# %s: bad character '%c' in the metric name", kw,
                *x->p);
  skip_ws(x);
  if(kw[0] == 'H') {
    fam->help = unescape_help(x, x->p, (size_t)(x->end - x->p));
    if(!fam->help)
      return perr(x, "out of memory");
  }
  else {
    static const char *const types[] = {
      "counter", "gauge", "histogram", "summary", "untyped", "unknown",
      "info", "stateset", "gaugehistogram", NULL
    };
    char tok[32];
    const char *type = NULL;
    if(take_token(x, tok, sizeof(tok)))
      return perr(x, "# TYPE %s without a valid type", fam->name);
    for(int i = 0; types[i] && !type; i++)
      if(!strcmp(tok, types[i]))
        type = types[i];
    if(!type)
      return perr(x, "# TYPE %s: unknown type '%s'", fam->name, tok);
    skip_ws(x);
    if(x->p != x->end)
      return perr(x, "# TYPE %s: trailing text after the type", fam->name);
    fam->type = type;
  }
  return 0;
}

/* A label value after its opening quote, unescaped into the arena. */
static char *take_value(struct pp *x, const char *sname, const char *lname)
{
  /* unescaped it is no longer than the rest of the line */
  char *val = arena_room(x->d, (size_t)(x->end - x->p) + 1, x->hint, 1);
  size_t vn = 0;
  if(!val) {
    perr(x, "out of memory");
    return NULL;
  }
  for(;;) {
    if(x->p >= x->end) {
      perr(x, "%s: label '%s': unterminated value", sname, lname);
      return NULL;
    }
    if(*x->p == '"')
      break;
    if(*x->p == '\\') {
      char c = x->p + 1 < x->end ? x->p[1] : '\0';
      if(c == '\\' || c == '"')
        val[vn++] = c;
      else if(c == 'n')
        val[vn++] = '\n';
      else {
        perr(x, "%s: label '%s': invalid escape '\\%c'", sname, lname,
             c ? c : ' ');
        return NULL;
      }
      x->p += 2;
      continue;
    }
    val[vn++] = *x->p++;
  }
  val[vn] = '\0';
  arena_take(x->d, vn + 1);
  x->p++;  /* closing quote */
  return val;
}

/* {a="x",b="y"} into x->lab, then one array in the arena for s. */
static int parse_labels(struct pp *x, struct prom_sample *s)
{
  size_t n = 0;
  x->p++;  /* '{' */
  for(;;) {
    struct prom_label *l;
    skip_ws(x);
    if(x->p < x->end && *x->p == '}') {
      x->p++;
      break;
    }
    if(n == x->labcap) {
      size_t nc = x->labcap ? x->labcap * 2 : 16;
      struct prom_label *nl = realloc(x->lab, nc * sizeof(*nl));
      if(!nl)
        return perr(x, "out of memory");
      x->lab = nl;
      x->labcap = nc;
    }
    l = &x->lab[n];
    l->name = take_name(x, 0);
    if(!l->name)
      return perr(x, "%s: expected a label name or '}'", s->name);
    n++;
    skip_ws(x);
    if(x->p >= x->end || *x->p != '=')
      return perr(x, "%s: expected '=' after label '%s'", s->name, l->name);
    x->p++;
    skip_ws(x);
    if(x->p >= x->end || *x->p != '"')
      return perr(x, "%s: label '%s' value must be quoted", s->name,
                  l->name);
    x->p++;
    l->value = take_value(x, s->name, l->name);
    if(!l->value)
      return -1;
    skip_ws(x);
    if(x->p < x->end && *x->p == ',') {
      x->p++;
      continue;
    }
    if(x->p < x->end && *x->p == '}') {
      x->p++;
      break;
    }
    return perr(x, "%s: expected ',' or '}' after label '%s'", s->name,
                l->name);
  }
  if(n) {
    s->labels = arena_room(x->d, n * sizeof(*s->labels), x->hint,
                           _Alignof(struct prom_label));
    if(!s->labels)
      return perr(x, "out of memory");
    memcpy(s->labels, x->lab, n * sizeof(*s->labels));
    arena_take(x->d, n * sizeof(*s->labels));
    s->nlabels = n;
  }
  return 0;
}

/* name{labels} value [timestamp]; what a failed line took from the arena
 * stays there until the document is freed. */
static int parse_sample(struct pp *x)
{
  struct prom_doc *d = x->d;
  struct prom_sample s;
  char tok[64];
  memset(&s, 0, sizeof(s));
  s.name = take_name(x, 1);
  if(!s.name)
    return perr(x, "expected a metric name, found '%.*s'",
                x->end - x->p < 20 ? (int)(x->end - x->p) : 20, x->p);
  if(x->p < x->end && *x->p == '{' && parse_labels(x, &s))
    return -1;
  if(x->p < x->end && *x->p != ' ' && *x->p != '\t')
    return perr(x, "%s: unexpected character '%c' after the name", s.name,
                *x->p);
  skip_ws(x);
  if(take_token(x, tok, sizeof(tok)) || parse_value(tok, &s.value))
    return perr(x, "%s: missing or invalid value", s.name);
  skip_ws(x);
  if(x->p < x->end) {
    char *e;
    if(take_token(x, tok, sizeof(tok)))
      return perr(x, "%s: invalid timestamp", s.name);
    s.ts_ms = strtoll(tok, &e, 10);
    if(*e || e == tok)
      return perr(x, "%s: invalid timestamp '%s'", s.name, tok);
    s.has_ts = 1;
    skip_ws(x);
    if(x->p < x->end)
      return perr(x, "%s: trailing text after the timestamp", s.name);
  }
  s.family = family_of(x, s.name, strlen(s.name));
  if(d->n == d->cap) {
    /* a sample line is rarely under 40 bytes: one allocation mostly */
    size_t cap = d->cap ? d->cap * 2 : x->hint / 60 + 16;
    struct prom_sample *ns = realloc(d->s, cap * sizeof(*ns));
    if(!ns)
      return perr(x, "out of memory");
    d->s = ns;
    d->cap = cap;
  }
  d->s[d->n++] = s;
  return 0;
}

int prom_parse(const char *text, size_t len, struct prom_doc *doc,
               char *err, size_t errlen)
{
  struct pp x = { 0 };
  const char *p = text, *end = text + len;
  int rc = 0;
  x.err = err;
  x.errlen = errlen;
  x.d = doc;
  /* the strings are at most the text's bytes; labels add 16 each */
  x.hint = len + len / 2 + 256;
  memset(doc, 0, sizeof(*doc));
  while(p < end && !rc) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    x.line++;
    x.p = p;
    x.end = le;
    if(x.end > x.p && x.end[-1] == '\r')
      x.end--;
    if(x.end > x.p && memchr(x.p, '\0', (size_t)(x.end - x.p)))
      rc = perr(&x, "NUL byte in the text");
    else {
      skip_ws(&x);
      if(x.p < x.end)
        rc = *x.p == '#' ? parse_comment(&x) : parse_sample(&x);
    }
    p = nl ? nl + 1 : end;
  }
  free(x.lab);
  free(x.fh);
  return rc ? -1 : 0;
}

void prom_doc_free(struct prom_doc *doc)
{
  for(struct prom_block *b = doc->mem, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(doc->s);
  free(doc->fams);
  memset(doc, 0, sizeof(*doc));
}

static int label_cmp(const void *a, const void *b)
{
  const struct prom_label *const *x = a, *const *y = b;
  return strcmp((*x)->name, (*y)->name);
}

size_t prom_key(const struct prom_sample *s, char *buf, size_t len)
{
  const struct prom_label *sorted[64];
  size_t n = s->nlabels < 64 ? s->nlabels : 64, k = 0;
  char *o = buf;
#define PUT(c) do { if(k + 1 < len) o[k] = (c); k++; } while(0)
  for(const char *c = s->name; *c; c++)
    PUT(*c);
  if(n) {
    for(size_t i = 0; i < n; i++)
      sorted[i] = &s->labels[i];
    qsort(sorted, n, sizeof(sorted[0]), label_cmp);
    PUT('{');
    for(size_t i = 0; i < n; i++) {
      if(i)
        PUT(',');
      for(const char *c = sorted[i]->name; *c; c++)
        PUT(*c);
      PUT('=');
      PUT('"');
      for(const char *c = sorted[i]->value; *c; c++) {
        if(*c == '\\' || *c == '"')
          PUT('\\');
        if(*c == '\n') {
          PUT('\\');
          PUT('n');
        }
        else
          PUT(*c);
      }
      PUT('"');
    }
    PUT('}');
  }
  if(len)
    o[k < len ? k : len - 1] = '\0';
#undef PUT
  return k;
}

static int ends_with(const char *s, const char *sfx)
{
  size_t n = strlen(s), k = strlen(sfx);
  return n >= k && !strcmp(s + n - k, sfx);
}

int prom_is_counter(const struct prom_doc *d, const struct prom_sample *s)
{
  const char *t = s->family >= 0 ? d->fams[s->family].type : NULL;
  if(t && !strcmp(t, "gauge"))
    return 0;
  if(t && (!strcmp(t, "counter") || !strcmp(t, "histogram") ||
           !strcmp(t, "summary")))
    /* a summary's quantile rows are levels, its _sum/_count count */
    return !(strcmp(t, "summary") == 0 && !ends_with(s->name, "_sum") &&
             !ends_with(s->name, "_count"));
  return ends_with(s->name, "_total") || ends_with(s->name, "_sum") ||
         ends_with(s->name, "_count") || ends_with(s->name, "_bucket");
}
