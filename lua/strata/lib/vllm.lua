-- strata.lib.vllm: read the summary `vllm bench serve` (formerly
-- benchmarks/benchmark_serving.py) prints: request and token throughput,
-- TTFT, TPOT and ITL (mean, median, p99, in ms).
local M = {}

local FIELDS = {
  ["Successful requests"] = "completed",
  ["Failed requests"] = "failed",
  ["Benchmark duration (s)"] = "duration_s",
  ["Total input tokens"] = "input_tokens",
  ["Total generated tokens"] = "output_tokens",
  ["Request throughput (req/s)"] = "req_per_s",
  ["Output token throughput (tok/s)"] = "out_tok_per_s",
  ["Total Token throughput (tok/s)"] = "total_tok_per_s",
  ["Mean TTFT (ms)"] = "ttft_mean_ms", ["Median TTFT (ms)"] = "ttft_p50_ms",
  ["P99 TTFT (ms)"] = "ttft_p99_ms",
  ["Mean TPOT (ms)"] = "tpot_mean_ms", ["Median TPOT (ms)"] = "tpot_p50_ms",
  ["P99 TPOT (ms)"] = "tpot_p99_ms",
  ["Mean ITL (ms)"] = "itl_mean_ms", ["Median ITL (ms)"] = "itl_p50_ms",
  ["P99 ITL (ms)"] = "itl_p99_ms",
}

-- Returns a table of metrics; raises when the summary block is absent.
function M.parse(text)
  local m, found = {}, false
  for line in text:gmatch("[^\n]+") do
    line = line:gsub("^#%s*", "")
    local key, val = line:match("^(.-):%s+([%d%.eE%+%-]+)%s*$")
    if key and FIELDS[key] then
      m[FIELDS[key]] = tonumber(val)
      found = true
    end
  end
  if not found or m.completed == nil then
    error("no 'Serving Benchmark Result' summary in the benchmark output", 0)
  end
  m.failed = m.failed or 0
  return m
end

-- Gains of b over a in percent, positive = b better (lower latency,
-- higher throughput).
function M.gains(a, b)
  local function lower(x, y) return x and y and x > 0 and (x - y) / x * 100 or nil end
  local function higher(x, y) return x and y and x > 0 and (y - x) / x * 100 or nil end
  local g = {
    ttft_gain_pct = lower(a.ttft_mean_ms, b.ttft_mean_ms),
    itl_gain_pct = lower(a.itl_mean_ms, b.itl_mean_ms),
    tput_gain_pct = higher(a.out_tok_per_s, b.out_tok_per_s),
  }
  local best
  for _, v in pairs(g) do if not best or v > best then best = v end end
  g.best_kpi_gain_pct = best
  return g
end

return M
