/*
 * nccl_test.c - hardware-free checks of the nccl family's core: byte
 * counts and bus factors as nccl-tests' src/<coll>.cu, the -b/-e/-f and
 * -i sweeps, the check values staying exact in every type, version text,
 * and the absence paths (no libnccl, a library without NCCL's symbols, no
 * GPU), each in a forked child because the library is loaded once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "coll.h"
#include "../cuda/cuda.h"  /* not the toolkit's cuda.h */
#include "lib.h"
#include "value.h"

static void test_counts(void)
{
  struct nccl_counts c;
  /* all_gather 1 GiB of float on 8 ranks: 32 Mi elements each */
  nccl_coll_counts(NC_ALL_GATHER, (1u << 30) / 4, 4, 8, &c);
  CHECK(c.param == (1u << 30) / 4 / 8 && c.send == c.param);
  CHECK(c.recv == c.param * 8 && c.send_inplace_off == c.param);
  /* rounded down to 16 bytes: 100 floats over 3 ranks -> 32 each */
  nccl_coll_counts(NC_REDUCE_SCATTER, 100, 4, 3, &c);
  CHECK(c.param == 32 && c.send == 96 && c.recv == 32);
  CHECK(c.recv_inplace_off == 32 && c.send_inplace_off == 0);
  nccl_coll_counts(NC_ALLTOALL, 100, 4, 3, &c);
  CHECK(c.param == 32 && c.send == 96 && c.recv == 96);
  /* 8 bytes of float on one rank: all_gather moves 0 (as captured) */
  nccl_coll_counts(NC_ALL_GATHER, 2, 4, 1, &c);
  CHECK(c.send == 0 && c.recv == 0);
  nccl_coll_counts(NC_ALL_REDUCE, 2, 4, 1, &c);
  CHECK(c.send == 2 && c.recv == 2 && c.param == 2);
}

static void test_bw(void)
{
  double a, b;
  CHECK(fabs(nccl_bus_factor(NC_ALL_REDUCE, 8) - 1.75) < 1e-12);
  CHECK(fabs(nccl_bus_factor(NC_ALL_GATHER, 8) - 0.875) < 1e-12);
  CHECK(fabs(nccl_bus_factor(NC_REDUCE_SCATTER, 4) - 0.75) < 1e-12);
  CHECK(fabs(nccl_bus_factor(NC_ALLTOALL, 2) - 0.5) < 1e-12);
  CHECK(nccl_bus_factor(NC_BROADCAST, 8) == 1);
  CHECK(nccl_bus_factor(NC_REDUCE, 8) == 1);
  CHECK(nccl_bus_factor(NC_SENDRECV, 2) == 1);
  CHECK(nccl_bus_factor(NC_ALL_REDUCE, 1) == 0);
  /* 1e9 bytes in 1 s on 4 ranks */
  nccl_coll_bw(NC_ALL_REDUCE, 250000000, 4, 1.0, 4, &a, &b);
  CHECK(fabs(a - 1.0) < 1e-12 && fabs(b - 1.5) < 1e-12);
  /* all_gather: param is one rank's part, algbw counts all of them */
  nccl_coll_bw(NC_ALL_GATHER, 62500000, 4, 1.0, 4, &a, &b);
  CHECK(fabs(a - 1.0) < 1e-12 && fabs(b - 0.75) < 1e-12);
}

static void test_sweep(void)
{
  size_t s[64];
  int n = nccl_sweep_sizes(8, 8ull << 30, 2, 0, s, 64);
  CHECK(n == 31 && s[0] == 8 && s[30] == 8ull << 30);
  n = nccl_sweep_sizes(1 << 20, 4 << 20, 1, 1 << 20, s, 64);
  CHECK(n == 4 && s[3] == 4 << 20);
  n = nccl_sweep_sizes(0, 16, 2, 0, s, 64);   /* 0 does not multiply */
  CHECK(n == 1);
  CHECK(nccl_sweep_sizes(5, 5, 2, 0, NULL, 0) == 1);
}

