-- strata lua tests/k8s/discovery.lua SA_DIR BASE_URL MODE: the API client
-- (lua/strata/k8s/api.lua) against tests/k8s/fake_apiserver.py serving
-- the recorded answers of fixtures/k8s, over TLS with the bearer token.
local api = require "strata.k8s.api"
local render = require "strata.k8s.render"
local k8scmd = require "strata.cmd.k8s"
local sa, base, mode = arg[1], arg[2], arg[3]
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")({ quiet = true })

local cfg = assert(api.in_cluster { sa_dir = sa, base = base })
check(cfg.namespace == "rdma-test", "namespace from the service account dir")
check(cfg.ca_bundle == sa .. "/ca.crt", "cluster CA used")

if mode == "forbid" then
  local ok, err = pcall(api.agents, cfg, render.AGENT_SELECTOR)
  check(not ok and tostring(err):find("HTTP 403: pods is forbidden", 1, true),
        "403 names the Status message: " .. tostring(err))
  os.exit(check.n == 0 and 0 or 1)
end

if mode == "r8" then
  -- R8's pods path on the recorded Node: the resource the node advertises,
  -- the ports the pod sees (an inventory shaped as verbs.inventory's)
  local r8 = require "strata.k8s.r8"
  local nr = r8.node_resource(cfg, "gpu-node-1", "rdma/rdma_shared_device_a")
  check(nr.allocatable == 63 and nr.capacity == 63, "node resource 63/63")
  local gone = r8.node_resource(cfg, "gpu-node-1", "rdma/hca_shared_devices_b")
  check(gone.allocatable == 0, "a resource the node lacks is 0 (R8 then FAILs rdma_allocatable)")
  local ok, err = pcall(r8.node_resource, cfg, "gpu-node-9", "rdma/rdma_shared_device_a")
  check(not ok and tostring(err):find("HTTP 404", 1, true), "unknown node: " .. tostring(err))
  local active, rows = r8.pod_ports { { name = "mlx5_0", ports = {
    { state = "PORT_ACTIVE", active_mtu = 4096, link_layer = "Ethernet" },
    { state = "PORT_DOWN", active_mtu = 1024, link_layer = "Ethernet" } } } }
  check(active == 1 and #rows == 2 and rows[1][1] == "mlx5_0", "pod ports")
  check(r8.pod_ports {} == 0, "no device in the pod: 0 active ports")
  io.stderr:write(check.n == 0 and "r8: ok\n" or "")
  os.exit(check.n == 0 and 0 or 1)
end

local a = api.agents(cfg, render.AGENT_SELECTOR)
check(#a.nodes == 2, "two ready agents, got " .. #a.nodes)
check(a.nodes[1].name == "gpu-node-1" and a.nodes[1].addr == "10.0.0.1"
      and a.nodes[1].port == 18515 and a.nodes[1].pod == "strata-agent-4fq9d",
      "first agent by node name")
check(a.nodes[2].name == "gpu-node-2" and a.nodes[2].addr == "10.0.0.2", "second agent")
check(#a.not_ready == 1 and a.not_ready[1].pod == "strata-agent-m2z8w"
      and a.not_ready[1].why == "phase Pending", "pending agent left out, said why")
check(a.nodes[1].features["app.kubernetes.io/component=agent"], "labels as features")

local alloc = api.allocation(render.AGENT_SELECTOR, { sa_dir = sa, base = base })
check(alloc.nodelist == "gpu-node-1,gpu-node-2" and #alloc.nodes == 2
      and alloc.nodes[2].addr == "10.0.0.2", "the fleet's allocation shape")

local node = api.get_node(cfg, "gpu-node-1")
check(api.allocatable(node, "rdma/rdma_shared_device_a") == 63, "allocatable RDMA resource")
check(api.allocatable(node, "rdma/absent") == 0, "absent resource is 0")

-- the runner's site: peers are the agents, rdma.peer the other node
local s = k8scmd.derive_site({ rdma = { device = "mlx5_0" } }, a, "gpu-node-1", "/t/token")
check(s.rdma.peer == "gpu-node-2", "rdma.peer is an agent on another node")
check(s.peers["gpu-node-2"].host == "10.0.0.2" and s.peers["gpu-node-2"].token_file == "/t/token",
      "peer entry from the pod")
check(#s.roce.senders == 1 and s.roce.senders[1] == "gpu-node-2", "senders")

-- a wrong token is refused by the server: the client says so
local bad = assert(api.in_cluster { sa_dir = sa, base = base })
bad.token_file = sa .. "/namespace"
local ok, err = pcall(api.list_pods, bad, render.AGENT_SELECTOR)
check(not ok and tostring(err):find("HTTP 401", 1, true), "401 reported: " .. tostring(err))

-- not in a pod at all
local none, why = api.in_cluster { sa_dir = sa .. "/absent", base = base }
check(none == nil and why:find("no service account token", 1, true), "no token: " .. tostring(why))
io.stderr:write(check.n == 0 and "discovery: ok\n" or "")
os.exit(check.n == 0 and 0 or 1)
