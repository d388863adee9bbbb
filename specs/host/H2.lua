-- H2: NUMA locality of GPUs, NICs and NVMe (the second source document's
-- advice: decide the scratch layout and NIC pairing from numactl
-- --hardware, lspci -tv, nvidia-smi topo -m and /sys/block/nvme*n1/device/
-- numa_node).  For every GPU, the nearest NIC and the nearest NVMe (same
-- NUMA node first, then the longest shared PCI path) must sit on the GPU's
-- NUMA node; a pair that crosses nodes is counted.  Without a GPU the
-- table is recorded and nothing can cross.
-- Site keys: host.max_cross_numa_pairs (default 0); host.root reviews a
-- tree recorded by tests/host/record_host.sh instead of this host.
local sys = require "strata.sys"
local aff = require "strata.lib.affinity"

-- the device of list nearest to a GPU: same node first, then PCI path
local nearest = aff.nearest

test {
  id = "H2", layer = "host", title = "NUMA locality of GPUs, NICs and NVMe",
  tags = { "host", "numa", "topology" }, timeout = 30,
  headline = "cross_numa_pairs",
  run = function(t)
    local host = t.site.host or {}
    local loc = sys.locality { root = host.root }
    if host.root then t.note("reviewing the recorded tree " .. host.root) end
    local by = { gpu = {}, nic = {}, nvme = {}, rdma = {} }
    local rows = {}
    for _, d in ipairs(loc.devices) do
      table.insert(by[d.kind], d)
      rows[#rows + 1] = { d.kind, d.name, d.pci, d.numa_node,
                          table.concat(d.path, " > ") }
    end
    t.table("Devices and NUMA nodes", { "kind", "name", "pci", "numa_node", "pci_path" }, rows)
    local nodes = {}
    for _, n in ipairs(loc.nodes) do
      nodes[#nodes + 1] = { n.node, n.cpus or "", n.cpu_count or 0,
                            (n.mem_total_bytes or 0) / 2 ^ 30 }
    end
    t.table("NUMA nodes", { "node", "cpus", "cpu_count", "mem_gib" }, nodes)

    -- NICs that carry RDMA count first: they are what NCCL/GPUDirect use
    local nics = #by.rdma > 0 and by.rdma or by.nic
    local cross_nic, cross_nvme, unknown = 0, 0, 0
    local pairs_rows = {}
    for _, g in ipairs(by.gpu) do
      if g.numa_node < 0 then unknown = unknown + 1 end
      local nic, nvme = nearest(g, nics), nearest(g, by.nvme)
      if nic and nic.numa_node ~= g.numa_node then cross_nic = cross_nic + 1 end
      if nvme and nvme.numa_node ~= g.numa_node then cross_nvme = cross_nvme + 1 end
      pairs_rows[#pairs_rows + 1] = {
        g.name, g.numa_node, nic and nic.name or "-", nic and nic.numa_node or "-",
        nvme and nvme.name or "-", nvme and nvme.numa_node or "-" }
    end
    if #pairs_rows > 0 then
      t.table("GPU pairing", { "gpu", "gpu_node", "nearest_nic", "nic_node",
                               "nearest_nvme", "nvme_node" }, pairs_rows)
    end
    -- the GPU each RDMA device's rail uses in R4/R5 (lib/verbsite.lua gpu,
    -- unless the site file names one)
    local rails = {}
    if #by.gpu > 0 then
      local names = {}
      for _, d in ipairs(by.rdma) do names[#names + 1] = d.name end
      local pick = aff.pair_gpus(loc, names)
      for _, n in ipairs(names) do
        local p = pick[n]
        if p then rails[#rails + 1] = { n, p.pci, p.numa_node, p.link, p.why } end
      end
    end
    if #rails > 0 then
      t.table("GPU per RDMA device (R4/R5)", { "device", "gpu", "gpu_node",
                                               "link", "why" }, rails)
    end
    -- NVMe per node: the scratch layout advice (one RAID0, or NUMA-local halves)
    local per_node = {}
    for _, d in ipairs(by.nvme) do
      per_node[d.numa_node] = (per_node[d.numa_node] or 0) + 1
    end
    local parts = {}
    for node, n in pairs(per_node) do parts[#parts + 1] = ("node %d: %d"):format(node, n) end
    table.sort(parts)
    if #by.nvme > 0 then
      t.note(("NVMe per NUMA node: %s%s"):format(table.concat(parts, ", "),
        #parts > 1 and " (a NUMA-local RAID0 per node keeps scratch I/O local)" or ""))
    end
    if #by.gpu == 0 then t.note("no GPU on the PCI bus: locality recorded only") end
    if #loc.nodes <= 1 then
      t.note("one NUMA node: every device is local (numa_node -1 means no affinity info)")
    elseif unknown > 0 then
      t.note(("%d GPU(s) report no NUMA node (numa_node -1) on a %d-node host")
             :format(unknown, #loc.nodes))
    end
    local allowed = host.max_cross_numa_pairs
    if allowed == nil then allowed = 0 end
    return {
      numa_nodes = #loc.nodes,
      gpus = #by.gpu, nics = #by.nic, nvme = #by.nvme, rdma_devices = #by.rdma,
      gpu_nic_cross_numa = cross_nic,
      gpu_nvme_cross_numa = cross_nvme,
      cross_numa_pairs = cross_nic + cross_nvme,
      cross_numa_allowed = allowed,
      gpus_numa_unknown = unknown,
    }
  end,
}