static void test_values(void)
{
  static const int ranks[] = { 1, 2, 8, 72 };
  for(int d = 0; d < NV_DTYPES; d++)
    for(unsigned k = 0; k < sizeof(ranks) / sizeof(ranks[0]); k++) {
      int n = ranks[k];
      double hi = 0, prod_hi = 0;
      for(uint64_t g = 0; g < 4096; g++) {
        double s = nv_reduced(d, NV_SUM, n, g, 7);
        double p = nv_reduced(d, NV_PROD, n, g, 7);
        hi = s > hi ? s : hi;
        prod_hi = p > prod_hi ? p : prod_hi;
        CHECK(s == floor(s));
      }
      if(n <= (int)nv_sum_limit(d))
        CHECK(hi <= nv_sum_limit(d));
      CHECK(prod_hi <= ldexp(1, nv_prod_ranks(d)));
      CHECK(hi > 0);   /* the values are not all zero */
    }
  /* the seed changes the data: a stale buffer never passes */
  CHECK(nv_value(NV_FLOAT, NV_SUM, 1, 0, 5, 1) !=
        nv_value(NV_FLOAT, NV_SUM, 1, 0, 5, 2) ||
        nv_value(NV_FLOAT, NV_SUM, 1, 0, 6, 1) !=
        nv_value(NV_FLOAT, NV_SUM, 1, 0, 6, 2));
  {
    struct nv_expect e = { .dtype = NV_FLOAT, .op = NV_SUM, .nranks = 4,
                           .chunk = 10, .src_off = 20, .seed = 3 };
    CHECK(nv_expected(&e, 25) == nv_value(NV_FLOAT, NV_SUM, 4, 2, 25, 3));
    e.chunk = 0;
    e.fixed_src = 3;
    CHECK(nv_expected(&e, 5) == nv_value(NV_FLOAT, NV_SUM, 4, 3, 25, 3));
  }
  CHECK(nv_tolerance(NV_FLOAT, NV_SUM, 100) == 0);
  CHECK(nv_tolerance(NV_FLOAT, NV_AVG, 100) > 0);
}

static void test_names(void)
{
  char v[32];
  CHECK(nccl_coll_find("all_reduce") == NC_ALL_REDUCE);
  CHECK(nccl_coll_find("alltoall") == NC_ALLTOALL);
  CHECK(nccl_coll_find("all-reduce") == -1);
  CHECK(nccl_dtype_find("bfloat16") == NV_BFLOAT16);
  CHECK(nccl_op_find("avg") == NV_AVG);
  nccl_version_text(22803, v, sizeof(v));
  CHECK(!strcmp(v, "2.28.3"));
  nccl_version_text(2708, v, sizeof(v));
  CHECK(!strcmp(v, "2.7.8"));
}

/* Run fn in a child with STRATA_NCCL_LIBRARY=lib; its exit code. */
static int in_child(const char *lib, int (*fn)(void))
{
  int st = 0;
  pid_t p = fork();
  if(p == 0) {
    if(lib)
      setenv("STRATA_NCCL_LIBRARY", lib, 1);
    int rc = fn();
    fflush(stdout);
    _exit(rc);
  }
  waitpid(p, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static int load_absent(void)
{
  const struct nccl_api *a;
  char err[512];
  int s = nccl_load(&a, err, sizeof(err));
  printf("  no libnccl: %s\n", err);
  return s == CUDA_ABSENT && a == NULL && strstr(err, "not loadable") ? 0 : 1;
}

static int load_wrong(void)
{
  const struct nccl_api *a;
  char err[512];
  int s = nccl_load(&a, err, sizeof(err));
  printf("  not NCCL: %s\n", err);
  return s == CUDA_ABSENT && strstr(err, "lacks ncclGetVersion") ? 0 : 1;
}

static int run_here(void)
{
  struct nccl_opts o = { .coll = NC_ALL_REDUCE, .dtype = NV_FLOAT,
                         .op = NV_SUM, .ndev = 1, .min_bytes = 8,
                         .max_bytes = 1 << 20, .factor = 2, .iters = 2,
                         .warmup = 1, .check = 1 };
  static struct nccl_result r;
  char err[512];
  const struct nccl_api *a;
  int s;
  if(nccl_load(&a, err, sizeof(err)) == CUDA_OK) {
    char v[32];
    nccl_version_text(a->version, v, sizeof(v));
    printf("  libnccl here: %s (%s)\n", v, a->path);
    if(a->version < 20000)
      return 1;
  }
  s = nccl_run(&o, 1, &r, err, sizeof(err));
  printf("  nccl_run: %s\n", s == CUDA_OK ? "ran" : err);
  if(s == CUDA_OK)   /* a GPU host: the result must be right */
    return r.nrows == 18 && r.rows[17].oop.wrong == 0 ? 0 : 1;
  return s == CUDA_ABSENT ? 0 : 1;
}

int main(void)
{
  test_counts();
  test_bw();
  test_sweep();
  test_values();
  test_names();
  CHECK(in_child("/nonexistent/libnccl.so.2", load_absent) == 0);
  CHECK(in_child("libc.so.6", load_wrong) == 0);
  CHECK(in_child(NULL, run_here) == 0);
  if(check_failures) {
    fprintf(stderr, "nccl_test: %d failure(s)\n", check_failures);
    return 1;
  }
  printf("nccl_test: ok\n");
  return 0;
}
