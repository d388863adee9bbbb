-- H1: the host itself, before anything runs on it.  Inventory (the runner
-- also puts it on the Inventory sheet), every CPU the site expects online,
-- no CPU offline that the site did not allow, NUMA nodes as expected, and
-- a host quiet enough to measure on (1-minute load per online CPU).
-- Site keys (specs/site.example.yaml, host): host.cpus, host.numa_nodes,
-- host.allowed_offline; without them the host is compared with itself
-- (every present CPU online) and a note says so.  host.root reviews a tree
-- recorded by tests/host/record_host.sh instead of this host.
local sys = require "strata.sys"

-- CPUs of a kernel CPU list ("0-3,8") as a set
local function cpuset(list)
  local set, n = {}, 0
  for a, b in (list or ""):gmatch("(%d+)%-?(%d*)") do
    for c = tonumber(a), tonumber(b ~= "" and b or a) do
      if not set[c] then set[c], n = true, n + 1 end
    end
  end
  return set, n
end

test {
  id = "H1", layer = "host", title = "Host inventory and CPU sanity",
  tags = { "host", "inventory" }, timeout = 30,
  headline = "cpus_online",
  units = { mem_total_gib = "GiB" },
  run = function(t)
    local host = t.site.host or {}
    local inv = sys.inventory { root = host.root }
    if host.root then t.note("reviewing the recorded tree " .. host.root) end
    local cpu = inv.cpu
    if not cpu.online_count then
      t.skip("no /sys/devices/system/cpu/online: not a Linux host view")
    end
    local _, present = cpuset(cpu.present)
    local offline = cpuset(cpu.offline)
    local allowed = cpuset(host.allowed_offline)
    local unexpected = 0
    for c in pairs(offline) do
      if not allowed[c] then unexpected = unexpected + 1 end
    end
    local expected = host.cpus
    if expected == nil then
      expected = present
      t.note(("site.host.cpus is not set: expecting all %d present CPUs online"):format(present))
    end
    local nodes_expected = host.numa_nodes
    if nodes_expected == nil then
      nodes_expected = #inv.numa
      t.note("site.host.numa_nodes is not set: recorded only")
    end
    local rows = {}
    for _, n in ipairs(inv.numa) do
      rows[#rows + 1] = { n.node, n.cpus or "", n.cpu_count or 0,
                          (n.mem_total_bytes or 0) / 2 ^ 30 }
    end
    t.table("NUMA nodes", { "node", "cpus", "cpu_count", "mem_gib" }, rows)
    local load1 = inv.loadavg and inv.loadavg[1] or 0
    local os_name = inv.os and (inv.os.pretty_name or inv.os.id) or "?"
    t.note(("%s, kernel %s, %s"):format(os_name, inv.kernel and inv.kernel.release or "?",
                                       cpu.model or "unknown CPU"))
    return {
      hostname = inv.hostname,
      cpu_model = cpu.model,
      sockets = cpu.sockets, cores = cpu.cores, threads = cpu.threads,
      cpus_present = present,
      cpus_online = cpu.online_count,
      cpus_offline = cpu.offline_count or 0,
      cpus_offline_unexpected = unexpected,
      cpus_expected = expected,
      numa_nodes = #inv.numa,
      numa_nodes_expected = nodes_expected,
      mem_total_gib = (inv.memory.total_bytes or 0) / 2 ^ 30,
      load1 = load1,
      load1_per_cpu = load1 / math.max(cpu.online_count, 1),
      gpus = (function()
        local n = 0
        for _, d in ipairs(inv.pci) do if d.kind == "gpu" then n = n + 1 end end
        return n
      end)(),
    }
  end,
}
