/*
 * forkbench.c - what the libraries a process maps cost each fork and exit
 * (docs/performance.md, "Runner"): dlopen the libraries named on the
 * command line, then fork N children that _exit(0) at once, each reaped
 * with waitpid; prints the process's mappings and the CPU per fork of the
 * parent (getrusage RUSAGE_SELF) and of the children (RUSAGE_CHILDREN).
 *   cc -O2 -o /tmp/forkbench bench/runner/forkbench.c -ldl
 *   /tmp/forkbench 4000 libibverbs.so.1 liburing.so.2 ...
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
static double us(struct timeval t) { return t.tv_sec * 1e6 + t.tv_usec; }
int main(int argc, char **argv)
{
  if(argc < 2 || atoi(argv[1]) <= 0) {
    fprintf(stderr, "usage: forkbench N [LIBRARY.so ...]\n");
    return 2;
  }
  int n = atoi(argv[1]);
  for(int i = 2; i < argc; i++)
    if(!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL)) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  FILE *f = fopen("/proc/self/maps", "r"); int maps = 0, c;
  while((c = fgetc(f)) != EOF) maps += c == '\n';
  fclose(f);
  struct rusage a, b, ca, cb;
  getrusage(RUSAGE_SELF, &a); getrusage(RUSAGE_CHILDREN, &ca);
  for(int i = 0; i < n; i++) {
    pid_t p = fork();
    if(p == 0) _exit(0);
    waitpid(p, NULL, 0);
  }
  getrusage(RUSAGE_SELF, &b); getrusage(RUSAGE_CHILDREN, &cb);
  printf("maps %d parent %.1f us child %.1f us (libs %d)\n", maps,
         (us(b.ru_utime) + us(b.ru_stime) - us(a.ru_utime) - us(a.ru_stime)) / n,
         (us(cb.ru_utime) + us(cb.ru_stime) - us(ca.ru_utime) - us(ca.ru_stime)) / n, argc - 2);
  return 0;
}
