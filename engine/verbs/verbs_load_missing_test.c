/*
 * verbs_load_missing_test.c - a host without libibverbs: the loader is
 * built here to open a SONAME no host has (CMakeLists.txt), and every
 * call fails as libibverbs fails without a device, while opening a device
 * says why in the "no RDMA device: ..." words (VERBS_ENODEV) that make a
 * case SKIP on a host without RDMA.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs.h"
#include "verbs_load.h"

int main(void)
{
  struct verbs_dev d;
  int n = -1;
  enum verbs_code rc;
  const char *want = "no RDMA device: libibverbs.so.0-strata-absent could "
                     "not be loaded: ";

  CHECK(verbs_load() == -1);
  CHECKF(strstr(verbs_load_error(), "libibverbs.so.0-strata-absent could "
                "not be loaded") != NULL, "%s", verbs_load_error());
  CHECKF(strstr(verbs_load_error(), "(Debian package libibverbs1)") != NULL,
         "%s", verbs_load_error());
  CHECK(!verbs_loaded());
  errno = 0;
  CHECK(ibv_get_device_list(&n) == NULL && n == 0 && errno == ENOSYS);
  CHECK(strcmp(ibv_wc_status_str(IBV_WC_SUCCESS), "unknown") == 0);

  rc = verbs_dev_open(&d, NULL, 1, -1);
  CHECKF(rc == VERBS_ENODEV, "%s", verbs_strerror(rc));
  CHECKF(strncmp(verbs_errmsg(), want, strlen(want)) == 0, "%s",
         verbs_errmsg());
  return check_result("verbs_load_missing_test");
}
