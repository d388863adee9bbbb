/*
 * isolate_test.c - core/isolate.c without Lua: answers, limits, and the
 * wait for the child's exit (ctest isolate_test, label unit).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "isolate.h"
#include "strata.h"

#include "check.h"

static int answer(int fd, void *arg)
{
  (void)arg;
  return write(fd, "R42", 3) == 3 ? 0 : 1;
}

/* Close the pipe, then take 3 ms to exit: the parent must wait for the
 * exit itself, not poll for it in 10 ms steps. */
static int linger(int fd, void *arg)
{
  struct timespec ts = { 0, 3000000 };
  (void)arg;
  if(write(fd, "Rx", 2) != 2)
    return 1;
  close(fd);
  nanosleep(&ts, NULL);
  return 0;
}

static int chatty(int fd, void *arg)
{
  static char buf[1 << 16];
  (void)arg;
  memset(buf, 'x', sizeof(buf));
  for(int i = 0; i < 64; i++)
    if(write(fd, buf, sizeof(buf)) < 0)
      return 1;
  return 0;
}

static int spin(int fd, void *arg)
{
  volatile unsigned long x = 0;
  (void)fd;
  (void)arg;
  for(;;)
    x++;
  return 0;
}

static int hog(int fd, void *arg)
{
  (void)fd;
  (void)arg;
  for(int i = 0; i < 1000; i++) {
    char *p = malloc(8 << 20);
    if(!p)
      return ISOLATE_EXIT_MEMORY;   /* what core_lua.c's allocator reports */
    memset(p, 1, 8 << 20);
  }
  return 0;
}

/* The fork server's state: prepare() counts requests in the server; the
 * child answers the count and the request, so a test sees that what
 * prepare keeps survives from cell to cell (and never reaches here). */
static int prepared;
/* Ask the parent twice (a small and a 1 MiB question); answer both
 * answers' lengths and the first. */
static int asker(int fd, void *arg)
{
  static char big[1 << 20];
  char *a, *b, out[128];
  size_t an, bn;
  int n;
  (void)arg;
  memset(big, 'q', sizeof(big));
  if(isolate_ask("ping", 4, &a, &an) || isolate_ask(big, sizeof(big), &b, &bn))
    return 1;
  n = snprintf(out, sizeof(out), "R%zu:%zu:%s", an, bn, a);
  free(a);
  free(b);
  return write(fd, out, (size_t)n) == n ? 0 : 1;
}

/* Half a question (its length says 100 bytes, 3 come), then nothing: the
 * parent must not wait for the rest past the deadline. */
static int half_asker(int fd, void *arg)
{
  char *a;
  size_t an;
  (void)fd;
  (void)arg;
  if(isolate_ask("x", 1, &a, &an))
    return 1;
  free(a);
  /* the raw socket: as a hostile cell could write to it */
  for(int k = 3; k < 64; k++) {
    uint32_t n = 100;
    if(write(k, &n, 4) == 4) {
      if(write(k, "abc", 3) != 3)
        return 1;
    }
  }
  return spin(fd, arg);
}

static void ask_hook(const char *q, size_t len, char **reply, size_t *rlen,
                     void *arg)
{
  int *asked = arg;
  (*asked)++;
  *reply = malloc(len + 6);
  if(!*reply)
    return;
  memcpy(*reply, "pong:", 5);
  memcpy(*reply + 5, q, len > 4 ? 4 : len);
  *rlen = 5 + (len > 4 ? 4 : len);
}

