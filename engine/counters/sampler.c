/*
 * sampler.c - the counter sampler: one thread snapshots the local sources
 * every interval, a second one scrapes the Prometheus endpoints (their
 * latest values join each local snapshot).  Per-interval statistics are
 * kept online; the stored series is bounded (halved when full, so a long
 * run keeps its whole span at a coarser step).  Names are fixed by the
 * first snapshot: a counter that appears later is ignored, one that
 * disappears keeps its last value.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "strata.h"

#define PCT_N 6
static const char *const pct_names[PCT_N] = {
  "busy_pct", "user_pct", "system_pct", "iowait_pct", "irq_pct",
  "softirq_pct"
};
#define MAX_ERRORS 16
#define MAX_NAMES 50000
#define MAX_STORE_BYTES ((size_t)256 << 20)

struct cpu_grp {
  long f[CTR_CPU_FIELDS];  /* raw columns */
  long out;                /* first of PCT_N derived columns */
};

struct ctr_sampler {
  struct ctr_opts o;
  struct ctr_prom_src *prom;  /* owned copies */
  char **eth;                 /* owned copy of o.ethtool */
  struct ctr_set cols;        /* names and kinds of every column */
  size_t nraw, n;
  long *hash;                 /* open addressing: column index or -1 */
  size_t hcap;
  struct cpu_grp *grp;
  size_t ngrp;
  struct ctr_reader *rd;      /* the local sources, open */
  struct ctr_set snap;        /* scratch for one snapshot */
  double *first, *prev, *cur;
  uint64_t t0, tprev, tcur;
  double *smin, *smax, *ssum;
  size_t *scnt;
  double *rows, *ts;          /* stored series (raw values) */
  size_t nrows, maxrows, stride, tick;
  /* result */
  double *delta, *rate, *mean, *series, *st;
  unsigned char *keep;
  size_t nt;
  double duration;
  double cpu_s, pcpu_s;       /* CPU time of the two threads */
  /* threads */
  pthread_t th, pth;
  int th_on, pth_on, stop, pstop, stopped;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct ctr_set *platest;    /* one per Prometheus source */
  struct ctr_set *pspare;     /* and the one its next scrape fills */
  unsigned char *pfresh;      /* per source: a scrape no snapshot took yet */
  char *errors[MAX_ERRORS];
  size_t nerrors;
};

