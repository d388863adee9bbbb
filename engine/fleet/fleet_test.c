/*
 * fleet_test.c - the process group (fleet.c) without Slurm: lines from
 * several children as they come, stdin fed past a pipe's buffer, exit
 * codes after the output, a hung child killed, a timeout.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "strata.h"
#include "fleet.h"

static void test_lines_and_exits(void)
{
  struct fleet_group g = { 0 };
  char *a[] = { "sh", "-c", "echo one; echo err >&2; printf 'two\\nthree'; "
                "exit 3", NULL };
  char *b[] = { "sh", "-c", "echo b1; kill -9 $$", NULL };
  struct fleet_event ev;
  int lines_a = 0, lines_b = 0, err_a = 0, exit_a = -1, exit_b = -1;
  int got_three = 0, rc;

  CHECK(fleet_spawn(&g, a, NULL, NULL, 0) == 0);
  CHECK(fleet_spawn(&g, b, NULL, NULL, 0) == 1);
  while((rc = fleet_next(&g, 5000, &ev)) == 1) {
    if(ev.kind == FLEET_EV_LINE && ev.proc == 0 && ev.stream == 1) {
      lines_a++;
      if(!strcmp(ev.line, "three"))
        got_three = 1;   /* the last line without '\n' comes at EOF */
    } else if(ev.kind == FLEET_EV_LINE && ev.proc == 0) {
      err_a += !strcmp(ev.line, "err");
    } else if(ev.kind == FLEET_EV_LINE) {
      lines_b += !strcmp(ev.line, "b1");
    } else if(ev.proc == 0) {
      CHECK(lines_a == 3);  /* the exit comes after the output */
      exit_a = ev.code;
    } else {
      exit_b = ev.code;
      CHECK(ev.signal == SIGKILL);
    }
  }
  CHECK(rc == 0 && fleet_running(&g) == 0);
  CHECK(lines_a == 3 && got_three && err_a == 1 && lines_b == 1);
  CHECK(exit_a == 3 && exit_b == 128 + SIGKILL);
  fleet_free(&g);
}

/* 1 MiB of stdin (past the 64 KiB pipe buffer) comes back whole. */
static void test_stdin(void)
{
  struct fleet_group g = { 0 };
  char *argv[] = { "sh", "-c", "wc -c", NULL };
  size_t n = 1u << 20;
  char *in = malloc(n);
  struct fleet_event ev;
  int got = 0;
  CHECK(in != NULL);
  memset(in, 'x', n);
  CHECK(fleet_spawn(&g, argv, NULL, in, n) == 0);
  free(in);
  while(fleet_next(&g, 5000, &ev) == 1)
    if(ev.kind == FLEET_EV_LINE && ev.stream == 1)
      got = atoi(ev.line) == (int)n;
  CHECK(got);
  fleet_free(&g);
}

/* A silent child: next times out; kill ends it with the signal. */
static void test_timeout_and_kill(void)
{
  struct fleet_group g = { 0 };
  char *argv[] = { "sleep", "30", NULL };
  struct fleet_event ev;
  uint64_t t0 = strata_now_ns();
  CHECK(fleet_spawn(&g, argv, NULL, NULL, 0) == 0);
  CHECK(fleet_next(&g, 200, &ev) == 0);
  CHECK(strata_now_ns() - t0 >= 190000000ull);
  fleet_kill(&g, 0, SIGTERM);
  CHECK(fleet_next(&g, 5000, &ev) == 1);
  CHECK(ev.kind == FLEET_EV_EXIT && ev.signal == SIGTERM);
  CHECK(fleet_running(&g) == 0);
  fleet_free(&g);
}

/* A program that does not exist: exit 127, no hang. */
static void test_missing(void)
{
  struct fleet_group g = { 0 };
  char *argv[] = { "strata-no-such-program", NULL };
  struct fleet_event ev;
  CHECK(fleet_spawn(&g, argv, NULL, NULL, 0) == 0);
  CHECK(fleet_next(&g, 5000, &ev) == 1);
  CHECK(ev.kind == FLEET_EV_EXIT && ev.code == 127);
  fleet_free(&g);
}

/* A child that exits while a process it left (in its own session, out
 * of reach of the group kill) holds stdout: the exit still comes, after
 * the drain grace, with the lines written before it. */
static void test_left_behind(void)
{
  struct fleet_group g = { 0 };
  char *argv[] = { "sh", "-c", "echo before; setsid sleep 4 & exit 5", NULL };
  struct fleet_event ev;
  uint64_t t0 = strata_now_ns();
  int lines = 0, code = -1;
  CHECK(fleet_spawn(&g, argv, NULL, NULL, 0) == 0);
  while(fleet_next(&g, 10000, &ev) == 1) {
    if(ev.kind == FLEET_EV_LINE)
      lines += !strcmp(ev.line, "before");
    else
      code = ev.code;
  }
  CHECK(lines == 1 && code == 5);
  CHECK(strata_now_ns() - t0 < 3900000000ull);
  fleet_free(&g);
}

int main(void)
{
  test_left_behind();
  test_lines_and_exits();
  test_stdin();
  test_timeout_and_kill();
  test_missing();
  if(check_failures)
    fprintf(stderr, "fleet_test: %d check_failures\n", check_failures);
  else
    printf("fleet_test: ok\n");
  return check_failures != 0;
}
