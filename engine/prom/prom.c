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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"

/* --- Parser ---------------------------------------------------------- */

struct pp {
  const char *p, *end;  /* the current line, without its newline */
  long line;
  char *err;
  size_t errlen;
};

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

/* [a-zA-Z_:][a-zA-Z0-9_:]* (colon only when metric); malloc'd or NULL. */
static char *take_name(struct pp *x, int metric)
{
  const char *s = x->p;
  char *out;
  if(x->p >= x->end ||
     !(isalpha((unsigned char)*x->p) || *x->p == '_' ||
       (metric && *x->p == ':')))
    return NULL;
  while(x->p < x->end && (isalnum((unsigned char)*x->p) || *x->p == '_' ||
                          (metric && *x->p == ':')))
    x->p++;
  out = strndup(s, (size_t)(x->p - s));
  return out;
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

static long find_family(const struct prom_doc *d, const char *name,
                        size_t n)
{
  /* from the last: a family's samples follow its HELP and TYPE lines, and
   * the lengths spare the compares (a scrape looks up every line's) */
  for(size_t i = d->nfam; i-- > 0;)
    if(d->fams[i].len == n && !memcmp(d->fams[i].name, name, n))
      return (long)i;
  return -1;
}

static long family_of(const struct prom_doc *d, const char *name)
{
  static const char *const sfx[] = {
    "_bucket", "_sum", "_count", "_total", "_created", "_gsum", "_gcount",
    "_info"
  };
  size_t n = strlen(name);
  long f = find_family(d, name, n);
  if(f >= 0)
    return f;
  for(size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
    size_t k = strlen(sfx[i]);
    if(n > k && !strcmp(name + n - k, sfx[i])) {
      f = find_family(d, name, n - k);
      if(f >= 0)
        return f;
    }
  }
  return -1;
}

static struct prom_family *family_get(struct prom_doc *d, const char *name)
{
  long f = find_family(d, name, strlen(name));
  struct prom_family *fam;
  if(f >= 0)
    return &d->fams[f];
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
  fam->name = strdup(name);
  if(!fam->name)
    return NULL;
  fam->len = strlen(name);
  d->nfam++;
  return fam;
}

/* HELP text: escapes \\ and \n only. */
static char *unescape_help(const char *s, size_t n)
{
  char *out = malloc(n + 1), *o = out;
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
  return out;
}

static int parse_comment(struct pp *x, struct prom_doc *d)
{
  char kw[8];
  char *name;
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
  name = take_name(x, 1);
  if(!name)
    return perr(x, "# %s without a metric name", kw);
  fam = family_get(d, name);
  free(name);
  if(!fam)
    return perr(x, "out of memory");
  if(x->p < x->end && *x->p != ' ' && *x->p != '\t')
    return perr(x, "# %s: bad character '%c' in the metric name", kw,
                *x->p);
  skip_ws(x);
  if(kw[0] == 'H') {
    free(fam->help);
    fam->help = unescape_help(x->p, (size_t)(x->end - x->p));
    if(!fam->help)
      return perr(x, "out of memory");
  }
  else {
    static const char *const types[] = {
      "counter", "gauge", "histogram", "summary", "untyped", "unknown",
      "info", "stateset", "gaugehistogram", NULL
    };
    char tok[32];
    int ok = 0;
    if(take_token(x, tok, sizeof(tok)))
      return perr(x, "# TYPE %s without a valid type", fam->name);
    for(int i = 0; types[i]; i++)
      ok = ok || !strcmp(tok, types[i]);
    if(!ok)
      return perr(x, "# TYPE %s: unknown type '%s'", fam->name, tok);
    skip_ws(x);
    if(x->p != x->end)
      return perr(x, "# TYPE %s: trailing text after the type", fam->name);
    free(fam->type);
    fam->type = strdup(tok);
    if(!fam->type)
      return perr(x, "out of memory");
  }
  return 0;
}

static int parse_labels(struct pp *x, struct prom_sample *s)
{
  size_t cap = 0;
  x->p++;  /* '{' */
  for(;;) {
    struct prom_label *l;
    char *val;
    size_t vn = 0;
    skip_ws(x);
    if(x->p < x->end && *x->p == '}') {
      x->p++;
      return 0;
    }
    if(s->nlabels == cap) {
      size_t nc = cap ? cap * 2 : 4;
      struct prom_label *nl = realloc(s->labels, nc * sizeof(*nl));
      if(!nl)
        return perr(x, "out of memory");
      s->labels = nl;
      cap = nc;
    }
    l = &s->labels[s->nlabels];
    l->value = NULL;
    l->name = take_name(x, 0);
    if(!l->name)
      return perr(x, "%s: expected a label name or '}'", s->name);
    s->nlabels++;
    skip_ws(x);
    if(x->p >= x->end || *x->p != '=')
      return perr(x, "%s: expected '=' after label '%s'", s->name, l->name);
    x->p++;
    skip_ws(x);
    if(x->p >= x->end || *x->p != '"')
      return perr(x, "%s: label '%s' value must be quoted", s->name,
                  l->name);
    x->p++;
    val = malloc((size_t)(x->end - x->p) + 1);
    if(!val)
      return perr(x, "out of memory");
    l->value = val;
    for(;;) {
      if(x->p >= x->end)
        return perr(x, "%s: label '%s': unterminated value", s->name,
                    l->name);
      if(*x->p == '"')
        break;
      if(*x->p == '\\') {
        char c = x->p + 1 < x->end ? x->p[1] : '\0';
        if(c == '\\' || c == '"')
          val[vn++] = c;
        else if(c == 'n')
          val[vn++] = '\n';
        else
          return perr(x, "%s: label '%s': invalid escape '\\%c'", s->name,
                      l->name, c ? c : ' ');
        x->p += 2;
        continue;
      }
      val[vn++] = *x->p++;
    }
    val[vn] = '\0';
    x->p++;  /* closing quote */
    skip_ws(x);
    if(x->p < x->end && *x->p == ',') {
      x->p++;
      continue;
    }
    if(x->p < x->end && *x->p == '}') {
      x->p++;
      return 0;
    }
    return perr(x, "%s: expected ',' or '}' after label '%s'", s->name,
                l->name);
  }
}

static void sample_free(struct prom_sample *s)
{
  for(size_t i = 0; i < s->nlabels; i++) {
    free(s->labels[i].name);
    free(s->labels[i].value);
  }
  free(s->labels);
  free(s->name);
}

static int parse_sample(struct pp *x, struct prom_doc *d)
{
  struct prom_sample s;
  char tok[64];
  memset(&s, 0, sizeof(s));
  s.name = take_name(x, 1);
  if(!s.name)
    return perr(x, "expected a metric name, found '%.*s'",
                x->end - x->p < 20 ? (int)(x->end - x->p) : 20, x->p);
  if(x->p < x->end && *x->p == '{' && parse_labels(x, &s))
    goto fail;
  if(x->p < x->end && *x->p != ' ' && *x->p != '\t') {
    perr(x, "%s: unexpected character '%c' after the name", s.name, *x->p);
    goto fail;
  }
  skip_ws(x);
  if(take_token(x, tok, sizeof(tok)) || parse_value(tok, &s.value)) {
    perr(x, "%s: missing or invalid value", s.name);
    goto fail;
  }
  skip_ws(x);
  if(x->p < x->end) {
    char *e;
    if(take_token(x, tok, sizeof(tok))) {
      perr(x, "%s: invalid timestamp", s.name);
      goto fail;
    }
    s.ts_ms = strtoll(tok, &e, 10);
    if(*e || e == tok) {
      perr(x, "%s: invalid timestamp '%s'", s.name, tok);
      goto fail;
    }
    s.has_ts = 1;
    skip_ws(x);
    if(x->p < x->end) {
      perr(x, "%s: trailing text after the timestamp", s.name);
      goto fail;
    }
  }
  s.family = family_of(d, s.name);
  if(d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 128;
    struct prom_sample *ns = realloc(d->s, cap * sizeof(*ns));
    if(!ns) {
      perr(x, "out of memory");
      goto fail;
    }
    d->s = ns;
    d->cap = cap;
  }
  d->s[d->n++] = s;
  return 0;
fail:
  sample_free(&s);
  return -1;
}

int prom_parse(const char *text, size_t len, struct prom_doc *doc,
               char *err, size_t errlen)
{
  struct pp x = { 0 };
  const char *p = text, *end = text + len;
  x.err = err;
  x.errlen = errlen;
  memset(doc, 0, sizeof(*doc));
  while(p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    x.line++;
    x.p = p;
    x.end = le;
    if(x.end > x.p && x.end[-1] == '\r')
      x.end--;
    if(x.end > x.p && memchr(x.p, '\0', (size_t)(x.end - x.p)))
      return perr(&x, "NUL byte in the text");
    skip_ws(&x);
    if(x.p < x.end) {
      int rc = *x.p == '#' ? parse_comment(&x, doc) : parse_sample(&x, doc);
      if(rc)
        return -1;
    }
    p = nl ? nl + 1 : end;
  }
  return 0;
}

void prom_doc_free(struct prom_doc *doc)
{
  for(size_t i = 0; i < doc->n; i++)
    sample_free(&doc->s[i]);
  free(doc->s);
  for(size_t i = 0; i < doc->nfam; i++) {
    free(doc->fams[i].name);
    free(doc->fams[i].type);
    free(doc->fams[i].help);
  }
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