static uint64_t fnv(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for(; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static long col_find(const struct ctr_sampler *s, const char *name)
{
  size_t m = s->hcap - 1, i = fnv(name) & m;
  while(s->hash[i] >= 0) {
    if(!strcmp(s->cols.names[s->hash[i]], name))
      return s->hash[i];
    i = (i + 1) & m;
  }
  return -1;
}

static void add_error(struct ctr_sampler *s, const char *msg)
{
  /* called with s->mu held */
  if(s->nerrors < MAX_ERRORS) {
    char *d = strdup(msg);
    if(d)
      s->errors[s->nerrors++] = d;
  }
}

/* Scrape every Prometheus source into platest; errors are kept. */
static int scrape_all(struct ctr_sampler *s, char *err, size_t errlen)
{
  int rc = 0;
  for(size_t i = 0; i < s->o.nprom; i++) {
    struct ctr_prom_src *p = &s->prom[i];
    struct http_req r = { .url = p->url, .timeout_s = p->timeout_s,
                          .bearer = p->bearer, .ca_bundle = p->ca_bundle };
    /* into the set the last scrape but one filled: its names are this
     * one's, kept, not allocated again */
    struct ctr_set *tmp = &s->pspare[i], t;
    char e[512], safe[512], msg[1100];
    ctr_set_clear(tmp);
    if(ctr_scrape_prom(&r, p->name, p->match, p->nmatch, tmp, e,
                        sizeof(e))) {
      http_safe_url(p->url, safe, sizeof(safe));
      snprintf(msg, sizeof(msg), "prometheus %s %s: %s", p->name, safe, e);
      if(err)
        snprintf(err, errlen, "%s", msg);
      pthread_mutex_lock(&s->mu);
      add_error(s, msg);
      pthread_mutex_unlock(&s->mu);
      rc = -1;
      continue;
    }
    pthread_mutex_lock(&s->mu);
    t = s->platest[i];
    s->platest[i] = *tmp;
    *tmp = t;
    s->pfresh[i] = 1;
    pthread_mutex_unlock(&s->mu);
  }
  return rc;
}

/* Local snapshot plus the scrapes that came since the last one, into
 * s->snap.  A scrape's values stand until the next (a second at most, at
 * 10 Hz ticks): absorb() carries what a snapshot leaves out, so each is
 * folded in once rather than at every tick. */
static int take(struct ctr_sampler *s, char *err, size_t errlen)
{
  ctr_set_clear(&s->snap);
  /* the files stay open from the first snapshot on (reader.c) */
  if(!s->rd && ctr_reader_open(s->o.root, s->o.sources, s->o.per_cpu,
                               s->o.ethtool, &s->rd, err, errlen))
    return -1;
  if(ctr_reader_read(s->rd, &s->snap, err, errlen))
    return -1;
  pthread_mutex_lock(&s->mu);
  for(size_t i = 0; i < s->o.nprom; i++) {
    if(!s->pfresh[i])
      continue;
    s->pfresh[i] = 0;
    for(size_t k = 0; k < s->platest[i].n; k++)
      if(ctr_set_add(&s->snap, s->platest[i].names[k],
                     s->platest[i].vals[k], s->platest[i].kinds[k])) {
        pthread_mutex_unlock(&s->mu);
        snprintf(err, errlen, "out of memory");
        return -1;
      }
  }
  pthread_mutex_unlock(&s->mu);
  return 0;
}

static void cpu_pct_between(const struct ctr_sampler *s, const double *a,
                            const double *b, double *out)
{
  for(size_t g = 0; g < s->ngrp; g++) {
    double d[CTR_CPU_FIELDS];
    double *o = out + s->grp[g].out;
    for(int k = 0; k < CTR_CPU_FIELDS; k++)
      d[k] = b[s->grp[g].f[k]] - a[s->grp[g].f[k]];
    ctr_cpu_pct(d, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]);
  }
}

static void store_row(struct ctr_sampler *s, const double *v, double t)
{
  if(s->nrows == s->maxrows) {
    size_t k = 0;
    for(size_t j = 0; j < s->nrows; j += 2, k++) {
      memmove(s->rows + k * s->n, s->rows + j * s->n,
              s->n * sizeof(double));
      s->ts[k] = s->ts[j];
    }
    s->nrows = k;
    s->stride *= 2;
  }
  memcpy(s->rows + s->nrows * s->n, v, s->n * sizeof(double));
  s->ts[s->nrows++] = t;
}

/* Map s->snap into cur (carrying absent values), update stats, store. */
static void absorb(struct ctr_sampler *s, int final)
{
  double dt;
  memcpy(s->cur, s->prev, s->n * sizeof(double));
  for(size_t k = 0; k < s->snap.n; k++) {
    long i = (k < s->nraw && !strcmp(s->cols.names[k], s->snap.names[k]))
             ? (long)k : col_find(s, s->snap.names[k]);
    if(i >= 0)
      s->cur[i] = s->snap.vals[k];
  }
  s->tcur = strata_now_ns();
  dt = (double)(s->tcur - s->tprev) / 1e9;
  if(!final || dt >= s->o.interval_s / 10) {
    double pct[PCT_N * 1024];
    int have_pct = s->ngrp * PCT_N <= sizeof(pct) / sizeof(pct[0]);
    if(have_pct)
      for(size_t g = 0; g < s->ngrp; g++) {
        double d[CTR_CPU_FIELDS];
        for(int k = 0; k < CTR_CPU_FIELDS; k++)
          d[k] = s->cur[s->grp[g].f[k]] - s->prev[s->grp[g].f[k]];
        ctr_cpu_pct(d, &pct[g * PCT_N], &pct[g * PCT_N + 1],
                    &pct[g * PCT_N + 2], &pct[g * PCT_N + 3],
                    &pct[g * PCT_N + 4], &pct[g * PCT_N + 5]);
      }
    for(size_t i = 0; i < s->n; i++) {
      double v;
      if(s->cols.kinds[i] == CTR_COUNTER)
        v = ctr_rate(s->prev[i], s->cur[i], dt);
      else if(s->cols.kinds[i] == CTR_GAUGE)
        v = s->cur[i];
      else if(have_pct)
        v = pct[i - s->nraw];
      else
        continue;
      if(isnan(v))
        continue;
      if(!s->scnt[i] || v < s->smin[i])
        s->smin[i] = v;
      if(!s->scnt[i] || v > s->smax[i])
        s->smax[i] = v;
      s->ssum[i] += v;
      s->scnt[i]++;
    }
  }
  s->tick++;
  if(final && s->nrows > 1 &&
     (double)(s->tcur - s->t0) / 1e9 - s->ts[s->nrows - 1] <
     s->o.interval_s * (double)s->stride / 2) {
    /* a stop just after a tick: widen the last interval rather than end
     * the series on a sliver whose rate is all jiffy rounding */
    s->nrows--;
    store_row(s, s->cur, (double)(s->tcur - s->t0) / 1e9);
  }
  else if(final || s->tick % s->stride == 0)
    store_row(s, s->cur, (double)(s->tcur - s->t0) / 1e9);
  memcpy(s->prev, s->cur, s->n * sizeof(double));
  s->tprev = s->tcur;
}

static void deadline(struct timespec *ts, uint64_t ns)
{
  ts->tv_sec = (time_t)(ns / 1000000000ull);
  ts->tv_nsec = (long)(ns % 1000000000ull);
}

/* Sleep until next (monotonic ns) or until *stop is raised; returns the
 * flag as read under the lock.  Both threads pace themselves with it. */
static int wait_tick(struct ctr_sampler *s, uint64_t next, const int *stop)
{
  struct timespec ts;
  int v;
  deadline(&ts, next);
  pthread_mutex_lock(&s->mu);
  while(!*stop && strata_now_ns() < next)
    if(pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
      break;
  v = *stop;
  pthread_mutex_unlock(&s->mu);
  return v;
}

static double thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sampler_main(void *arg)
{
  struct ctr_sampler *s = arg;
  uint64_t step = (uint64_t)(s->o.interval_s * 1e9), next = s->t0;
  double cpu0 = thread_cpu();
  char err[512];
  for(;;) {
    int stop;
    next += step;
    stop = wait_tick(s, next, &s->stop);
    if(take(s, err, sizeof(err))) {
      pthread_mutex_lock(&s->mu);
      add_error(s, err);
      pthread_mutex_unlock(&s->mu);
      if(stop)
        break;
      continue;
    }
    absorb(s, stop);
    if(stop)
      break;
    if(strata_now_ns() > next + step)
      next = strata_now_ns();  /* fell behind: do not burst */
  }
  s->cpu_s = thread_cpu() - cpu0;
  return NULL;
}

static void *prom_main(void *arg)
{
  struct ctr_sampler *s = arg;
  uint64_t step = (uint64_t)(s->o.prom_interval_s * 1e9);
  uint64_t next = strata_now_ns();
  double cpu0 = thread_cpu();
  for(;;) {
    int stop;
    next += step;
    stop = wait_tick(s, next, &s->pstop);
    (void)scrape_all(s, NULL, 0);  /* the last scrape runs after stop */
    if(stop)
      break;
    if(strata_now_ns() > next + step)
      next = strata_now_ns();
  }
  s->pcpu_s = thread_cpu() - cpu0;
  return NULL;
}

static char *dup_or_null(const char *s)
{
  return s ? strdup(s) : NULL;
}

static int copy_prom(struct ctr_sampler *s)
{
  s->prom = calloc(s->o.nprom ? s->o.nprom : 1, sizeof(*s->prom));
  s->platest = calloc(s->o.nprom ? s->o.nprom : 1, sizeof(*s->platest));
  s->pspare = calloc(s->o.nprom ? s->o.nprom : 1, sizeof(*s->pspare));
  s->pfresh = calloc(s->o.nprom ? s->o.nprom : 1, sizeof(*s->pfresh));
  if(!s->prom || !s->platest || !s->pspare || !s->pfresh)
    return -1;
  for(size_t i = 0; i < s->o.nprom; i++) {
    const struct ctr_prom_src *p = &s->o.prom[i];
    struct ctr_prom_src *q = &s->prom[i];
    q->name = dup_or_null(p->name);
    q->url = dup_or_null(p->url);
    q->bearer = dup_or_null(p->bearer);
    q->ca_bundle = dup_or_null(p->ca_bundle);
    q->timeout_s = p->timeout_s;
    q->nmatch = p->nmatch;
    q->match = calloc(p->nmatch ? p->nmatch : 1, sizeof(char *));
    if(!q->name || !q->url || !q->match)
      return -1;
    for(size_t m = 0; m < p->nmatch; m++)
      if(!(q->match[m] = strdup(p->match[m])))
        return -1;
    ctr_set_init(&s->platest[i]);
    ctr_set_init(&s->pspare[i]);
  }
  s->o.prom = NULL;
  if(s->o.ethtool) {
    size_t n = 0;
    while(s->o.ethtool[n])
      n++;
    s->eth = calloc(n + 1, sizeof(char *));
    if(!s->eth)
      return -1;
    for(size_t i = 0; i < n; i++)
      if(!(s->eth[i] = strdup(s->o.ethtool[i])))
        return -1;
    s->o.ethtool = s->eth;
  }
  return 0;
}

/* Columns from the first snapshot, then the derived CPU percentages. */
static int build_columns(struct ctr_sampler *s)
{
  s->nraw = s->snap.n;
  for(size_t i = 0; i < s->snap.n; i++)
    if(ctr_set_add(&s->cols, s->snap.names[i], 0, s->snap.kinds[i]))
      return -1;
  for(size_t i = 0; i + CTR_CPU_FIELDS <= s->nraw; i++) {
    const char *nm = s->cols.names[i];
    size_t L = strlen(nm);
    struct cpu_grp *g;
    char pre[128];
    if(strncmp(nm, "cpu.", 4) || L < 5 || strcmp(nm + L - 5, ".user"))
      continue;
    g = realloc(s->grp, (s->ngrp + 1) * sizeof(*g));
    if(!g)
      return -1;
    s->grp = g;
    g = &s->grp[s->ngrp++];
    snprintf(pre, sizeof(pre), "%.*s", (int)(L - 5), nm);
    for(int k = 0; k < CTR_CPU_FIELDS; k++)
      g->f[k] = (long)i + k;
    g->out = (long)s->cols.n - (long)s->nraw;
    for(int k = 0; k < PCT_N; k++) {
      char name[200];
      snprintf(name, sizeof(name), "%s.%s", pre, pct_names[k]);
      if(ctr_set_add(&s->cols, name, 0, CTR_PCT))
        return -1;
    }
  }
  s->n = s->cols.n;
  for(s->hcap = 16; s->hcap < s->n * 2; s->hcap *= 2)
    ;
  s->hash = malloc(s->hcap * sizeof(long));
  if(!s->hash)
    return -1;
  for(size_t i = 0; i < s->hcap; i++)
    s->hash[i] = -1;
  for(size_t i = 0; i < s->n; i++) {
    size_t m = s->hcap - 1, h = fnv(s->cols.names[i]) & m;
    while(s->hash[h] >= 0)
      h = (h + 1) & m;
    s->hash[h] = (long)i;
  }
  return 0;
}

int ctr_sampler_start(const struct ctr_opts *o, struct ctr_sampler **out,
                      char *err, size_t errlen)
{
  struct ctr_sampler *s = calloc(1, sizeof(*s));
  pthread_condattr_t ca;
  size_t n;

  *out = NULL;
  if(!s) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  s->o = *o;
  if(!s->o.root)
    s->o.root = "";
  if(s->o.prom_interval_s <= 0)
    s->o.prom_interval_s = o->interval_s > 1 ? o->interval_s : 1;
  pthread_mutex_init(&s->mu, NULL);
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cv, &ca);
  pthread_condattr_destroy(&ca);
  ctr_set_init(&s->cols);
  ctr_set_init(&s->snap);
  s->stride = 1;
  if(copy_prom(s)) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if(scrape_all(s, err, errlen))
    goto fail;
  s->nerrors = 0;  /* reported through the raise above, not twice */
  if(take(s, err, errlen))
    goto fail;
  if(build_columns(s)) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  n = s->n;
  if(n > MAX_NAMES) {
    snprintf(err, errlen, "%zu counters is too many (limit %d): narrow "
             "sources or the Prometheus match patterns", n, MAX_NAMES);
    goto fail;
  }
  s->maxrows = o->max_samples ? o->max_samples : 4096;
  if(s->maxrows * n * sizeof(double) > MAX_STORE_BYTES)
    s->maxrows = MAX_STORE_BYTES / (n * sizeof(double) + 1);
  if(s->maxrows < 16)
    s->maxrows = 16;
  s->first = calloc(n, sizeof(double));
  s->prev = calloc(n, sizeof(double));
  s->cur = calloc(n, sizeof(double));
  s->smin = calloc(n, sizeof(double));
  s->smax = calloc(n, sizeof(double));
  s->ssum = calloc(n, sizeof(double));
  s->scnt = calloc(n, sizeof(size_t));
  s->rows = malloc(s->maxrows * n * sizeof(double) + 1);
  s->ts = malloc(s->maxrows * sizeof(double));
  if(!s->first || !s->prev || !s->cur || !s->smin || !s->smax || !s->ssum ||
     !s->scnt || !s->rows || !s->ts) {
    snprintf(err, errlen, "out of memory (%zu counters)", n);
    goto fail;
  }
  for(size_t i = 0; i < s->snap.n; i++)
    s->prev[i] = s->snap.vals[i];
  memcpy(s->first, s->prev, n * sizeof(double));
  s->t0 = s->tprev = strata_now_ns();
  store_row(s, s->prev, 0);
  if(pthread_create(&s->th, NULL, sampler_main, s)) {
    snprintf(err, errlen, "pthread_create: %s", strerror(errno));
    goto fail;
  }
  s->th_on = 1;
  if(s->o.nprom) {
    if(pthread_create(&s->pth, NULL, prom_main, s)) {
      snprintf(err, errlen, "pthread_create: %s", strerror(errno));
      goto fail;
    }
    s->pth_on = 1;
  }
  *out = s;
  return 0;
fail:
  ctr_sampler_free(&s);
  return -1;
}

static int delta_cmp_desc(const void *a, const void *b, void *arg)
{
  const double *d = arg;
  long x = *(const long *)a, y = *(const long *)b;
  return d[y] > d[x] ? 1 : d[y] < d[x] ? -1 : 0;
}

static void compute(struct ctr_sampler *s)
{
  size_t n = s->n;
  double *pct_all = calloc(n, sizeof(double));
  long *intr = calloc(n, sizeof(long));
  size_t nintr = 0;

  s->duration = (double)(s->tprev - s->t0) / 1e9;
  s->delta = calloc(n, sizeof(double));
  s->rate = calloc(n, sizeof(double));
  s->mean = calloc(n, sizeof(double));
  s->keep = calloc(n, 1);
  s->nt = s->nrows > 1 ? s->nrows - 1 : 0;
  s->series = malloc((s->nt ? s->nt : 1) * n * sizeof(double));
  s->st = malloc((s->nt ? s->nt : 1) * sizeof(double));
  if(!pct_all || !intr || !s->delta || !s->rate || !s->mean || !s->keep ||
     !s->series || !s->st) {
    free(pct_all);
    free(intr);
    s->n = 0;  /* an empty result rather than a crash */
    return;
  }
  cpu_pct_between(s, s->first, s->prev, pct_all);
  for(size_t i = 0; i < n; i++) {
    int k = s->cols.kinds[i];
    if(k == CTR_PCT)
      s->delta[i] = pct_all[i - s->nraw];
    else if(k == CTR_COUNTER && s->prev[i] < s->first[i])
      s->delta[i] = s->prev[i];
    else
      s->delta[i] = s->prev[i] - s->first[i];
    s->rate[i] = k == CTR_COUNTER && s->duration > 0
                 ? s->delta[i] / s->duration : NAN;
    s->mean[i] = s->scnt[i] ? s->ssum[i] / (double)s->scnt[i]
                 : (k == CTR_COUNTER ? s->rate[i] : s->delta[i]);
    if(!s->scnt[i])
      s->smin[i] = s->smax[i] = s->mean[i];
    s->keep[i] = 1;
    if(!strncmp(s->cols.names[i], "intr.", 5) &&
       strcmp(s->cols.names[i], "intr.total")) {
      s->keep[i] = s->o.intr_top < 0 ||
                   (s->o.intr_match &&
                    !fnmatch(s->o.intr_match, s->cols.names[i] + 5, 0));
      intr[nintr++] = (long)i;
    }
  }
  if(s->o.intr_top > 0) {
    qsort_r(intr, nintr, sizeof(long), delta_cmp_desc, s->delta);
    for(size_t j = 0; j < nintr && j < (size_t)s->o.intr_top; j++)
      if(s->delta[intr[j]] > 0)
        s->keep[intr[j]] = 1;
  }
  for(size_t j = 0; j < s->nt; j++) {
    const double *a = s->rows + j * n, *b = s->rows + (j + 1) * n;
    double *o = s->series + j * n;
    double dt = s->ts[j + 1] - s->ts[j];
    s->st[j] = s->ts[j + 1];
    cpu_pct_between(s, a, b, o + s->nraw);
    for(size_t i = 0; i < s->nraw; i++)
      o[i] = s->cols.kinds[i] == CTR_COUNTER ? ctr_rate(a[i], b[i], dt)
                                             : b[i];
  }
  free(pct_all);
  free(intr);
}

void ctr_sampler_stop(struct ctr_sampler *s)
{
  if(s->stopped)
    return;
  s->stopped = 1;
  if(s->pth_on) {
    pthread_mutex_lock(&s->mu);
    s->pstop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->pth, NULL);
    s->pth_on = 0;
  }
  if(s->th_on) {
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    s->th_on = 0;
  }
  compute(s);
}

