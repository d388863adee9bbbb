/*
 * inventory_lua.c - verbs.devices() and verbs.inventory(): every RDMA
 * device, its ports (state, physical state, link layer, MTU, speed x width
 * -> line rate), GID table with types, netdev, driver, firmware, NUMA node.
 * No device is not an error here: the list is empty (R1 judges).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>

#include <lua.h>
#include <lauxlib.h>

#include "strata.h"
#include "verbs.h"

static int read_line(const char *path, char *buf, size_t len)
{
  FILE *f = fopen(path, "r");
  size_t n;
  if(!f)
    return -1;
  if(!fgets(buf, (int)len, f)) {
    fclose(f);
    return -1;
  }
  fclose(f);
  n = strlen(buf);
  while(n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
    buf[--n] = '\0';
  return 0;
}

static const char *phys_state_str(uint8_t s)
{
  switch(s) {
  case 1: return "Sleep";
  case 2: return "Polling";
  case 3: return "Disabled";
  case 4: return "PortConfigurationTraining";
  case 5: return "LinkUp";
  case 6: return "LinkErrorRecovery";
  case 7: return "PhyTest";
  default: return "Unknown";
  }
}

static const char *port_state_str(enum ibv_port_state s)
{
  switch(s) {
  case IBV_PORT_NOP: return "PORT_NOP";
  case IBV_PORT_DOWN: return "PORT_DOWN";
  case IBV_PORT_INIT: return "PORT_INIT";
  case IBV_PORT_ARMED: return "PORT_ARMED";
  case IBV_PORT_ACTIVE: return "PORT_ACTIVE";
  case IBV_PORT_ACTIVE_DEFER: return "PORT_ACTIVE_DEFER";
  }
  return "PORT_UNKNOWN";
}

static const char *gid_type_str(uint32_t t)
{
  switch(t) {
  case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
  case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
  default: return "IB";
  }
}

static void push_gids(lua_State *L, struct ibv_context *ctx, uint8_t port,
                      const char **netdev_out, char *netdev, size_t nlen)
{
  struct ibv_gid_entry ents[256];
  ssize_t n = ibv_query_gid_table(ctx, ents, 256, 0);
  int k = 0;

  lua_newtable(L);
  for(ssize_t i = 0; i < n; i++) {
    char txt[INET6_ADDRSTRLEN], ifn[IF_NAMESIZE] = "";
    if(ents[i].port_num != port)
      continue;
    lua_createtable(L, 0, 5);
    strata_set_int(L, "index", ents[i].gid_index);
    inet_ntop(AF_INET6, ents[i].gid.raw, txt, sizeof(txt));
    strata_set_str(L, "gid", txt);
    strata_set_str(L, "type", gid_type_str(ents[i].gid_type));
    if(verbs_gid_is_ipv4(&ents[i].gid)) {
      char v4[INET_ADDRSTRLEN];
      inet_ntop(AF_INET, ents[i].gid.raw + 12, v4, sizeof(v4));
      strata_set_str(L, "ipv4", v4);
    }
    if(ents[i].ndev_ifindex && if_indextoname(ents[i].ndev_ifindex, ifn)) {
      strata_set_str(L, "netdev", ifn);
      if(!*netdev_out) {
        snprintf(netdev, nlen, "%s", ifn);
        *netdev_out = netdev;
      }
    }
    lua_rawseti(L, -2, ++k);
  }
}

static void push_port(lua_State *L, struct ibv_context *ctx,
                      const char *dev, uint8_t p)
{
  struct ibv_port_attr pa;
  char path[PATH_MAX], buf[128], nd[IF_NAMESIZE];
  const char *netdev = NULL;
  union ibv_gid g;
  enum verbs_gid_type gt;
  int gi;

  lua_newtable(L);
  strata_set_int(L, "port", p);
  if(ibv_query_port(ctx, p, &pa)) {
    strata_set_str(L, "state", "UNKNOWN");
    return;
  }
  strata_set_str(L, "state", port_state_str(pa.state));
  strata_set_int(L, "state_num", pa.state);
  strata_set_str(L, "phys_state", phys_state_str(pa.phys_state));
  strata_set_str(L, "link_layer", pa.link_layer == IBV_LINK_LAYER_ETHERNET
                 ? "Ethernet" : "InfiniBand");
  strata_set_int(L, "active_mtu", verbs_mtu_bytes(pa.active_mtu));
  strata_set_int(L, "max_mtu", verbs_mtu_bytes(pa.max_mtu));
  strata_set_int(L, "active_speed", pa.active_speed);
  strata_set_int(L, "active_width", pa.active_width);
  strata_set_num(L, "rate_gbps", verbs_port_rate_gbps(&pa));
  snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/rate",
           dev, p);
  if(!read_line(path, buf, sizeof(buf)))
    strata_set_str(L, "rate", buf);
  strata_set_int(L, "lid", pa.lid);
  strata_set_int(L, "max_msg_sz", pa.max_msg_sz);
  strata_set_int(L, "gid_tbl_len", pa.gid_tbl_len);
  push_gids(L, ctx, p, &netdev, nd, sizeof(nd));
  lua_setfield(L, -2, "gids");
  if(netdev)
    strata_set_str(L, "netdev", netdev);
  if(verbs_gid_select(ctx, p, &gi, &g, &gt) == VERBS_OK)
    strata_set_int(L, "gid_index_auto", gi);
}

static void push_device(lua_State *L, struct ibv_device *d)
{
  const char *name = ibv_get_device_name(d);
  struct ibv_context *ctx = ibv_open_device(d);
  struct ibv_device_attr a;
  char path[PATH_MAX], buf[PATH_MAX];
  ssize_t n;

  lua_newtable(L);
  strata_set_str(L, "name", name);
  strata_set_str(L, "transport", d->transport_type == IBV_TRANSPORT_IB
                 ? "InfiniBand" : d->transport_type == IBV_TRANSPORT_IWARP
                 ? "iWARP" : "other");
  snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/driver",
           name);
  n = readlink(path, buf, sizeof(buf) - 1);
  if(n > 0) {
    buf[n] = '\0';
    strata_set_str(L, "driver", strrchr(buf, '/') ? strrchr(buf, '/') + 1
                                                  : buf);
  }
  else {
    char parent[64];
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/parent", name);
    if(!read_line(path, parent, sizeof(parent))) {
      strata_set_str(L, "driver", "software");
      strata_set_str(L, "parent", parent);
    }
  }
  snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node",
           name);
  strata_set_int(L, "numa_node", read_line(path, buf, sizeof(buf)) ? -1
                 : (lua_Integer)atoi(buf));
  if(!ctx) {
    strata_set_str(L, "error", "cannot open device");
    return;
  }
  if(!ibv_query_device(ctx, &a)) {
    char guid[24];
    uint64_t g = be64toh(a.node_guid);
    snprintf(guid, sizeof(guid), "%04x:%04x:%04x:%04x",
             (unsigned)(g >> 48) & 0xffff, (unsigned)(g >> 32) & 0xffff,
             (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
    strata_set_str(L, "fw_ver", a.fw_ver);
    strata_set_str(L, "node_guid", guid);
    strata_set_int(L, "vendor_id", a.vendor_id);
    strata_set_int(L, "vendor_part_id", a.vendor_part_id);
    strata_set_int(L, "phys_port_cnt", a.phys_port_cnt);
    strata_set_int(L, "max_qp", a.max_qp);
    strata_set_num(L, "max_mr_size", (lua_Number)a.max_mr_size);
    lua_newtable(L);
    for(uint8_t p = 1; p <= a.phys_port_cnt; p++) {
      push_port(L, ctx, name, p);
      lua_rawseti(L, -2, p);
    }
    lua_setfield(L, -2, "ports");
  }
  (void)ibv_close_device(ctx);
}

/* verbs.devices() -> { "rxe0", ... } (empty when none) */
int verbs_l_devices(lua_State *L)
{
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  lua_createtable(L, n > 0 ? n : 0, 0);
  for(int i = 0; list && i < n; i++) {
    lua_pushstring(L, ibv_get_device_name(list[i]));
    lua_rawseti(L, -2, i + 1);
  }
  if(list)
    ibv_free_device_list(list);
  return 1;
}

/* verbs.inventory([name]) -> { {name=, driver=, ports={...}}, ... } */
int verbs_l_inventory(lua_State *L)
{
  const char *only = luaL_optstring(L, 1, NULL);
  int n = 0, k = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  lua_newtable(L);
  for(int i = 0; list && i < n; i++) {
    if(only && strcmp(only, ibv_get_device_name(list[i])))
      continue;
    push_device(L, list[i]);
    lua_rawseti(L, -2, ++k);
  }
  if(list)
    ibv_free_device_list(list);
  return 1;
}
