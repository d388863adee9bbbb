/*
 * workload_common.c - clock, CPU sampling and result bookkeeping shared
 * by the workloads (workload_int.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "strata.h"
#include "workload_int.h"

void s3w_clock_start(struct s3w_clock *clk, const struct s3w_params *p)
{
  clk->t_start = strata_now_ns();
  clk->t_measure = clk->t_start + (uint64_t)(p->warmup_s * 1e9);
  clk->t_deadline = p->count ? 0
                  : clk->t_measure + (uint64_t)(p->duration_s * 1e9);
  clk->t_end = clk->t_measure;
}

void s3w_wait_measure(const struct s3w_clock *clk)
{
  for(;;) {
    uint64_t now = strata_now_ns();
    struct timespec ts;
    if(now >= clk->t_measure || strata_stop_flag)
      return;
    ts.tv_sec = (time_t)((clk->t_measure - now) / 1000000000u);
    ts.tv_nsec = (long)((clk->t_measure - now) % 1000000000u);
    nanosleep(&ts, NULL);
  }
}

void s3w_cpu_sample(struct s3w_cpu *c)
{
  struct rusage ru;
  unsigned long long v[10] = { 0 };
  FILE *f;

  memset(c, 0, sizeof(*c));
  if(!getrusage(RUSAGE_SELF, &ru)) {
    c->user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    c->sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  }
  f = fopen("/proc/stat", "r");
  if(!f)
    return;
  /* cpu user nice system idle iowait irq softirq steal guest guest_nice */
  if(fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
            &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
    for(int i = 0; i < 8; i++)
      c->host_all += v[i];
    c->host_busy = c->host_all - v[3] - v[4];
  }
  fclose(f);
}

void s3w_finish(struct s3w_result *res, const struct s3w_clock *clk,
                const struct s3w_cpu *a, const struct s3w_cpu *b)
{
  uint64_t end = clk->t_end > clk->t_measure ? clk->t_end
                                              : strata_now_ns();
  res->elapsed_s = (double)(end - clk->t_measure) / 1e9;
  res->cpu_user_s = b->user_s - a->user_s;
  res->cpu_sys_s = b->sys_s - a->sys_s;
  res->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if(b->host_all > a->host_all)
    res->host_cpu_util = (double)(b->host_busy - a->host_busy) /
                         (double)(b->host_all - a->host_all);
}

int s3w_result_init(struct s3w_result *r)
{
  memset(r, 0, sizeof(*r));
  if(stats_init(&r->lat, 1024) || stats_init(&r->ttfb, 1024) ||
     stats_init(&r->lat_get, 256) || stats_init(&r->lat_put, 256)) {
    s3w_result_free(r);
    return -1;
  }
  return 0;
}

void s3w_result_free(struct s3w_result *r)
{
  stats_free(&r->lat);
  stats_free(&r->ttfb);
  stats_free(&r->lat_get);
  stats_free(&r->lat_put);
}

void s3w_count_error(struct s3w_result *r, long status, const char *code,
                     uint64_t n)
{
  for(int i = 0; i < r->nerr; i++)
    if(r->err[i].status == status && !strcmp(r->err[i].code, code)) {
      r->err[i].count += n;
      return;
    }
  if(r->nerr == S3W_MAX_ERRORS) {
    r->err_other += n;
    return;
  }
  r->err[r->nerr].status = status;
  snprintf(r->err[r->nerr].code, sizeof(r->err[0].code), "%s", code);
  r->err[r->nerr++].count = n;
}

void s3w_record_failure(struct s3w_result *r, const struct s3_req *q,
                        const struct s3_resp *resp)
{
  char code[64];
  r->errors++;
  if(!r->first_error[0])
    s3_describe(q, resp, r->first_error, sizeof(r->first_error));
  if(resp->fail) {
    snprintf(code, sizeof(code), "%s (curl %d)", s3_strfail(resp->fail),
             resp->curl_code);
    s3w_count_error(r, 0, code, 1);
  }
  else
    s3w_count_error(r, resp->status, resp->code[0] ? resp->code : "-", 1);
}

int s3w_result_merge(struct s3w_result *a, const struct s3w_result *b)
{
  a->ops += b->ops;
  a->bytes += b->bytes;
  a->get_ops += b->get_ops;
  a->get_bytes += b->get_bytes;
  a->put_ops += b->put_ops;
  a->put_bytes += b->put_bytes;
  a->warmup_ops += b->warmup_ops;
  a->warmup_bytes += b->warmup_bytes;
  a->prepare_bytes += b->prepare_bytes;
  a->errors += b->errors;
  a->verify_failures += b->verify_failures;
  a->mp_uploads += b->mp_uploads;
  a->gpu_copy_s += b->gpu_copy_s;
  a->err_other += b->err_other;
  for(int i = 0; i < b->nerr; i++)
    s3w_count_error(a, b->err[i].status, b->err[i].code, b->err[i].count);
  if(!a->first_error[0] && b->first_error[0])
    memcpy(a->first_error, b->first_error, sizeof(a->first_error));
  if(stats_merge(&a->lat, &b->lat) || stats_merge(&a->ttfb, &b->ttfb) ||
     stats_merge(&a->lat_get, &b->lat_get) ||
     stats_merge(&a->lat_put, &b->lat_put))
    return -1;
  return 0;
}

int s3w_spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
  pthread_attr_t at;
  int rc;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 512 * 1024);
  rc = pthread_create(t, &at, fn, arg);
  pthread_attr_destroy(&at);
  return rc;
}
