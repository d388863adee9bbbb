-- NUMA locality of GPUs, NICs and NVMe (the storage-layout source
-- document: decide RAID0 of all NVMe vs NUMA-local 4+4 from where the
-- devices sit).  Reads /sys: each device's numa_node (-1, no NUMA
-- information, counts as node 0 on a one-node host).  Judged: every GPU
-- has a NIC on its own NUMA node (the RDMA path stays off the socket
-- interconnect).  NVMe locality is reported, and judged when the site
-- file sets gpu.require_local_nvme.
local core = require "strata.core"

local PCI = "/sys/bus/pci/devices"

local function readf(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- sysfs hex ("0x030200\n"): tonumber(s, 16) refuses the 0x prefix.
local function hex(path)
  return tonumber((readf(path) or ""):match("^%s*(0x%x+)") or "") or 0
end

local function node_of(dev, nodes)
  local n = tonumber(readf(dev .. "/numa_node") or "") or -1
  if n < 0 and nodes <= 1 then n = 0 end
  return n
end

test {
  id = "G5", layer = "gpu", title = "NUMA locality of GPUs, NICs and NVMe",
  tags = { "gpu", "numa", "topology" },
  headline = "gpus_without_local_nic",
  timeout = 30,
  criteria = {
    gpus_without_local_nic = { max = 0 },
    gpus_without_local_nvme_required = { max = 0 },
  },
  run = function(t)
    local nodes = 0
    for _, e in ipairs(core.listdir("/sys/devices/system/node") or {}) do
      if e:match("^node%d+$") then nodes = nodes + 1 end
    end
    -- names by PCI function: the class devices' real paths run through
    -- their PCI device (.../0000:18:00.0/net/eth0, .../virtio2/net/eth0)
    local names = {}
    for _, cls in ipairs { "net", "nvme", "infiniband" } do
      local ok, list = pcall(core.listdir, "/sys/class/" .. cls)
      for _, e in ipairs(ok and list or {}) do
        local real = core.realpath("/sys/class/" .. cls .. "/" .. e) or ""
        local bdf
        for b in real:gmatch("(%x%x%x%x:%x%x:%x%x%.%x)/") do bdf = b end
        if bdf then
          local label = cls == "infiniband" and ("RDMA " .. e) or e
          names[bdf] = (names[bdf] and (names[bdf] .. " ") or "") .. label
        end
      end
    end
    local devs, rows = { gpu = {}, nic = {}, nvme = {} }, {}
    for _, bdf in ipairs(core.listdir(PCI) or {}) do
      local p = PCI .. "/" .. bdf
      local class, vendor = hex(p .. "/class"), hex(p .. "/vendor")
      local kind
      if vendor == 0x10de and (class >> 16) == 0x03 then kind = "gpu"
      elseif (class >> 8) == 0x0108 then kind = "nvme"
      elseif (class >> 8) == 0x0200 or (class >> 8) == 0x0207 then kind = "nic" end
      if kind then
        local n = node_of(p, nodes)
        local list = devs[kind]
        list[#list + 1] = { bdf = bdf, node = n }
        rows[#rows + 1] = { kind, bdf, names[bdf] or "", n }
      end
    end
    if #devs.gpu == 0 then
      t.skip("no NVIDIA GPU on the PCI bus (" .. PCI .. ")")
    end
    local function has(kind, node)
      for _, d in ipairs(devs[kind]) do if d.node == node then return true end end
      return false
    end
    local no_nic, no_nvme = 0, 0
    for _, g in ipairs(devs.gpu) do
      if not has("nic", g.node) then no_nic = no_nic + 1 end
      if not has("nvme", g.node) then no_nvme = no_nvme + 1 end
    end
    t.table("PCI devices by NUMA node", { "kind", "bus id", "name", "NUMA node" }, rows)
    local layout = {}
    for n = 0, math.max(nodes, 1) - 1 do
      local c = {}
      for _, k in ipairs { "gpu", "nic", "nvme" } do
        local x = 0
        for _, d in ipairs(devs[k]) do if d.node == n then x = x + 1 end end
        c[#c + 1] = ("%d %s"):format(x, k == "nvme" and "NVMe" or k:upper())
      end
      layout[#layout + 1] = ("node%d: %s"):format(n, table.concat(c, ", "))
    end
    if #devs.nvme == 0 then t.note("no NVMe on this host") end
    local require_nvme = t.site.gpu and t.site.gpu.require_local_nvme
    return {
      numa_nodes = nodes, gpus = #devs.gpu, nics = #devs.nic, nvmes = #devs.nvme,
      layout = table.concat(layout, "; "),
      gpus_without_local_nic = no_nic, gpus_without_local_nvme = no_nvme,
      gpus_without_local_nvme_required = require_nvme and no_nvme or 0,
    }
  end,
}
