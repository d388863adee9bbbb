-- Topology and inventory logic against what an H200 host really said:
-- for every fixtures/gpu/<machine>/, strata's labels (computed from the
-- recorded NVML facts) must equal `nvidia-smi topo -m`'s, and the
-- recorded inventory must agree with nvidia-smi -L and --query-gpu.
-- usage: strata lua tests/gpu/fixtures.lua fixtures/gpu
local cuda = require "strata.cuda"
local core = require "strata.core"
local cjson = require "cjson"
local root = assert(arg[1], "usage: fixtures.lua DIR")
local failures, machines = 0, 0

local function check(cond, fmt, ...)
  if not cond then
    failures = failures + 1
    io.stderr:write("FAIL: ", fmt:format(...), "\n")
  end
end

local slurp = require("strata.sys").read

for _, m in ipairs(core.listdir(root)) do
  local dir = root .. "/" .. m
  if core.stat(dir .. "/strata-nvml.json") == "file" then
    machines = machines + 1
    local inv = cjson.decode(slurp(dir .. "/strata-nvml.json"))
    local smi = cuda.topo_parse(slurp(dir .. "/nvidia-smi-topo-m.txt"))
    check(smi.n == inv.count, "%s: nvidia-smi shows %d GPUs, NVML %d", m, smi.n, inv.count)
    local labels = cuda.topo_labels(inv)
    for i = 1, smi.n do
      for j = 1, smi.n do
        check(labels[i][j] == smi.labels[i][j], "%s: GPU%d-GPU%d strata %s, nvidia-smi %s",
              m, i - 1, j - 1, tostring(labels[i][j]), smi.labels[i][j])
      end
      check(inv.gpus[i].cpu_affinity == smi.cpu_affinity[i],
            "%s: GPU%d CPU affinity %s vs %s", m, i - 1, inv.gpus[i].cpu_affinity,
            smi.cpu_affinity[i])
    end
    -- the live run's own labels agree with the recomputed ones
    check(cjson.encode(inv.topology.labels) == cjson.encode(labels),
          "%s: recorded labels differ from recomputed", m)
    -- nvidia-smi -L: "GPU 0: NVIDIA H200 (UUID: GPU-...)"
    local n = 0
    for idx, name, uuid in slurp(dir .. "/nvidia-smi-L.txt"):gmatch(
        "GPU (%d+): (.-) %(UUID: (GPU%-[%x%-]+)%)") do
      n = n + 1
      local g = inv.gpus[tonumber(idx) + 1]
      check(g and g.name == name and g.uuid == uuid, "%s: GPU %s %s %s differs", m, idx, name, uuid)
    end
    check(n == inv.count, "%s: nvidia-smi -L lists %d GPUs, NVML %d", m, n, inv.count)
    -- --query-gpu csv: index, name, uuid, pci.bus_id, ..., gen cur, gen max, width cur, width max
    local rows = 0
    for line in slurp(dir .. "/nvidia-smi-query.csv"):gmatch("[^\n]+") do
      local f = {}
      for c in (line .. ","):gmatch("%s*(.-)%s*,") do f[#f + 1] = c end
      local idx = tonumber(f[1])
      if idx then
        rows = rows + 1
        local g = inv.gpus[idx + 1]
        check(g.bus_id == f[4]:lower():gsub("^0000(%x%x%x%x:)", "%1"),
              "%s: bus id %s vs %s", m, g.bus_id, f[4])
        check(g.pcie_gen_max == tonumber(f[7]) and g.pcie_width_max == tonumber(f[9]),
              "%s: GPU%d PCIe max Gen%s x%s vs csv Gen%s x%s", m, idx,
              g.pcie_gen_max, g.pcie_width_max, f[7], f[9])
        check(math.abs(g.pcie_max_gbps - cuda.pcie_gbps(g.pcie_gen_max, g.pcie_width_max)) < 1e-9,
              "%s: pcie_max_gbps", m)
      end
    end
    check(rows == inv.count, "%s: csv has %d rows", m, rows)
    -- a damaged copy is refused with its line
    local bad = slurp(dir .. "/nvidia-smi-topo-m.txt"):gsub("\nGPU1[^\n]*", "", 1)
    local ok, err = pcall(cuda.topo_parse, bad)
    check(not ok and tostring(err):find("GPU rows"), "%s: damaged topo accepted: %s", m, tostring(err))
  end
end
check(machines > 0, "no fixture under %s", root)
print(("gpu fixtures: %d machine(s), %d failure(s)"):format(machines, failures))
return failures == 0 and 0 or 1