void ctr_sampler_result(const struct ctr_sampler *s, struct ctr_result *r)
{
  memset(r, 0, sizeof(*r));
  r->duration_s = s->duration;
  r->n = s->delta ? s->n : 0;
  r->names = (const char *const *)s->cols.names;
  r->kinds = s->cols.kinds;
  r->keep = s->keep;
  r->delta = s->delta;
  r->rate = s->rate;
  r->min = s->smin;
  r->mean = s->mean;
  r->max = s->smax;
  r->nt = s->nt;
  r->t = s->st;
  r->series = s->series;
  r->ticks = s->tick;
  r->cpu_s = s->cpu_s + s->pcpu_s;
  r->nerrors = s->nerrors;
  r->errors = (const char *const *)s->errors;
}

void ctr_sampler_free(struct ctr_sampler **sp)
{
  struct ctr_sampler *s = *sp;
  if(!s)
    return;
  if(s->th_on || s->pth_on) {
    s->stopped = 0;
    ctr_sampler_stop(s);
  }
  for(size_t i = 0; s->prom && i < s->o.nprom; i++) {
    struct ctr_prom_src *p = &s->prom[i];
    if(p->bearer)
      memset(p->bearer, 0, strlen(p->bearer));
    free(p->name);
    free(p->url);
    free(p->bearer);
    free(p->ca_bundle);
    for(size_t m = 0; p->match && m < p->nmatch; m++)
      free(p->match[m]);
    free(p->match);
    if(s->platest)
      ctr_set_free(&s->platest[i]);
    if(s->pspare)
      ctr_set_free(&s->pspare[i]);
  }
  free(s->prom);
  free(s->platest);
  free(s->pspare);
  free(s->pfresh);
  ctr_reader_close(&s->rd);
  for(size_t i = 0; s->eth && s->eth[i]; i++)
    free(s->eth[i]);
  free(s->eth);
  for(size_t i = 0; i < s->nerrors; i++)
    free(s->errors[i]);
  ctr_set_free(&s->cols);
  ctr_set_free(&s->snap);
  free(s->hash);
  free(s->grp);
  free(s->first);
  free(s->prev);
  free(s->cur);
  free(s->smin);
  free(s->smax);
  free(s->ssum);
  free(s->scnt);
  free(s->rows);
  free(s->ts);
  free(s->delta);
  free(s->rate);
  free(s->mean);
  free(s->series);
  free(s->st);
  free(s->keep);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
  *sp = NULL;
}

void ctr_cpu_pct(const double d[CTR_CPU_FIELDS], double *busy, double *user,
                 double *system, double *iowait, double *irq,
                 double *softirq)
{
  /* idle and iowait can step back a tick on NO_HZ kernels: clamp at 0 */
  double c[CTR_CPU_FIELDS], total = 0;
  for(int i = 0; i < CTR_CPU_FIELDS; i++) {
    c[i] = d[i] > 0 ? d[i] : 0;
    total += c[i];
  }
  if(total <= 0) {
    *busy = *user = *system = *iowait = *irq = *softirq = 0;
    return;
  }
  *busy = 100.0 * (total - c[3] - c[4]) / total;
  if(*busy > 100.0)
    *busy = 100.0;  /* rounding of (a + b) / (a + b) */
  *user = 100.0 * (c[0] + c[1]) / total;
  *system = 100.0 * c[2] / total;
  *iowait = 100.0 * c[4] / total;
  *irq = 100.0 * c[5] / total;
  *softirq = 100.0 * c[6] / total;
}

double ctr_rate(double a, double b, double dt)
{
  if(!(dt > 0))
    return NAN;
  if(b < a)
    return b / dt;  /* reset or wrap: count from zero */
  return (b - a) / dt;
}