static void ask_tests(struct isolate_server *s)
{
  struct isolate_result r;
  int asked = 0;
  struct isolate_hooks h = { NULL, 0, ask_hook, &asked };
  char *a;
  size_t an;
  CHECK(isolate_ask("x", 1, &a, &an) == -1 && errno == ENOTCONN);
  CHECK((s ? isolate_server_run(s, "ask", 3, 10, NULL, &h, &r)
           : isolate_run(asker, NULL, 10, NULL, &h, &r)) == ISOLATE_OK);
  CHECK(r.payload && !strcmp(r.payload, "R9:9:pong:ping"));
  CHECK(asked == 2);
  free(r.payload);
  CHECK((s ? isolate_server_run(s, "half", 4, 0.5, NULL, &h, &r)
           : isolate_run(half_asker, NULL, 0.5, NULL, &h, &r)) == ISOLATE_TIMEOUT);
  free(r.payload);
}

static char last_req[64];
static size_t last_len;

static void count(const char *req, size_t len,
                  const struct isolate_limits *lim, int in_child, void *arg)
{
  (void)lim;
  (void)arg;
  prepared++;   /* counted in the child and in the server alike */
  last_len = len;
  snprintf(last_req, sizeof(last_req), "%.*s", (int)len, req);
  if(!in_child && !strcmp(last_req, "kill"))   /* the server, slow to go on */
    nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
}

