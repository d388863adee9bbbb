-- RUNBOOK R9: NCCL collectives on every GPU of the node, and GPU0<->GPUn
-- pairs, measured with nccl-tests (the reference tool of the NCCL team).
local nccl = require "strata.lib.nccl"
local tool = require "strata.lib.tool"

local HINT = "build NVIDIA/nccl-tests and set site.nccl.tests_dir"

local function gpu_count(t)
  local n = (t.site.nccl or {}).gpus or (t.site.gpu or {}).count
  if not n then t.skip("site.gpu.count is not set: how many GPUs to use") end
  return n
end

local function sweep(t, exe, gpus, env)
  local nc = t.site.nccl or {}
  local r = tool.run({ exe, "-b", tostring(nc.min_bytes or "8"),
                       "-e", tostring(nc.max_bytes or "8G"), "-f", "2",
                       "-g", tostring(gpus), "-c", "1", "-w", "5", "-n", "20" },
                     { timeout = nc.timeout or 500, env = env })
  local p = nccl.parse(r.stdout)
  local rows = {}
  for _, row in ipairs(p.rows) do
    rows[#rows + 1] = { row.size, row.oop.algbw, row.oop.busbw, row.ip.busbw,
                        (row.oop.wrong or 0) + (row.ip.wrong or 0) }
  end
  return p, rows
end

test {
  id = "R9", layer = "nccl", title = "NCCL collectives on all GPUs",
  needs = { "G2" }, tags = { "nccl", "gpu" }, timeout = 600,
  matrix = { op = { "all_reduce", "all_gather", "broadcast", "reduce_scatter" } },
  headline = "busbw_gbs", units = { busbw_gbs = "GB/s", algbw_gbs = "GB/s" },
  criteria = {
    wrong = { eq = 0 },
    busbw_gbs = { min = "site.nccl.busbw_gbs" },
  },
  run = function(t)
    local exe = tool.need(t.cell.op .. "_perf", (t.site.nccl or {}).tests_dir, HINT)
    local p, rows = sweep(t, exe, gpu_count(t))
    t.table(t.cell.op .. " by size",
            { "size (B)", "algbw GB/s", "busbw out-of-place", "busbw in-place", "wrong" },
            rows, { x = 1, y = { 3, 4 }, title = t.cell.op .. " bus bandwidth",
                    x_title = "bytes", y_title = "GB/s" })
    return nccl.summary(p)
  end,
}

test {
  id = "R9P", layer = "nccl", title = "NCCL GPU0 <-> GPUn pairs (sendrecv)",
  needs = { "G2" }, tags = { "nccl", "gpu" }, timeout = 300,
  matrix = { peer = { 1, 2, 3, 4, 5, 6, 7 } },
  headline = "busbw_gbs", units = { busbw_gbs = "GB/s" },
  criteria = {
    wrong = { eq = 0 },
    busbw_gbs = { min = "site.nccl.pair_busbw_gbs" },
  },
  run = function(t)
    local n = gpu_count(t)
    if t.cell.peer >= n then
      t.skip(("GPU%d absent: the site has %d GPUs"):format(t.cell.peer, n))
    end
    local exe = tool.need("sendrecv_perf", (t.site.nccl or {}).tests_dir, HINT)
    local p = sweep(t, exe, 2, { CUDA_VISIBLE_DEVICES = "0," .. t.cell.peer })
    return nccl.summary(p)
  end,
}
