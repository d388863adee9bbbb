-- RUNBOOK "four-way comparison": T1 TCP + host memory (B03), T2 RDMA +
-- host memory (B04), T3 TCP + GPU memory (B05), T4 RDMA + GPU memory
-- (B06), same object size and concurrency, and the same for the 64 MiB x 1
-- pair (B01 / B02).  It reads the other tests' results (the s3 specs give
-- the TCP rows), emits the T1-T4 sheet (throughput, CPU, GPU utilisation,
-- p50/p99), the raw wire beside it (B02-wire/B04-wire, R2/R4)
-- and the "RDMA benefit" view: throughput gain + CPU reduction +
-- GPU utilisation gain + latency reduction.  It measures, per pair, on
-- GET: <pair>.throughput_ratio (RDMA / TCP), <pair>.cpu_reduction_pct,
-- <pair>.latency_p99_reduction_pct, <pair>.gpu_util_gain_pct.  The
-- end-to-end rule (RUNBOOK section 32: throughput >= TCP x 1.10 OR CPU
-- >= 20 % lower OR latency >= 10 % better, "pick the KPIs that matter")
-- is the criterion T1T4.benefit (any_of) in specs/thresholds.yaml: a site
-- deletes or adds a KPI there, or switches one off with --set
-- T1T4.benefit.<metric>.min=none.
local lib = require "strata.lib.s3rdma"

local PAIRS = {
  { key = "host", label = "host memory, 256 MiB x 16",
    tcp = { t = "T1", id = "B03" }, rdma = { t = "T2", id = "B04" } },
  { key = "gpu", label = "GPU memory, 256 MiB x 16",
    tcp = { t = "T3", id = "B05" }, rdma = { t = "T4", id = "B06" } },
  { key = "host64", label = "host memory, 64 MiB x 1",
    tcp = { t = "T1", id = "B01" }, rdma = { t = "T2", id = "B02" } },
}

-- The first cell of test id: metrics (or nil) and status.
local function result(t, id)
  local cells = t.results(id) or {}
  local c = cells[1]
  if not c then return nil, "not run" end
  return c.metrics, c.status
end

local function pct_less(tcp, rdma)      -- how much lower RDMA is, in %
  if not tcp or not rdma or tcp <= 0 then return nil end
  return 100 * (tcp - rdma) / tcp
end

local function fmt(v)
  if v == nil then return "" end
  if type(v) == "number" then return math.floor(v * 1000 + 0.5) / 1000 end
  return v
end

