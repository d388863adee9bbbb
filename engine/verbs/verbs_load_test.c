/*
 * verbs_load_test.c - libibverbs is not mapped until the engine first
 * calls it, and calls through the loader reach the real library: the
 * strings of rdma-core's libibverbs/enum_strs.c (v44.0: IBV_WC_SUCCESS
 * "success", IBV_PORT_ACTIVE "active"), and a device list (empty on a
 * host without RDMA, or NULL with the library's errno) that frees.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_load.h"

int main(void)
{
  struct ibv_device **list;
  int n = -1;

  CHECK(!verbs_loaded());                   /* nothing has called it yet */
  CHECK(verbs_load() == 0);
  CHECKF(strcmp(verbs_load_error(), "") == 0, "%s", verbs_load_error());
  CHECK(verbs_loaded());
  CHECK(strcmp(ibv_wc_status_str(IBV_WC_SUCCESS), "success") == 0);
  CHECK(strcmp(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
               "transport retry counter exceeded") == 0);
  CHECK(strcmp(ibv_port_state_str(IBV_PORT_ACTIVE), "active") == 0);
  errno = 0;
  list = ibv_get_device_list(&n);
  CHECKF(list != NULL || errno != 0, "NULL list without an errno");
  if(list) {
    CHECK(n >= 0);
    for(int i = 0; i < n; i++)
      CHECK(ibv_get_device_name(list[i]) != NULL);
    ibv_free_device_list(list);
  }
  return check_result("verbs_load_test");
}
