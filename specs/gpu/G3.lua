-- RUNBOOK G3: GPU topology.  The GPU x GPU matrix as `nvidia-smi topo -m`
-- shows it (X, NV#, PIX, PXB, PHB, NODE, SYS: NVML's common ancestor of
-- each pair and its NVLinks), with CPU and NUMA affinity.  Compared with
-- the site file's gpu.topology (rows of labels) or gpu.topology_file (a
-- saved `nvidia-smi topo -m`), and gpu.numa; without them the matrix is
-- recorded as the baseline, printed ready to paste into the site file.
local cuda = require "strata.cuda"

local function expected(t)
  local g = t.site.gpu or {}
  if g.topology then return g.topology, "site gpu.topology" end
  if g.topology_file then
    local f = io.open(g.topology_file, "r")
    if not f then
      error(("site gpu.topology_file: cannot open %s"):format(g.topology_file))
    end
    local text = f:read("a")
    f:close()
    local ok, parsed = pcall(cuda.topo_parse, text)
    if not ok then error(("%s: %s"):format(g.topology_file, parsed)) end
    return parsed.labels, g.topology_file
  end
end

test {
  id = "G3", layer = "gpu", title = "GPU topology (PCIe/NVLink, NUMA affinity)",
  tags = { "gpu", "topology" },
  headline = "topology_mismatches",
  timeout = 60,
  run = function(t)
    local inv = cuda.nvml()          -- SKIP: no driver / no NVML
    local labels, n = inv.topology.labels, inv.count
    local head, rows, lines = { "" }, {}, {}
    for i = 0, n - 1 do head[#head + 1] = "GPU" .. i end
    head[#head + 1] = "CPU affinity"
    head[#head + 1] = "NUMA node"
    head[#head + 1] = "bus id"
    local nvpairs, minnv = 0, nil
    for i, row in ipairs(labels) do
      local r = { "GPU" .. (i - 1) }
      for j, l in ipairs(row) do
        r[#r + 1] = l
        local nv = tonumber(l:match("^NV(%d+)$"))
        if nv and j > i then
          nvpairs = nvpairs + 1
          minnv = math.min(minnv or nv, nv)
        end
      end
      local g = inv.gpus[i]
      r[#r + 1] = g.cpu_affinity
      r[#r + 1] = g.numa_node
      r[#r + 1] = g.bus_id
      rows[#rows + 1] = r
      lines[#lines + 1] = "[" .. table.concat(row, ", ") .. "]"
    end
    t.table("GPU topology (as nvidia-smi topo -m)", head, rows)
    local want, source = expected(t)
    local mism, baseline = 0, want == nil
    if want then
      if #want ~= n then
        t.note(("%s has %d rows, this host %d GPUs"):format(source, #want, n))
        mism = math.max(#want, n) ^ 2 // 1
      else
        for i = 1, n do
          for j = 1, n do
            local w = tostring(want[i] and want[i][j] or "")
            if w ~= labels[i][j] then
              mism = mism + 1
              t.note(("GPU%d-GPU%d: %s, expected %s (%s)"):format(
                i - 1, j - 1, labels[i][j], w, source))
            end
          end
        end
      end
    else
      t.note("no expected topology in the site file: recorded as the baseline;"
             .. " to pin it, add under gpu: topology: [" ..
             table.concat(lines, ", ") .. "]")
    end
    local numa_mism = 0
    local want_numa = t.site.gpu and t.site.gpu.numa
    if want_numa then
      for i, g in ipairs(inv.gpus) do
        if want_numa[i] ~= g.numa_node then
          numa_mism = numa_mism + 1
          t.note(("GPU%d on NUMA node %s, expected %s"):format(
            i - 1, g.numa_node, tostring(want_numa[i])))
        end
      end
    end
    return {
      gpus = n, topology = table.concat(lines, "; "),
      baseline = baseline, topology_mismatches = mism,
      numa_mismatches = numa_mism,
      nvlink_pairs = nvpairs, min_nvlinks = minnv or 0,
    }
  end,
}