static int write_all_test(int fd, const char *p, size_t n)
{
  while(n) {
    ssize_t k = write(fd, p, n);
    if(k <= 0)
      return 1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int echo(int fd, void *arg)
{
  char b[128];
  int n;
  (void)arg;
  if(!strcmp(last_req, "spin"))
    return spin(fd, arg);
  if(!strcmp(last_req, "segv")) {
    signal(SIGSEGV, SIG_DFL);   /* (ASan's handler would exit instead) */
    raise(SIGSEGV);
  }
  if(!strcmp(last_req, "chatty"))
    return chatty(fd, arg);
  if(!strcmp(last_req, "linger"))
    return linger(fd, arg);
  if(!strcmp(last_req, "ask"))
    return asker(fd, arg);
  if(!strcmp(last_req, "half"))
    return half_asker(fd, arg);
  if(!strcmp(last_req, "big")) {
    /* more than a pipe holds, at once: read while it runs */
    static char buf[1 << 20];
    memset(buf, 'y', sizeof(buf));
    buf[0] = 'R';
    return write_all_test(fd, buf, sizeof(buf));
  }
  if(last_req[0] == 'L') {   /* a long request: how long it came */
    n = snprintf(b, sizeof(b), "R%zu", last_len);
    return write(fd, b, (size_t)n) == n ? 0 : 1;
  }
  if(!strcmp(last_req, "fds")) {   /* how many fds it was born with */
    DIR *d = opendir("/proc/self/fd");
    int k = -1;   /* (the directory's own) */
    while(d && readdir(d))
      k++;
    if(d)
      closedir(d);
    n = snprintf(b, sizeof(b), "R%d", k - 2);   /* ("." and "..") */
    return write(fd, b, (size_t)n) == n ? 0 : 1;
  }
  if(!strcmp(last_req, "kill")) {   /* the server, before anything else */
    kill(getppid(), SIGKILL);
    pause();
  }
  if(!strcmp(last_req, "nap")) {
    struct timespec ts = { 0, 300000000 };
    nanosleep(&ts, NULL);
  }
  n = snprintf(b, sizeof(b), "R%d:%s:%d", prepared, last_req, (int)getpgid(0) == (int)getpid());
  return write(fd, b, (size_t)n) == n ? 0 : 1;
}

static void server_tests(void)
{
  struct isolate_result r;
  struct isolate_limits lim;
  struct isolate_server *s = isolate_server_start(count, NULL, echo, NULL);
  double best = 1e9;

  CHECK(s != NULL);
  CHECK(isolate_server_alive(s));
  CHECK(isolate_server_run(s, "a", 1, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(r.payload && !strcmp(r.payload, "R1:a:1"));
  free(r.payload);
  CHECK(isolate_server_run(s, "bc", 2, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(r.payload && !strcmp(r.payload, "R2:bc:1"));  /* the server kept count */
  free(r.payload);
  CHECK(prepared == 0);   /* ... there, not here */

  for(int i = 0; i < 20; i++) {
    uint64_t t0 = strata_now_ns();
    CHECK(isolate_server_run(s, "linger", 6, 5, NULL, NULL, &r) == ISOLATE_OK);
    free(r.payload);
    double t = (double)(strata_now_ns() - t0) / 1e9;
    if(t < best)
      best = t;
  }
  printf("server linger: fastest of 20: %.2f ms\n", best * 1e3);
  CHECK(best < 0.0095);

  /* a hung cell: the deadline kills it, the server goes on */
  CHECK(isolate_server_run(s, "spin", 4, 0.3, NULL, NULL, &r) == ISOLATE_TIMEOUT);
  free(r.payload);
  /* a crashing cell */
  CHECK(isolate_server_run(s, "segv", 4, 5, NULL, NULL, &r) == ISOLATE_CRASHED);
  CHECK(r.term_signal == SIGSEGV && !r.lost);
  free(r.payload);
  /* limits travel with the request */
  memset(&lim, 0, sizeof(lim));
  lim.cpu_s = 1;
  CHECK(isolate_server_run(s, "spin", 4, 20, &lim, NULL, &r) == ISOLATE_LIMIT);
  CHECK(r.limit == ISOLATE_LIMIT_CPU && r.cpu_s >= 0.5);
  free(r.payload);
  memset(&lim, 0, sizeof(lim));
  lim.output_bytes = 1 << 20;
  CHECK(isolate_server_run(s, "chatty", 6, 10, &lim, NULL, &r) == ISOLATE_LIMIT);
  CHECK(r.limit == ISOLATE_LIMIT_OUTPUT);
  free(r.payload);
  CHECK(isolate_server_run(s, "d", 1, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(r.payload && !strncmp(r.payload, "R", 1) && strstr(r.payload, ":d:1"));
  free(r.payload);
  ask_tests(s);

  /* the server killed: the next request says so and nothing runs */
  CHECK(kill(isolate_server_pid(s), SIGKILL) == 0);
  {
    siginfo_t si;   /* dead (not reaped: isolate_server_stop does that) */
    CHECK(waitid(P_PID, (id_t)isolate_server_pid(s), &si, WEXITED | WNOWAIT) == 0);
  }
  errno = 0;
  CHECK(isolate_server_run(s, "e", 1, 5, NULL, NULL, &r) == ISOLATE_SYSERR);
  CHECK(errno == ESRCH);
  CHECK(!isolate_server_alive(s));
  isolate_server_stop(s);
}

/* What prepare counted for the cell that answered b ("R<count>:<req>:1"). */
static int count_of(const struct isolate_result *r)
{
  return r->payload && r->payload[0] == 'R' ? atoi(r->payload + 1) : -1;
}

/*
 * Cells sent while one runs wait at the server and start, in the order
 * sent, the moment it has exited; a cell's deadline counts from its
 * start; one taken out of the queue (drop, a stop) never starts.
 */
static void queue_tests(void)
{
  struct isolate_result r;
  struct isolate_pending *a, *b;
  struct isolate_server *s = isolate_server_start(count, NULL, echo, NULL);
  uint64_t t0 = strata_now_ns();

  CHECK(s != NULL);
  /* queued behind a 300 ms cell, with a 200 ms deadline: not a timeout */
  a = isolate_server_send(s, "nap", 3, NULL, 0);
  b = isolate_server_send(s, "b", 1, NULL, 0);
  CHECK(a && b);
  CHECK(isolate_server_wait(a, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(count_of(&r) == 1 && r.started_ns >= t0);
  free(r.payload);
  CHECK(isolate_server_wait(b, 0.2, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(count_of(&r) == 2 && r.payload && strstr(r.payload, ":b:"));
  CHECK(r.started_ns >= t0 + 250000000ull);   /* after the nap, not at send */
  free(r.payload);

  /* waited for out of order: each gets its own answer */
  a = isolate_server_send(s, "x", 1, NULL, 0);
  b = isolate_server_send(s, "y", 1, NULL, 0);
  CHECK(isolate_server_wait(b, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(count_of(&r) == 4 && strstr(r.payload, ":y:"));
  free(r.payload);
  CHECK(isolate_server_wait(a, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(count_of(&r) == 3 && strstr(r.payload, ":x:"));
  free(r.payload);

  /* dropped while queued: never prepared, never run */
  a = isolate_server_send(s, "nap", 3, NULL, 0);
  b = isolate_server_send(s, "z", 1, NULL, 0);
  isolate_server_drop(b);
  CHECK(isolate_server_wait(a, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(count_of(&r) == 5);
  free(r.payload);
  CHECK(isolate_server_run(s, "w", 1, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(count_of(&r) == 6);
  free(r.payload);

  /* a stop ends the running cell and the queued one with it */
  a = isolate_server_send(s, "spin", 4, NULL, 0);
  b = isolate_server_send(s, "q", 1, NULL, 0);
  strata_stop_flag = 1;
  CHECK(isolate_server_wait(a, 5, NULL, NULL, &r) == ISOLATE_INTERRUPTED);
  free(r.payload);
  strata_stop_flag = 0;
  errno = 0;
  CHECK(isolate_server_wait(b, 5, NULL, NULL, &r) == ISOLATE_SYSERR);
  CHECK(errno == ECANCELED);
  CHECK(isolate_server_run(s, "w", 1, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(count_of(&r) == 8);   /* spin was 7; q never came */
  free(r.payload);

  /* a cell queued behind another holds its own fds, none of the
   * other's (the running cell's pidfd and ask socket end) */
  {
    char alone[32];
    struct isolate_hooks hk = { NULL, 0, ask_hook, NULL };
    CHECK(isolate_server_run(s, "fds", 3, 5, NULL, &hk, &r) == ISOLATE_OK);
    snprintf(alone, sizeof(alone), "%s", r.payload ? r.payload : "");
    free(r.payload);
    a = isolate_server_send(s, "nap", 3, NULL, 1);
    b = isolate_server_send(s, "fds", 3, NULL, 1);
    CHECK(isolate_server_wait(a, 5, NULL, &hk, &r) == ISOLATE_OK);
    free(r.payload);
    CHECK(isolate_server_wait(b, 5, NULL, &hk, &r) == ISOLATE_OK);
    CHECK(r.payload && !strcmp(r.payload, alone));
    if(r.payload && strcmp(r.payload, alone))
      printf("fds alone %s, queued %s\n", alone, r.payload);
    free(r.payload);
  }

  /* a request longer than a spare's first read */
  {
    static char lreq[10000];
    memset(lreq, 'L', sizeof(lreq));
    CHECK(isolate_server_run(s, lreq, sizeof(lreq), 5, NULL, NULL, &r) == ISOLATE_OK);
    CHECK(r.payload && !strcmp(r.payload, "R10000"));
    free(r.payload);
    CHECK(isolate_server_run(s, lreq, 4095, 5, NULL, NULL, &r) == ISOLATE_OK);
    CHECK(r.payload && !strcmp(r.payload, "R4095"));
    free(r.payload);
  }

  /* an answer larger than the pipe, written at once */
  CHECK(isolate_server_run(s, "big", 3, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(r.len == 1u << 20 && r.payload[0] == 'R' && r.payload[r.len - 1] == 'y');
  free(r.payload);

  /* the server killed with a cell running and one queued: the running
   * one is lost, the queued one never started (ESRCH: run it elsewhere) */
  a = isolate_server_send(s, "nap", 3, NULL, 0);
  b = isolate_server_send(s, "k", 1, NULL, 0);
  nanosleep(&(struct timespec){ 0, 50000000 }, NULL);   /* the nap began */
  CHECK(kill(isolate_server_pid(s), SIGKILL) == 0);
  CHECK(isolate_server_wait(a, 5, NULL, NULL, &r) == ISOLATE_CRASHED);
  CHECK(r.lost);
  free(r.payload);
  errno = 0;
  CHECK(isolate_server_wait(b, 5, NULL, NULL, &r) == ISOLATE_SYSERR);
  CHECK(errno == ESRCH);
  isolate_server_stop(s);
}

/*
 * A cell that kills the server the moment it starts: the runner must hear
 * it started, or it would run it a second time (ESRCH says "never
 * started: run it elsewhere").  The server says STARTED before it hands
 * the child its request, so a cell never runs unannounced.
 */
static void killer_tests(void)
{
  int lost = 0, runs = 20;
  for(int i = 0; i < runs; i++) {
    struct isolate_result r;
    struct isolate_server *s = isolate_server_start(count, NULL, echo, NULL);
    struct isolate_pending *a, *b;
    CHECK(s != NULL);
    if(!s)
      return;
    a = isolate_server_send(s, "kill", 4, NULL, 0);
    b = i % 2 ? isolate_server_send(s, "q", 1, NULL, 0) : NULL;
    errno = 0;
    if(isolate_server_wait(a, 5, NULL, NULL, &r) == ISOLATE_CRASHED && r.lost)
      lost++;
    else
      fprintf(stderr, "killer %d: not reported lost (errno %d)\n", i, errno);
    free(r.payload);
    if(b) {   /* queued behind it: never started */
      errno = 0;
      CHECK(isolate_server_wait(b, 5, NULL, NULL, &r) == ISOLATE_SYSERR);
      CHECK(errno == ESRCH);
    }
    isolate_server_stop(s);
  }
  CHECK(lost == runs);
}

int main(void)
{
  struct isolate_result r;
  struct isolate_limits lim;
  double best = 1e9;

  CHECK(isolate_run(answer, NULL, 5, NULL, NULL, &r) == ISOLATE_OK);
  CHECK(r.len == 3 && !memcmp(r.payload, "R42", 3));
  free(r.payload);

  for(int i = 0; i < 20; i++) {
    uint64_t t0 = strata_now_ns();
    CHECK(isolate_run(linger, NULL, 5, NULL, NULL, &r) == ISOLATE_OK);
    free(r.payload);
    double s = (double)(strata_now_ns() - t0) / 1e9;
    if(s < best)
      best = s;
  }
  /* the old 10 ms waitpid polling could not be faster than 10 ms here */
  printf("linger: fastest of 20: %.2f ms\n", best * 1e3);
  CHECK(best < 0.0095);

  memset(&lim, 0, sizeof(lim));
  lim.output_bytes = 1 << 20;
  CHECK(isolate_run(chatty, NULL, 10, &lim, NULL, &r) == ISOLATE_LIMIT);
  CHECK(r.limit == ISOLATE_LIMIT_OUTPUT);
  free(r.payload);

  memset(&lim, 0, sizeof(lim));
  lim.cpu_s = 1;
  CHECK(isolate_run(spin, NULL, 20, &lim, NULL, &r) == ISOLATE_LIMIT);
  CHECK(r.limit == ISOLATE_LIMIT_CPU && r.cpu_s >= 0.5);
  free(r.payload);

#if !defined(__SANITIZE_ADDRESS__)
  /* (under ASan RLIMIT_DATA is not set: its shadow memory would count) */
  memset(&lim, 0, sizeof(lim));
  lim.memory_bytes = 64 << 20;
  CHECK(isolate_run(hog, NULL, 20, &lim, NULL, &r) == ISOLATE_LIMIT);
  CHECK(r.limit == ISOLATE_LIMIT_MEMORY);
  free(r.payload);
#else
  (void)hog;
#endif

  CHECK(isolate_run(spin, NULL, 0.3, NULL, NULL, &r) == ISOLATE_TIMEOUT);
  free(r.payload);

  ask_tests(NULL);
  server_tests();
  queue_tests();
  killer_tests();

  return check_result("isolate_test");
}
