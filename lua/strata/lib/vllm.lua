-- strata.lib.vllm: the serving rung (B16/B17/E5).  Two clients: strata's
-- own (require "strata.llm", the C load generator; M.native) and
-- `vllm bench serve` (M.bench, whose output M.parse / M.parse_json read);
-- both give the same metric names.  M.witness reads the server's
-- Prometheus metrics (vLLM's names) before/after; M.gains judges A vs B.
--
-- Parsing `vllm bench serve`: what it reports: the summary it
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

-- Gains of b over a in percent, positive = b better (lower latency and
-- CPU, higher throughput).  Latencies by their means (what both clients
-- report and what the server's histograms give: sum / count).
function M.gains(a, b)
  local function lower(x, y) return x and y and x > 0 and (x - y) / x * 100 or nil end
  local function higher(x, y) return x and y and x > 0 and (y - x) / x * 100 or nil end
  local cpu = "delta.cpu.total.busy_pct"
  local g = {
    ttft_gain_pct = lower(a.ttft_mean_ms, b.ttft_mean_ms),
    itl_gain_pct = lower(a.itl_mean_ms, b.itl_mean_ms),
    tput_gain_pct = higher(a.out_tok_per_s, b.out_tok_per_s),
    cpu_reduction_pct = lower(a[cpu], b[cpu]),
  }
  local best
  for _, v in pairs(g) do if not best or v > best then best = v end end
  g.best_kpi_gain_pct = best
  return g
end

-- --- the native client ------------------------------------------------------

M.PATHS = { completions = "/v1/completions", chat = "/v1/chat/completions" }

-- llm.run's result -> flat metrics, named as M.parse names vllm's
-- (ttft_p50_ms, itl_p99_ms, e2el_mean_ms, out_tok_per_s, ...).
function M.flatten(r)
  local m = {
    requests = r.requests, completed = r.completed, failed = r.failed,
    duration_s = r.duration_s, input_tokens = r.input_tokens,
    output_tokens = r.output_tokens, req_per_s = r.req_per_s,
    out_tok_per_s = r.out_tok_per_s, total_tok_per_s = r.total_tok_per_s,
    max_concurrency = r.concurrency, peak_concurrent = r.peak_inflight,
  }
  for ours, theirs in pairs { ttft = "ttft_ms", itl = "itl_ms",
                              tpot = "tpot_ms", e2el = "e2e_ms" } do
    local s = r[theirs] or {}
    for _, st in ipairs { "mean", "p50", "p90", "p95", "p99" } do
      m[ours .. "_" .. st .. "_ms"] = s[st]
    end
    m[ours .. "_std_ms"] = s.stdev
  end
  for kind, n in pairs(r.errors or {}) do m["failed_" .. kind] = n end
  return m
end

-- vLLM's metric names (vllm/v1/metrics/loggers.py; docs/provenance.md
-- "## LLM serving").  Histograms are read as delta(_sum) / delta(_count);
-- the ITL histogram is inter_token_latency_seconds where the version has
-- it, else time_per_output_token_seconds (what older versions observed
-- per decode step).  KV-cache usage: kv_cache_usage_perc (0.9+), else
-- gpu_cache_usage_perc (deprecated in 0.9).
local HIST = {
  server_ttft_mean_ms = { "vllm:time_to_first_token_seconds" },
  server_itl_mean_ms = { "vllm:inter_token_latency_seconds",
                         "vllm:time_per_output_token_seconds" },
  server_e2el_mean_ms = { "vllm:e2e_request_latency_seconds" },
  server_queue_mean_ms = { "vllm:request_queue_time_seconds" },
}
local COUNTERS = {
  server_requests = "vllm:request_success_total",
  server_generation_tokens = "vllm:generation_tokens_total",
  server_prompt_tokens = "vllm:prompt_tokens_total",
  server_preemptions = "vllm:num_preemptions_total",
}
local GAUGES = {
  server_kv_cache_usage = { "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc" },
  server_requests_running = { "vllm:num_requests_running" },
  server_requests_waiting = { "vllm:num_requests_waiting" },
}

-- Sum of every sample named name (all label sets: engines, reasons).
local function sum(samples, name)
  local v, found = 0, false
  for _, s in ipairs(samples) do
    if s.name == name then v, found = v + s.value, true end
  end
  return found and v or nil
end

-- Two scrapes (lists of {name, labels, value}) -> the server's figures
-- over the interval, and the names found (for the report).
function M.witness(before, after)
  local m, used = {}, {}
  for key, names in pairs(HIST) do
    for _, n in ipairs(names) do
      local s0, s1 = sum(before, n .. "_sum"), sum(after, n .. "_sum")
      local c0, c1 = sum(before, n .. "_count"), sum(after, n .. "_count")
      if s1 and c1 then
        local dc = c1 - (c0 or 0)
        m[key] = dc > 0 and (s1 - (s0 or 0)) / dc * 1000 or nil
        used[#used + 1] = n
        break
      end
    end
  end
  for key, n in pairs(COUNTERS) do
    local a, b = sum(before, n), sum(after, n)
    if b then m[key] = b - (a or 0); used[#used + 1] = n end
  end
  for key, names in pairs(GAUGES) do
    for _, n in ipairs(names) do
      local v = sum(after, n)
      if v then m[key] = v; used[#used + 1] = n; break end
    end
  end
  table.sort(used)
  return m, used
end

local function scrape(url, v)
  local counters = require "strata.counters"
  return counters.prometheus_scrape { url = url, timeout = 10,
                                      bearer_env = v.metrics_bearer_env }
end

-- A site dataset: JSON lines {"prompt": text, "output_len": n} (the
-- shape of vLLM's custom dataset: "prompt" per line).
function M.read_dataset(path, limit)
  local cjson = require "cjson"
  local f = io.open(path, "r")
  if not f then error(("site.vllm.dataset: cannot open %s"):format(path), 0) end
  local out, ln = {}, 0
  for line in f:lines() do
    ln = ln + 1
    if line:match("%S") then
      local ok, d = pcall(cjson.decode, line)
      if not ok or type(d) ~= "table" or type(d.prompt) ~= "string" then
        f:close()
        error(("%s:%d: not a JSON object with a \"prompt\" string"):format(path, ln), 0)
      end
      out[#out + 1] = { text = d.prompt, output_len = tonumber(d.output_len) }
      if limit and #out >= limit then break end
    end
  end
  f:close()
  if #out == 0 then error(("%s: no prompts"):format(path), 0) end
  return out
end

-- The concurrency ladder of site.vllm.concurrency (a number or a list;
-- default max_concurrency), lowest first.
function M.ladder(v)
  local c = v.concurrency or v.max_concurrency or 32
  if type(c) ~= "table" then c = { c } end
  local out = {}
  for i, x in ipairs(c) do out[i] = tonumber(x) or error(("site.vllm.concurrency[%d] is not a number"):format(i), 0) end
  table.sort(out)
  return out
end

-- One scenario (which = "tcp" | "rdma") with strata's client: every rung
-- of the ladder, the server's metrics scraped around the judged rung (the
-- highest).  Returns metrics (flat, of the judged rung) and the ladder
-- rows for a table.
function M.native(t, which)
  local llm = require "strata.llm"
  local v = t.site.vllm
  local ep = v[which]
  local api = v.api or "completions"
  local url = ep.base_url:gsub("/+$", "") .. (M.PATHS[api] or
    error(("site.vllm.api must be completions or chat, not %s"):format(tostring(api)), 0))
  local prompts
  if v.dataset then prompts = M.read_dataset(v.dataset, v.num_prompts) end
  local ladder = M.ladder(v)
  local rows, judged, server, used = {}, nil, nil, nil
  local murl = ep.metrics_url or (ep.base_url:gsub("/+$", "") .. "/metrics")
  for i, c in ipairs(ladder) do
    local last = i == #ladder
    local before = last and v.witness ~= false and scrape(murl, v) or nil
    local r = llm.run {
      url = url, api = api, model = v.model or t.skip("site.vllm.model is not set"),
      prompts = prompts, input_len = v.input_len or 1024,
      output_len = v.output_len or 128, num_prompts = v.num_prompts or 200,
      num_requests = v.num_prompts or 200, concurrency = c,
      request_rate = v.request_rate, burstiness = v.burstiness,
      seed = v.seed or 0, ignore_eos = v.ignore_eos ~= false,
      timeout = v.request_timeout, stall_timeout = v.stall_timeout,
      api_key_env = v.api_key_env, ca_bundle = v.ca_bundle,
    }
    local m = M.flatten(r)
    rows[#rows + 1] = { c, m.completed, m.failed, m.ttft_p50_ms, m.ttft_p99_ms,
                        m.itl_p50_ms, m.itl_p99_ms, m.tpot_p50_ms, m.e2el_p50_ms,
                        m.out_tok_per_s, m.req_per_s }
    for _, e in ipairs(r.error_texts or {}) do t.log("%s c=%d: %s", which, c, e) end
    if last then
      judged = m
      if before then server, used = M.witness(before, scrape(murl, v)) end
    end
  end
  for k, x in pairs(server or {}) do judged[k] = x end
  judged.requested = v.num_prompts or 200
  t.table(("%s ladder"):format(which:upper()),
    { "concurrency", "completed", "failed", "TTFT p50 (ms)", "TTFT p99 (ms)",
      "ITL p50 (ms)", "ITL p99 (ms)", "TPOT p50 (ms)", "E2E p50 (ms)",
      "output tok/s", "requests/s" }, rows)
  if server then
    t.table(("%s server witness"):format(which:upper()),
      { "figure", "strata client", "server (/metrics)" }, {
        { "TTFT mean (ms)", judged.ttft_mean_ms, server.server_ttft_mean_ms },
        { "ITL mean (ms)", judged.itl_mean_ms, server.server_itl_mean_ms },
        { "E2E mean (ms)", judged.e2el_mean_ms, server.server_e2el_mean_ms },
        { "completed requests", judged.completed, server.server_requests },
        { "output tokens", judged.output_tokens, server.server_generation_tokens },
        { "KV-cache usage (after)", "", server.server_kv_cache_usage },
      })
    t.note("server metrics read: " .. table.concat(used, ", "))
  end
  return judged
end

-- --- model staging ----------------------------------------------------------

local function urlenc(x)
  return (x:gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end

-- Every object under prefix (ListObjectsV2, all pages): { {key, size} }.
function M.list_shards(cl, bucket, prefix)
  local out, token = {}, nil
  repeat
    local q = "list-type=2&prefix=" .. urlenc(prefix or "")
    if token then q = q .. "&continuation-token=" .. urlenc(token) end
    local r = cl:request { method = "GET", bucket = bucket, query = q }
    if r.status ~= 200 then
      error(("ListObjectsV2 %s/%s: HTTP %d %s"):format(bucket, prefix or "",
            r.status, r.code or ""), 0)
    end
    for c in r.body:gmatch("<Contents>(.-)</Contents>") do
      local k, sz = c:match("<Key>(.-)</Key>"), c:match("<Size>(%d+)</Size>")
      if k and sz then
        k = k:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&quot;", '"')
             :gsub("&apos;", "'"):gsub("&amp;", "&")
        out[#out + 1] = { key = k, size = tonumber(sz) }
      end
    end
    token = r.body:match("<IsTruncated>true</IsTruncated>") and
            r.body:match("<NextContinuationToken>(.-)</NextContinuationToken>")
  until not token
  return out
end

-- The model's shards (site.vllm.staging: bucket, prefix, concurrency,
-- memory = "cuda" | "host", on the endpoint of site.s3) GET over S3/TCP
-- (T3) into one buffer; first request to last byte in place.
function M.stage_tcp(t)
  local st = (t.site.vllm or {}).staging
  if not st then return nil end
  local s3site = require "strata.lib.s3site"
  local llm = require "strata.llm"
  local s = {}
  for k, x in pairs(t.site.s3 or {}) do s[k] = x end
  s.bucket = st.bucket or s.bucket
  local cl = s3site.client(t, s, "site.s3 (site.vllm.staging)")
  local shards = M.list_shards(cl, s.bucket, st.prefix)
  if #shards == 0 then
    error(("site.vllm.staging: no objects under %s/%s"):format(s.bucket, st.prefix or ""), 0)
  end
  local r = llm.stage { client = cl, bucket = s.bucket, shards = shards,
                        concurrency = st.concurrency or 8,
                        memory = st.memory or "cuda", device = st.device }
  cl:close()
  if r.error then t.log("model staging: %s", r.error) end
  return { model_stage_s = r.seconds, model_stage_gbps = r.gbps,
           model_stage_bytes = r.bytes, model_stage_shards = r.shards,
           model_stage_failed = r.failed, model_stage_first_byte_s = r.first_byte_s,
           model_stage_memory = r.memory }
end

-- The same shards over S3 over RDMA (T4): site.s3rdma (over site.s3) for
-- the endpoint, provider ("rc" = hipobj-rc-v2, "cuobject"), device,
-- port, gid_index; every shard GET by key into one registered buffer
-- (s3rdma.stage).  Raises a SKIP (no RDMA device, no GPU memory RDMA, no
-- cuObject) for the caller to note.
function M.stage_rdma(t)
  local st = (t.site.vllm or {}).staging
  if not st then return nil end
  local s3rdma = require "strata.s3rdma"
  local lib = require "strata.lib.s3rdma"
  local cl, s = lib.client(t)
  local bucket = st.bucket or s.bucket
  local shards = M.list_shards(cl, bucket, st.prefix)
  if #shards == 0 then
    cl:close()
    error(("site.vllm.staging: no objects under %s/%s"):format(bucket, st.prefix or ""), 0)
  end
  local ok, r = pcall(s3rdma.stage, {
    client = cl, bucket = bucket, shards = shards,
    mode = s.provider == "cuobject" and "cuobject" or "rc",
    concurrency = st.concurrency or 8, memory = st.memory or "cuda",
    gpu = st.device, device = s.device, port = s.port,
    gid_index = s.gid_index ~= "auto" and s.gid_index or nil,
    landing_grace = s.landing_grace_s, control_host_port = s.control_host_port,
    token_contract = s.token_contract })
  cl:close()
  if not ok then error(r, 0) end
  if r.error then t.log("model staging (T4): %s", r.error) end
  return { model_stage_s = r.seconds, model_stage_gbps = r.gbps,
           model_stage_bytes = r.bytes, model_stage_shards = r.shards,
           model_stage_failed = r.failed, model_stage_first_byte_s = r.first_byte_s,
           model_stage_memory = r.memory, model_stage_transfers = r.transfers,
           model_stage_reply_ok = r.reply_ok, model_stage_landed_ok = r.landed_ok }
end

-- Time to ready: run site.vllm.<which>.restart_cmd (when given), then
-- poll ready_url until 200; seconds, or nil when no ready_url is set.
function M.time_to_ready(t, which)
  local ep = t.site.vllm[which]
  if not ep.ready_url then return nil end
  local core = require "strata.core"
  local t0 = core.now()
  if ep.restart_cmd then
    local tool = require "strata.lib.tool"
    tool.run(ep.restart_cmd, { timeout = ep.restart_timeout or 600 })
  end
  local llm = require "strata.llm"
  llm.ready { url = ep.ready_url, timeout = ep.ready_timeout or 900 }
  return core.now() - t0
end

return M
