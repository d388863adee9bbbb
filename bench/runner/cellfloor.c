/*
 * cellfloor.c - what a cell costs the engine alone (docs/performance.md,
 * "Runner"): the fork server of engine/core/isolate.c and N cells sent
 * the way the runner sends them (the next one queued before this one is
 * waited for), each child writing an answer of the size a trivial cell's
 * is and exiting.  No Lua runs, nothing is judged or journaled: this is
 * the floor under `strata run` of N trivial cells on this machine, the
 * fork, the exit and the messages between the three processes.
 *   build/cellfloor N [LIBRARY.so ...]
 * dlopens the libraries named first (to map what strata maps), then
 * prints the mappings, the wall time and the CPU time of this process
 * and of its children (the server and every cell), per cell.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "isolate.h"
#include "strata.h"

static const char ANSWER[] = "R{\"notes\":{},\"tables\":{},\"metrics\":{\"v\":92}}";

static int answer(int fd, void *arg)
{
  (void)arg;
  return write(fd, ANSWER, sizeof(ANSWER) - 1) == sizeof(ANSWER) - 1 ? 0 : 1;
}

static double cpu_us(int who)
{
  struct rusage ru;
  getrusage(who, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
  struct isolate_server *s;
  struct isolate_pending *next;
  struct isolate_limits lim;
  double self0, kids0;
  uint64_t t0;
  int n, maps = 0, c, bad = 0;
  FILE *f;

  if(argc < 2 || (n = atoi(argv[1])) <= 0) {
    fprintf(stderr, "usage: cellfloor N [LIBRARY.so ...]\n");
    return 2;
  }
  for(int i = 2; i < argc; i++)
    if(!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL)) {
      fprintf(stderr, "cellfloor: %s\n", dlerror());
      return 1;
    }
  if((f = fopen("/proc/self/maps", "r"))) {
    while((c = fgetc(f)) != EOF)
      maps += c == '\n';
    fclose(f);
  }
  isolate_default_limits(&lim);
  s = isolate_server_start(NULL, NULL, answer, NULL);
  if(!s) {
    fprintf(stderr, "cellfloor: no fork server (pidfd_open)\n");
    return 1;
  }
  self0 = cpu_us(RUSAGE_SELF);
  kids0 = cpu_us(RUSAGE_CHILDREN);
  t0 = strata_now_ns();
  next = isolate_server_send(s, "0", 1, &lim, 1);
  for(int i = 0; i < n && next; i++) {
    struct isolate_pending *p = next;
    struct isolate_result r;
    next = i + 1 < n ? isolate_server_send(s, "0", 1, &lim, 1) : NULL;
    if(isolate_server_wait(p, 10, &lim, NULL, &r) != ISOLATE_OK ||
       r.len != sizeof(ANSWER) - 1)
      bad++;
    free(r.payload);
  }
  double wall = (double)(strata_now_ns() - t0) / 1e3;
  double self = cpu_us(RUSAGE_SELF) - self0;
  isolate_server_stop(s);   /* reaped: its CPU and its cells' count now */
  double kids = cpu_us(RUSAGE_CHILDREN) - kids0;
  printf("cells %d (%d failed), maps %d: wall %.0f us, runner %.0f us, "
         "server and cells %.0f us of CPU a cell\n", n, bad, maps,
         wall / n, self / n, kids / n);
  return bad != 0;
}
