-- strata.lib.affinity: which GPU sits nearest which NIC, from the PCI
-- paths and NUMA nodes of sys.locality (one reading: H2's table, R4/R5's
-- GPU per rail and `strata site init` all use it).  Nearest means the
-- same NUMA node first, then the longest shared PCI path (root complex,
-- root port, switch ...), the rule the second source document gives for
-- NIC pairing ("nvidia-smi topo -m", "lspci -tv", numa_node).
local M = {}

-- how many leading PCI path elements a and b share
local function shared(a, b)
  local n = 0
  while a[n + 1] and a[n + 1] == b[n + 1] do n = n + 1 end
  return n
end

-- H2's ranking: a shared NUMA node outweighs any shared PCI path
function M.score(a, b)
  local s = shared(a.path or {}, b.path or {})
  if a.numa_node == b.numa_node then s = s + 1000 end
  return s
end

-- The device of list nearest to d (nil for an empty list); ties keep
-- list order.
function M.nearest(d, list)
  local best, score = nil, -1
  for _, x in ipairs(list) do
    local s = M.score(d, x)
    if s > score then best, score = x, s end
  end
  return best
end

-- The path between two devices in `nvidia-smi topo -m`'s words (its
-- legend, fixtures/gpu/h200x4/nvidia-smi-topo-m.txt): SYS across NUMA
-- nodes, NODE across host bridges of one node, PHB through the host
-- bridge, PXB through several PCIe bridges below it, PIX through at most
-- one.  Read from sysfs paths, not from NVML: it works for a NIC and on a
-- recorded tree.  Returns label, the shared bridge (or root) or nil.
function M.link(a, b)
  local pa, pb = a.path or {}, b.path or {}
  local n = shared(pa, pb)
  local na, nb = a.numa_node or -1, b.numa_node or -1
  if na >= 0 and nb >= 0 and na ~= nb then return "SYS" end
  if n == 0 then return "NODE" end
  if n == 1 then return "PHB", pa[1] end
  -- the bridges on the way: each side's below the shared one, plus it
  local crossed = (#pa - n - 1) + (#pb - n - 1) + 1
  return crossed <= 1 and "PIX" or "PXB", pa[n]
end

-- One line on why g is d's GPU: "PXB: both below 0000:01:00.0, NUMA
-- node 0".
function M.why(d, g)
  local label, via = M.link(d, g)
  return ("%s%s, NUMA node %s"):format(label, via and (": both below " .. via) or "",
                                       tostring(g.numa_node))
end

-- The GPU for each named device of loc (sys.locality's table): the
-- nearest GPU no earlier device took, else the nearest (shared, said so),
-- so that eight rails over eight GPUs get eight GPUs, as a node's NCCL
-- rails do.  names: device names in order (site.rdma.devices).  Returns
-- name -> { pci =, numa_node =, link =, why = } (nil for a name loc lacks,
-- or no GPU at all).
function M.pair_gpus(loc, names)
  local gpus, devs = {}, {}
  for _, d in ipairs(loc.devices or {}) do
    if d.kind == "gpu" then gpus[#gpus + 1] = d
    elseif d.kind == "rdma" or d.kind == "nic" then devs[d.name] = devs[d.name] or d end
  end
  local out, taken = {}, {}
  if #gpus == 0 then return out end
  for _, name in ipairs(names) do
    local d = devs[name]
    if d then
      local free = {}
      for _, g in ipairs(gpus) do if not taken[g.pci] then free[#free + 1] = g end end
      local g = M.nearest(d, #free > 0 and free or gpus)
      local why = M.why(d, g)
      if taken[g.pci] then why = why .. ", shared with " .. taken[g.pci] end
      taken[g.pci] = taken[g.pci] or name
      out[name] = { pci = g.pci, numa_node = g.numa_node, link = (M.link(d, g)), why = why }
    end
  end
  return out
end

-- The path between device `name` and the GPU at PCI address `gpu` in
-- loc (sys.locality's table), as M.link labels it; nil when either is
-- not there.
function M.link_of(loc, name, gpu)
  local d, g
  for _, x in ipairs((loc or {}).devices or {}) do
    if x.kind == "gpu" and x.pci == gpu then g = x
    elseif (x.kind == "rdma" or x.kind == "nic") and x.name == name then d = d or x end
  end
  return d and g and (M.link(d, g)) or nil
end

-- A PCI address in sysfs form "0000:1b:00.0" (NVML writes an 8-digit
-- domain "00000000:1B:00.0"); nil for anything else.
function M.bus_id(s)
  if type(s) ~= "string" then return nil end
  local dom, bus, dev, fn = s:match("^(%x+):(%x%x):(%x%x)%.(%x)$")
  if not dom then return nil end
  return ("%04x:%02x:%02x.%x"):format(tonumber(dom, 16), tonumber(bus, 16),
                                      tonumber(dev, 16), tonumber(fn, 16))
end

return M
