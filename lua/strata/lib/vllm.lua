-- strata.lib.vllm: read what `vllm bench serve` reports: the summary it
-- prints (request and token throughput, TTFT, TPOT, ITL, E2EL: mean,
-- median, each P<n> asked for, in ms) or the JSON --save-result writes.
--
-- Formats: vllm/benchmarks/serve.py at vllm-project/vllm def9ce85
-- (benchmark() prints "{:<40} {:<10}" label/value lines and the
-- percentile blocks of process_one_metric; main_async() saves
-- mean_/median_/std_/p<n>_{ttft,tpot,itl,e2el}_ms and the counts).
-- Labels are matched case-insensitively: that version prints "Total
-- token throughput (tok/s)", older benchmarks/benchmark_serving.py
-- printed "Total Token throughput (tok/s)".
local M = {}

local FIELDS = {
  ["successful requests"] = "completed",
  ["failed requests"] = "failed",
  ["maximum request concurrency"] = "max_concurrency",
  ["request rate configured (rps)"] = "request_rate",
  ["benchmark duration (s)"] = "duration_s",
  ["total input tokens"] = "input_tokens",
  ["total generated tokens"] = "output_tokens",
  ["request throughput (req/s)"] = "req_per_s",
  ["request goodput (req/s)"] = "goodput_req_per_s",
  ["output token throughput (tok/s)"] = "out_tok_per_s",
  ["peak output token throughput (tok/s)"] = "peak_out_tok_per_s",
  ["peak concurrent requests"] = "peak_concurrent",
  ["total token throughput (tok/s)"] = "total_tok_per_s",
}

-- The saved JSON's keys (main_async + benchmark's result) -> ours.
local JSON = {
  completed = "completed", failed = "failed", duration = "duration_s",
  max_concurrency = "max_concurrency",
  total_input_tokens = "input_tokens", total_output_tokens = "output_tokens",
  request_throughput = "req_per_s", request_goodput = "goodput_req_per_s",
  output_throughput = "out_tok_per_s",
  max_output_tokens_per_s = "peak_out_tok_per_s",
  max_concurrent_requests = "peak_concurrent",
  total_token_throughput = "total_tok_per_s",
}

local METRICS = { ttft = true, tpot = true, itl = true, e2el = true }

-- "Mean TTFT (ms)" -> ttft_mean_ms; "Median" -> ttft_p50_ms (the median;
-- an explicit P50 line says the same); "P99.9 ITL (ms)" -> itl_p99.9_ms.
local function latency_key(label)
  local stat, metric = label:match("^(%S+) (%w+) %(ms%)$")
  metric = metric and metric:lower()
  if not (metric and METRICS[metric]) then return nil end
  stat = stat:lower()
  if stat == "mean" then return metric .. "_mean_ms"
  elseif stat == "median" then return metric .. "_p50_ms" end
  local p = stat:match("^p(%d+%.?%d*)$")
  return p and (metric .. "_p" .. p .. "_ms") or nil
end

-- Returns a table of metrics; raises when the summary block is absent.
function M.parse(text)
  local m, found = {}, false
  for line in text:gmatch("[^\n]+") do
    line = line:gsub("\r$", ""):gsub("^#%s*", "")
    local label, val = line:match("^(.-):%s+([%d%.eE%+%-]+)%s*$")
    if label then
      local key = FIELDS[label:lower()] or latency_key(label)
      local v = tonumber(val)
      if key and v then
        m[key] = v
        found = true
      end
    end
  end
  if not found or m.completed == nil then
    error("no 'Serving Benchmark Result' summary in the benchmark output", 0)
  end
  m.failed = m.failed or 0
  return m
end

-- The file `vllm bench serve --save-result` writes (one JSON object;
-- --append-result writes one a line: the last is read).
function M.parse_json(text)
  local cjson = require "cjson"
  local last
  for line in text:gmatch("[^\n]+") do
    if line:match("%S") then last = line end
  end
  local ok, d = pcall(cjson.decode, last or "")
  if not ok or type(d) ~= "table" or type(d.completed) ~= "number" then
    error("not a 'vllm bench serve' result file: "
          .. (ok and "no 'completed' count" or tostring(d)), 0)
  end
  local m = {}
  for k, v in pairs(d) do
    if type(v) == "number" then
      local stat, metric = k:match("^(%a+%d*%.?%d*)_(%w+)_ms$")
      if JSON[k] then
        m[JSON[k]] = v
      elseif metric and METRICS[metric] then
        if stat == "median" then stat = "p50" end
        m[metric .. "_" .. stat .. "_ms"] = v
      end
    end
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
