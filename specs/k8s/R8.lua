-- RUNBOOK R8: RDMA from inside a Kubernetes pod.  The node advertises the
-- RDMA resource, a pod that requests it sees an active port, and from the
-- pod the wire reaches a remote node at line rate.  Two paths:
--   pods     inside the runner Job of `strata k8s render` (in-cluster API,
--            site.k8s.agents from discovery): the API for the node, this
--            pod's devices, strata's own WRITE bw/lat to an agent on
--            another node (strata.k8s.r8, docs/kubernetes.md)
--   kubectl  from outside: kubectl get node / exec into a pod the site
--            names, perftest to site.k8s.remote
local tool = require "strata.lib.tool"
local perftest = require "strata.lib.perftest"
local cjson = require "cjson"

local function kubectl(t, args, timeout)
  local k = t.site.k8s
  local cmd = { tool.need(k.kubectl or "kubectl", nil, "install kubectl or set site.k8s.kubectl") }
  if k.kubeconfig then cmd[#cmd + 1] = "--kubeconfig=" .. k.kubeconfig end
  if k.context then cmd[#cmd + 1] = "--context=" .. k.context end
  for _, a in ipairs(args) do cmd[#cmd + 1] = a end
  return tool.run(cmd, { timeout = timeout or 60 }).stdout
end

local function in_pod(t, argv, timeout)
  local k = t.site.k8s
  local args = { "exec", "-n", k.namespace or "default", k.pod, "--" }
  for _, a in ipairs(argv) do args[#args + 1] = a end
  return kubectl(t, args, timeout)
end

-- The pods path: this runner pod, the API, an agent on another node.
local function from_pods(t, k)
  local api = require "strata.k8s.api"
  local r8 = require "strata.k8s.r8"
  local verbs = require "strata.verbs"
  local vs = require "strata.lib.verbsite"
  local cfg, why = api.in_cluster()
  if not cfg then t.skip(why) end
  local node = os.getenv("STRATA_NODE") or k.node
  if not node then t.skip("STRATA_NODE (the downward API) and site.k8s.node are unset") end
  local res = k.rdma_resource or "rdma/rdma_shared_device_a"
  local nr = r8.node_resource(cfg, node, res)
  local ok, inv = pcall(verbs.inventory)
  if not ok then
    t.note("no RDMA device inside the pod: " .. tostring(inv))
    inv = {}
  end
  local active, rows = r8.pod_ports(inv)
  t.table("RDMA devices seen in the pod", { "device", "port", "state", "MTU", "link" }, rows)
  local out = { rdma_allocatable = nr.allocatable, rdma_capacity = nr.capacity,
                pod_devices = #inv, pod_active_ports = active }
  local peer, pname = vs.peer(t.site)
  if not peer then
    t.note("no agent on another node: no wire measurement")
    return out
  end
  if active == 0 then return out end
  local o = vs.local_opts(t.site)
  o.op, o.size, o.qps, o.peer = "write", 65536, k.qps or 4, peer
  for a, b in pairs(vs.bw_len(t.site, 65536)) do o[a] = b end
  local bw = verbs.bw(o)
  local lo = vs.local_opts(t.site)
  lo.op, lo.size, lo.iters, lo.peer = "write", 2, (t.site.rdma or {}).lat_iters or 1000, peer
  local lat = verbs.lat(lo)
  t.note(("pods path: node %s (%s allocatable %s), far end agent on %s (%s)")
         :format(node, res, tostring(nr.allocatable), pname, bw.peer))
  out.bw_gbps, out.lat_us, out.lat_p99_us = bw.bw_gbps, lat.median_us, lat.p99_us
  return out
end

test {
  id = "R8", layer = "k8s", title = "RDMA from a Kubernetes pod",
  needs = { "R1" }, tags = { "k8s", "rdma" }, timeout = 300,
  headline = "bw_gbps", units = { bw_gbps = "Gbit/s", lat_us = "us" },
  run = function(t)
    local k = t.site.k8s
    if k and k.agents and os.getenv("KUBERNETES_SERVICE_HOST") then
      return from_pods(t, k)
    end
    if not k or not k.pod or not k.node then
      t.skip("site.k8s.node and site.k8s.pod are not set: no Kubernetes target")
    end
    if not k.remote then t.skip("site.k8s.remote is not set: no perftest server to reach") end
    local node = cjson.decode(kubectl(t, { "get", "node", k.node, "-o", "json" }))
    local res = k.rdma_resource or "rdma/rdma_shared_device_a"
    local alloc = tonumber((((node.status or {}).allocatable) or {})[res] or 0) or 0
    local devs = perftest.parse_devinfo(in_pod(t, { "ibv_devinfo" }))
    local active, rows = 0, {}
    for _, d in ipairs(devs) do
      for _, p in ipairs(d.ports) do
        if p.state == "PORT_ACTIVE" then active = active + 1 end
        rows[#rows + 1] = { d.hca_id, p.port, p.state, p.active_mtu, p.link_layer }
      end
    end
    t.table("RDMA devices seen in the pod", { "device", "port", "state", "MTU", "link" }, rows)
    local dev = k.device or (devs[1] and devs[1].hca_id)
    local common = { "-d", dev, "-x", tostring(k.gid_index or 3), "-F" }
    local bw_args = { "ib_write_bw", "--report_gbits", "-s", "65536", "-n", "5000",
                      "-q", tostring(k.qps or 4) }
    for _, a in ipairs(common) do bw_args[#bw_args + 1] = a end
    bw_args[#bw_args + 1] = k.remote
    local bw = perftest.parse_bw(in_pod(t, bw_args, 120))
    local lat_args = { "ib_write_lat", "-s", "2", "-n", "5000" }
    for _, a in ipairs(common) do lat_args[#lat_args + 1] = a end
    lat_args[#lat_args + 1] = k.remote
    local lat = perftest.parse_lat(in_pod(t, lat_args, 120))
    return {
      rdma_allocatable = alloc, pod_devices = #devs, pod_active_ports = active,
      bw_gbps = perftest.gbps(bw[#bw]), lat_us = lat[#lat].typical,
      lat_p99_us = lat[#lat].p99,
    }
  end,
}
