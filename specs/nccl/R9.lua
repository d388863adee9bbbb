-- RUNBOOK R9: NCCL collectives on every GPU of the node (R9), and the
-- GPU-pair matrix of sendrecv beside G3's NVLink/PCIe path (R9P).
--
-- Measured by strata's nccl family (engine/nccl: libnccl loaded at run
-- time, one communicator per GPU in this process, timed and checked as
-- nccl-tests does; docs/nccl.md), or, where the site says
-- nccl.engine: nccl-tests, by NVIDIA/nccl-tests' binaries parsed from
-- their output (strata.lib.nccl).  NVLink multicast (NVLS) stays off:
-- NCCL_NVLS_ENABLE=0 on both paths.
local nccl = require "strata.lib.nccl"
local tool = require "strata.lib.tool"

local HINT = "build NVIDIA/nccl-tests and set site.nccl.tests_dir"
local ENGINES = { strata = true, ["nccl-tests"] = true }

local function site(t) return t.site.nccl or {} end

local function engine(t)
  local e = site(t).engine or "strata"
  if not ENGINES[e] then
    error(("site nccl.engine: '%s' is neither strata nor nccl-tests"):format(e), 0)
  end
  return e
end

local function gpu_count(t)
  local n = site(t).gpus or (t.site.gpu or {}).count
  if not n then t.skip("site.gpu.count is not set: how many GPUs to use") end
  return n
end

-- One sweep of collective op on the GPUs devs (0-based), by either engine.
-- Returns what strata.lib.nccl.parse returns (rows with oop / ip halves).
local function sweep(t, op, devs, max_bytes)
  local nc = site(t)
  local min, max = nc.min_bytes or "8", max_bytes or nc.max_bytes or "8G"
  if engine(t) == "strata" then
    return require("strata.nccl").run {
      op = op, devices = devs, min_bytes = tostring(min),
      max_bytes = tostring(max), factor = 2, warmup = 5, iters = 20,
      dtype = nc.dtype or "float", redop = nc.redop or "sum",
    }
  end
  local exe = tool.need(op .. "_perf", nc.tests_dir, HINT)
  local vis = {}
  for i, d in ipairs(devs) do vis[i] = tostring(d) end
  local r = tool.run({ exe, "-b", tostring(min), "-e", tostring(max), "-f", "2",
                       "-g", tostring(#devs), "-c", "1", "-w", "5", "-n", "20",
                       "-d", nc.dtype or "float", "-o", nc.redop or "sum" },
                     { timeout = nc.timeout or 500,
                       env = { NCCL_NVLS_ENABLE = "0",
                               CUDA_VISIBLE_DEVICES = table.concat(vis, ",") } })
  return nccl.parse(r.stdout)
end

local function all_gpus(n)
  local d = {}
  for i = 0, n - 1 do d[#d + 1] = i end
  return d
end

test {
  id = "R9", layer = "nccl", title = "NCCL collectives on all GPUs",
  needs = { "G2" }, tags = { "nccl", "gpu" }, timeout = 600,
  matrix = { op = { "all_reduce", "all_gather", "broadcast", "reduce_scatter",
                    "reduce", "alltoall" } },
  headline = "busbw_gbs",
  units = { busbw_gbs = "GB/s", algbw_gbs = "GB/s", busbw_inplace_gbs = "GB/s",
            avg_busbw_gbs = "GB/s", max_size = "B" },
  run = function(t)
    local n = gpu_count(t)
    local p = sweep(t, t.cell.op, all_gpus(n))
    t.table(t.cell.op .. " by size", nccl.COLUMNS, nccl.rows(p),
            { x = 1, y = { 4, 5 }, title = t.cell.op .. " bandwidth (out of place)",
              x_title = "bytes", y_title = "GB/s" })
    local m = nccl.summary(p)
    m.engine, m.nccl_version, m.ranks = engine(t), p.version, n
    if n == 1 and nccl.bus_factor(t.cell.op, 1) == 0 then
      t.note(("one rank: %s's bus bandwidth is 0 by definition "
              .. "(factor (n-1)/n); algbw is what was measured"):format(t.cell.op))
    end
    return m
  end,
}

test {
  id = "R9P", layer = "nccl", title = "NCCL GPU-pair matrix (sendrecv) beside the NVLink/PCIe path",
  needs = { "G2" }, tags = { "nccl", "gpu" }, timeout = 1800,
  headline = "min_pair_busbw_gbs",
  units = { min_pair_busbw_gbs = "GB/s", pair_median_gbs = "GB/s",
            pair_reference_gbs = "GB/s", min_pair_ratio = "x" },
  run = function(t)
    local n = gpu_count(t)
    if n < 2 then
      t.skip(("%d GPU: no GPU pair to measure (R9P needs 2 or more)"):format(n))
    end
    local labels = {}
    local ok, inv = pcall(require("strata.cuda").nvml)
    if ok and inv.topology then labels = inv.topology.labels end
    local nc = site(t)
    local pairs = {}
    for i = 0, n - 1 do
      for j = i + 1, n - 1 do
        local p = sweep(t, "sendrecv", { i, j }, nc.pair_max_bytes or "1G")
        local s = nccl.summary(p)
        pairs[#pairs + 1] = { a = i, b = j, busbw = s.busbw_gbs, wrong = s.wrong,
                              path = (labels[i + 1] or {})[j + 1] or "?",
                              size = s.max_size }
      end
    end
    -- how low min_pair_ratio may go is R9P's criterion (thresholds.yaml)
    local j = nccl.pair_ratios(pairs, nc.pair_busbw_gbs)
    local rows = {}
    for _, p in ipairs(pairs) do
      rows[#rows + 1] = { ("GPU%d-GPU%d"):format(p.a, p.b), p.path, p.size,
                          p.busbw, p.ratio, p.wrong }
    end
    t.table("GPU pairs: sendrecv busbw beside the path (G3)",
            { "pair", "path", "size (B)", "busbw GB/s", "x reference", "wrong" },
            rows)
    t.note(("reference %.1f GB/s (%s)"):format(j.reference, j.basis))
    local slow = j.slowest
    return { min_pair_busbw_gbs = j.min, pair_median_gbs = j.median,
             pair_reference_gbs = j.reference, min_pair_ratio = j.min_ratio,
             slowest_pair = slow and ("GPU%d-GPU%d (%s)"):format(slow.a, slow.b,
                                                              slow.path),
             wrong = j.wrong, pairs = #pairs, engine = engine(t) }
  end,
}
