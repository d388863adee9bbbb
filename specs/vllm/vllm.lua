-- RUNBOOK E5, B16, B17: the vLLM workload served from a TCP-backed
-- (scenario A) and an S3-over-RDMA-backed (scenario B) deployment, then
-- compared by the RUNBOOK's rule (section 32).
--
-- The client is strata's own (require "strata.llm": OpenAI-compatible
-- streaming requests, TTFT / ITL / TPOT / E2E per request, in C) unless
-- site.vllm.client = "bench", which drives `vllm bench serve` instead and
-- reads its summary.  Beside the client's figures: the server's own
-- Prometheus metrics (vLLM's names) scraped before/after, the model
-- staging time (the model's shards GET from the site's bucket into GPU
-- memory over S3/TCP, T3, lib/vllm.lua stage_tcp, for B16; over S3 over
-- RDMA, T4, stage_rdma, for B17) and the time to ready.
local vllm = require "strata.lib.vllm"
local tool = require "strata.lib.tool"

local function bench(t, which)
  local v = t.site.vllm
  local cmd = {}
  for _, w in ipairs(v.bench_cmd or { "vllm", "bench", "serve" }) do cmd[#cmd + 1] = w end
  cmd[1] = tool.need(cmd[1], nil, "install vLLM or set site.vllm.bench_cmd")
  local args = {
    "--base-url", v[which].base_url, "--model", v.model or t.skip("site.vllm.model is not set"),
    "--num-prompts", tostring(v.num_prompts or 200),
    "--max-concurrency", tostring(vllm.ladder(v)[#vllm.ladder(v)]),
    "--dataset-name", v.dataset_name or "random",
  }
  for _, a in ipairs(args) do cmd[#cmd + 1] = a end
  for _, a in ipairs(v.extra_args or {}) do cmd[#cmd + 1] = tostring(a) end
  local r = tool.run(cmd, { timeout = v.timeout or 1700 })
  local m = vllm.parse(r.stdout)
  m.requested = v.num_prompts or 200
  return m
end

local function scenario(t, which)
  local v = t.site.vllm
  if not v or not v[which] or not v[which].base_url then
    t.skip(("site.vllm.%s.base_url is not set: no %s-backed vLLM endpoint")
           :format(which, which:upper()))
  end
  local stage
  if which == "tcp" then
    stage = vllm.stage_tcp(t)
  elseif v.staging then
    local ok, r = pcall(vllm.stage_rdma, t)
    if ok then
      stage = r
    elseif type(r) == "table" and r.skip then
      t.note("model staging over S3 over RDMA (T4) not measured: " .. r.skip)
    else
      error(r, 0)
    end
  end
  local ready = vllm.time_to_ready(t, which)
  local m = (v.client or "native") == "bench" and bench(t, which)
            or vllm.native(t, which)
  m.time_to_ready_s = ready
  m.client = v.client or "native"
  for k, x in pairs(stage or {}) do m[k] = x end
  return m
end

local UNITS = { ttft_mean_ms = "ms", ttft_p50_ms = "ms", ttft_p99_ms = "ms",
                itl_mean_ms = "ms", itl_p50_ms = "ms", itl_p99_ms = "ms",
                tpot_p50_ms = "ms", e2el_p50_ms = "ms",
                out_tok_per_s = "tok/s", total_tok_per_s = "tok/s",
                req_per_s = "req/s", time_to_ready_s = "s",
                server_ttft_mean_ms = "ms", server_itl_mean_ms = "ms",
                model_stage_s = "s", model_stage_gbps = "Gb/s" }

test {
  id = "B16", layer = "vllm", title = "vLLM over S3/TCP (scenario A)",
  tags = { "vllm", "bench" }, timeout = 1800,
  sample = { interval = 0.5, sources = { "cpu" } },
  headline = "ttft_p50_ms", units = UNITS,
  run = function(t) return scenario(t, "tcp") end,
}

test {
  id = "B17", layer = "vllm", title = "vLLM over S3-over-RDMA (scenario B)",
  tags = { "vllm", "bench" }, timeout = 1800,
  sample = { interval = 0.5, sources = { "cpu" } },
  headline = "ttft_p50_ms", units = UNITS,
  run = function(t) return scenario(t, "rdma") end,
}

test {
  id = "E5", layer = "vllm", title = "vLLM: RDMA benefit over TCP",
  needs = { "B16", "B17" }, tags = { "vllm" },
  headline = "best_kpi_gain_pct", units = { tput_gain_pct = "%", cpu_reduction_pct = "%",
    ttft_gain_pct = "%", itl_gain_pct = "%", best_kpi_gain_pct = "%" },
  -- measures the KPIs of RUNBOOK section 32 (RDMA against TCP); the rule
  -- (any one KPI suffices, which KPIs count, how much) is E5.benefit in
  -- specs/thresholds.yaml
  run = function(t)
    local a, b = t.result("B16"), t.result("B17")
    local g = vllm.gains(a, b)
    t.table("TCP vs RDMA (RUNBOOK section 32 KPIs; the rule: E5.benefit)",
      { "KPI", "TCP (B16)", "RDMA (B17)", "gain %", "metric" }, {
      { "output tok/s", a.out_tok_per_s, b.out_tok_per_s, g.tput_gain_pct,
        "tput_gain_pct" },
      { "CPU busy %", a["delta.cpu.total.busy_pct"], b["delta.cpu.total.busy_pct"],
        g.cpu_reduction_pct, "cpu_reduction_pct" },
      { "TTFT mean (ms)", a.ttft_mean_ms, b.ttft_mean_ms, g.ttft_gain_pct,
        "ttft_gain_pct" },
      { "ITL mean (ms)", a.itl_mean_ms, b.itl_mean_ms, g.itl_gain_pct,
        "itl_gain_pct" },
      { "requests/s", a.req_per_s, b.req_per_s, "", "" },
      { "time to ready (s)", a.time_to_ready_s, b.time_to_ready_s, "", "" },
    })
    return g
  end,
}
