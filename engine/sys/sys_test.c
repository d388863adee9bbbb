/*
 * sys_test.c - unit tests for the sys core: CPU lists, PCI classes and
 * paths, sysfs attributes of a recorded H200 node, bounded reads, and the
 * process runner (exit codes, stdin, missing programs, deadlines that kill
 * the whole group, bounded output).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sys.h"

static void test_parsers(void)
{
  unsigned char mask[64] = { 0 };
  char buf[256];
  CHECK(sys_cpulist("0-3,8,10-11\n", mask, sizeof(mask)) == 7);
  CHECK(mask[3] && !mask[4] && mask[8] && mask[11] && !mask[12]);
  CHECK(sys_cpulist("", NULL, 0) == 0);
  CHECK(sys_cpulist("0-", NULL, 0) == -1);
  CHECK(sys_cpulist("3-1", NULL, 0) == -1);
  CHECK(sys_cpulist("1;2", NULL, 0) == -1);
  CHECK(!strcmp(sys_pci_kind(0x030200), "gpu"));
  CHECK(!strcmp(sys_pci_kind(0x030000), "gpu"));
  CHECK(!strcmp(sys_pci_kind(0x020000), "nic"));
  CHECK(!strcmp(sys_pci_kind(0x020700), "infiniband"));
  CHECK(!strcmp(sys_pci_kind(0x010802), "nvme"));
  CHECK(sys_pci_kind(0x010800) == NULL && sys_pci_kind(0x060400) == NULL);
  CHECK(!strcmp(sys_pci_vendor(0x10de), "NVIDIA"));
  CHECK(sys_pci_vendor(0xabcd) == NULL);
  CHECK(sys_pci_of_path("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
                        "/nvme/nvme0/nvme0n1", buf, sizeof(buf)) == 0);
  CHECK(!strcmp(buf, "0000:01:00.0"));
  CHECK(sys_pci_of_path("/sys/devices/virtual/net/lo", buf, 32) == -1);
}

static void test_fixture(void)
{
  const char *gpu = FIXTURES "/gpu-node/sys/bus/pci/devices/0000:00:06.0";
  char buf[256];
  char *text;
  size_t len;
  CHECK(sys_attr(gpu, "class", buf, sizeof(buf)) == 0);
  CHECK(!strcmp(buf, "0x030200"));
  CHECK(sys_attr(gpu, "current_link_speed", buf, sizeof(buf)) == 0);
  CHECK(!strcmp(buf, "32.0 GT/s PCIe"));
  CHECK(sys_link_base(gpu, "driver", buf, sizeof(buf)) == 0);
  CHECK(!strcmp(buf, "nvidia"));
  CHECK(sys_attr(gpu, "no_such_attr", buf, sizeof(buf)) == -1);
  CHECK(sys_link_base(gpu, "class", buf, sizeof(buf)) == -1);
  CHECK(sys_read_file(FIXTURES "/gpu-node/proc/cpuinfo", 0, &text, &len)
        == 0 && len > 1000 && strlen(text) == len);
  free(text);
  errno = 0;
  CHECK(sys_read_file(FIXTURES "/gpu-node/proc/cpuinfo", 100, &text, &len)
        == -1 && errno == EFBIG);
  CHECK(sys_read_file("/nonexistent/x", 0, &text, &len) == -1 &&
        errno == ENOENT);
}

static void run(struct sys_run_result *r, double timeout, const char *in,
                size_t max, char *const argv[])
{
  struct sys_run_opts o = { 0 };
  o.argv = argv;
  o.timeout_s = timeout;
  o.in = in;
  o.in_len = in ? strlen(in) : 0;
  o.max_output = max;
  if(sys_run(&o, r)) {
    perror("sys_run");
    exit(2);
  }
}

static void test_run(void)
{
  struct sys_run_result r;
  {
    char *const a[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
    run(&r, 10, NULL, 0, a);
    CHECK(r.code == 3 && r.signal == 0 && !r.timed_out);
    CHECK(!strcmp(r.out, "out\n") && !strcmp(r.err, "err\n"));
    sys_run_free(&r);
  }
  {
    char *const a[] = { "cat", NULL };
    run(&r, 10, "round trip\n", 0, a);
    CHECK(r.code == 0 && !strcmp(r.out, "round trip\n"));
    sys_run_free(&r);
  }
  {
    char *const a[] = { "strata-no-such-program", "x", NULL };
    run(&r, 10, NULL, 0, a);
    CHECK(r.code == 127 && r.exec_errno == ENOENT);
    CHECK(strstr(r.err, "cannot execute 'strata-no-such-program'") != NULL);
    sys_run_free(&r);
  }
  {
    /* the deadline kills the group: sh and its sleep child */
    char *const a[] = { "sh", "-c", "sleep 30; echo never", NULL };
    run(&r, 0.3, NULL, 0, a);
    CHECK(r.timed_out && r.signal == SIGKILL && r.code == 128 + SIGKILL);
    CHECK(r.duration_s >= 0.3 && r.duration_s < 1.5);
    CHECK(r.out_len == 0);
    sys_run_free(&r);
  }
  {
    char *const a[] = { "head", "-c", "100000", "/dev/zero", NULL };
    run(&r, 10, NULL, 1000, a);
    CHECK(r.code == 0 && r.out_len == 1000 && r.out_truncated);
    sys_run_free(&r);
  }
  {
    /* a background child holding stdout must not hold us to its end */
    char *const a[] = { "sh", "-c", "sleep 5 & echo hi", NULL };
    run(&r, 10, NULL, 0, a);
    CHECK(r.code == 0 && !strcmp(r.out, "hi\n") && r.duration_s < 2);
    sys_run_free(&r);
  }
}

int main(void)
{
  test_parsers();
  test_fixture();
  test_run();
  return check_result("sys_test");
}
