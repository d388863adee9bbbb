-- strata.k8s.r8: RUNBOOK R8 from the pods `strata k8s render` makes.
-- The runner pod requests the site's RDMA resource like the agents, so
-- what it sees is what an RDMA workload pod sees:
--   node     the node's allocatable amount of the resource, from the API
--            (GET /api/v1/nodes/{STRATA_NODE}: the ClusterRole "get nodes")
--   devices  the RDMA devices and port states inside this pod (sysfs,
--            strata.verbs inventory)
--   wire     WRITE bandwidth and latency from this pod to the agent on
--            another node (site.rdma.peer, set from discovery)
-- specs/k8s/R8.lua chooses this path inside a cluster, kubectl otherwise.
local api = require "strata.k8s.api"

local M = {}

-- { allocatable =, capacity = } of resource on node.
function M.node_resource(cfg, node, resource, get)
  local n = api.get_node(cfg, node, get)
  local cap = tonumber((((n.status or {}).capacity) or {})[resource] or 0) or 0
  return { allocatable = api.allocatable(n, resource), capacity = cap }
end

-- Devices and ports in this pod: inventory = verbs.inventory's answer
-- (or {} when the pod sees none); -> active ports, table rows.
function M.pod_ports(inventory)
  local active, rows = 0, {}
  for _, d in ipairs(inventory) do
    for i, p in ipairs(d.ports or {}) do
      if p.state == "PORT_ACTIVE" then active = active + 1 end
      rows[#rows + 1] = { d.name, i, p.state, p.active_mtu or p.mtu, p.link_layer }
    end
  end
  return active, rows
end

return M