test {
  id = "T1T4", layer = "s3rdma", title = "T1-T4: TCP vs RDMA, host vs GPU memory",
  needs = { "B04" },
  tags = { "s3rdma", "comparison" }, timeout = 30,
  headline = "host.throughput_ratio",
  units = { ["host.throughput_ratio"] = "x", ["host.cpu_reduction_pct"] = "%",
            ["host.latency_p99_reduction_pct"] = "%",
            ["gpu.throughput_ratio"] = "x", ["gpu.cpu_reduction_pct"] = "%",
            ["gpu.latency_p99_reduction_pct"] = "%" },
  run = function(t)
    local rows, view, out = {}, {}, {}
    local m_rdma_gbps = {}
    for _, p in ipairs(PAIRS) do
      local m = {}
      for _, side in ipairs { "tcp", "rdma" } do
        local metrics, status = result(t, p[side].id)
        m[side] = metrics
        local x = metrics or {}
        rows[#rows + 1] = {
          p[side].t, side:upper(), p.label, p[side].id, status,
          fmt(x["get.gbps"]), fmt(x["put.gbps"]),
          fmt(x["get.cpu_util_pct"]), fmt(x["put.cpu_util_pct"]),
          fmt(x["get.gpu_util_pct"]), fmt(x["get.lat_p50_ms"]),
          fmt(x["get.lat_p99_ms"]),
        }
      end
      local a, r = m.tcp, m.rdma
      if r and r["get.gbps"] and not m_rdma_gbps[p.key] then
        m_rdma_gbps[p.key] = r["get.gbps"]
      end
      if a and r and a["get.gbps"] and r["get.gbps"] then
        local tr = a["get.gbps"] > 0 and r["get.gbps"] / a["get.gbps"] or nil
        local cpu = pct_less(a["get.cpu_util_pct"], r["get.cpu_util_pct"])
        local lat = pct_less(a["get.lat_p99_ms"], r["get.lat_p99_ms"])
        local gpu = a["get.gpu_util_pct"] and r["get.gpu_util_pct"] and
                    r["get.gpu_util_pct"] - a["get.gpu_util_pct"] or nil
        out[p.key .. ".throughput_ratio"] = tr
        out[p.key .. ".throughput_gain_pct"] = tr and 100 * (tr - 1)
        out[p.key .. ".cpu_reduction_pct"] = cpu
        out[p.key .. ".latency_p99_reduction_pct"] = lat
        out[p.key .. ".gpu_util_gain_pct"] = gpu
        view[#view + 1] = {
          p.tcp.t .. " -> " .. p.rdma.t, p.label, fmt(tr),
          fmt(tr and 100 * (tr - 1)), fmt(cpu), fmt(gpu), fmt(lat),
          "judged by T1T4.benefit (thresholds.yaml)",
        }
      else
        view[#view + 1] = {
          p.tcp.t .. " -> " .. p.rdma.t, p.label, "", "", "", "", "",
          ("not comparable: %s %s, %s %s"):format(
            p.tcp.id, a and "measured" or "has no result",
            p.rdma.id, r and "measured" or "has no result"),
        }
      end
    end
    t.table("T1-T4", { "T", "path", "conditions", "test", "status",
                       "GET Gbit/s", "PUT Gbit/s", "GET CPU %", "PUT CPU %",
                       "GPU util %", "GET p50 ms", "GET p99 ms" }, rows)
    -- The raw wire beside the S3 paths (RUNBOOK section 31): the verbs
    -- family's per-row baselines (B02-wire, B04-wire: RDMA WRITE at the
    -- row's object size and stream count), and the best RDMA WRITE
    -- bandwidth of R2 (host) and R4 (GPU memory).
    local wire = {}
    for _, w in ipairs {
      { "B04-wire", "RDMA WRITE 256 MiB x 16", "host", "wire_gbps", "host" },
      { "B02-wire", "RDMA WRITE 64 MiB x 1", "host64", "wire_gbps", "host64" },
      { "R2", "RDMA WRITE, host memory (best)", "r2", "bw_gbps", "host" },
      { "R4", "RDMA WRITE, GPU memory (best)", "r4", "bw_gbps", "gpu" } } do
      local best
      for _, c in ipairs(t.results(w[1]) or {}) do
        local v = c.metrics and c.metrics[w[4]]
        if type(v) == "number" and (not best or v > best) then best = v end
      end
      local r = m_rdma_gbps[w[5]]
      if best then out["wire." .. w[3] .. "_gbps"] = best end
      wire[#wire + 1] = { w[1], w[2], fmt(best) or "", best and r and
                          fmt(100 * r / best) or "",
                          best and "" or (w[1] .. " not run") }
    end
    t.table("Raw wire", { "test", "path", "best Gbit/s",
                          "RDMA GET as % of it", "note" }, wire)
    t.table("RDMA benefit", { "comparison", "conditions", "throughput x",
                              "throughput gain %", "CPU reduction %",
                              "GPU util gain (pts)", "p99 reduction %",
                              "note" }, view)
    if out["host.throughput_ratio"] == nil then
      t.skip("T1 (B03) and T2 (B04) are not both measured: nothing to "
             .. "compare (run specs/s3 and specs/s3rdma together)")
    end
    return out
  end,
}
