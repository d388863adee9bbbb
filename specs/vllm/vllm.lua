-- RUNBOOK E5, B16, B17: the vLLM workload served from a TCP-backed and an
-- S3-over-RDMA-backed deployment, measured with `vllm bench serve` (the
-- vLLM project's own serving benchmark), then compared.
local vllm = require "strata.lib.vllm"
local tool = require "strata.lib.tool"

local function bench(t, which)
  local v = t.site.vllm
  if not v or not v[which] or not v[which].base_url then
    t.skip(("site.vllm.%s.base_url is not set: no %s-backed vLLM endpoint")
           :format(which, which:upper()))
  end
  local cmd = {}
  for _, w in ipairs(v.bench_cmd or { "vllm", "bench", "serve" }) do cmd[#cmd + 1] = w end
  cmd[1] = tool.need(cmd[1], nil, "install vLLM or set site.vllm.bench_cmd")
  local args = {
    "--base-url", v[which].base_url, "--model", v.model or t.skip("site.vllm.model is not set"),
    "--num-prompts", tostring(v.num_prompts or 200),
    "--max-concurrency", tostring(v.max_concurrency or 32),
    "--dataset-name", v.dataset_name or "random",
  }
  for _, a in ipairs(args) do cmd[#cmd + 1] = a end
  for _, a in ipairs(v.extra_args or {}) do cmd[#cmd + 1] = tostring(a) end
  local r = tool.run(cmd, { timeout = v.timeout or 1700 })
  local m = vllm.parse(r.stdout)
  m.requested = v.num_prompts or 200
  return m
end

local UNITS = { ttft_mean_ms = "ms", itl_mean_ms = "ms", out_tok_per_s = "tok/s" }

test {
  id = "B16", layer = "vllm", title = "vLLM over S3/TCP (scenario A)",
  tags = { "vllm", "bench" }, timeout = 1800,
  headline = "ttft_mean_ms", units = UNITS,
  criteria = { failed = { eq = 0 }, completed = { eq = "requested" } },
  run = function(t) return bench(t, "tcp") end,
}

test {
  id = "B17", layer = "vllm", title = "vLLM over S3-over-RDMA (scenario B)",
  tags = { "vllm", "bench" }, timeout = 1800,
  headline = "ttft_mean_ms", units = UNITS,
  criteria = { failed = { eq = 0 }, completed = { eq = "requested" } },
  run = function(t) return bench(t, "rdma") end,
}

test {
  id = "E5", layer = "vllm", title = "vLLM: RDMA benefit over TCP",
  needs = { "B16", "B17" }, tags = { "vllm" },
  headline = "best_kpi_gain_pct", units = { best_kpi_gain_pct = "%" },
  -- RUNBOOK: TTFT or ITL at least 10% better, or throughput x 1.10
  criteria = { best_kpi_gain_pct = { min = 10 } },
  run = function(t)
    local a, b = t.result("B16"), t.result("B17")
    local g = vllm.gains(a, b)
    t.table("TCP vs RDMA", { "KPI", "TCP (B16)", "RDMA (B17)", "gain %" }, {
      { "TTFT mean (ms)", a.ttft_mean_ms, b.ttft_mean_ms, g.ttft_gain_pct },
      { "ITL mean (ms)", a.itl_mean_ms, b.itl_mean_ms, g.itl_gain_pct },
      { "output tok/s", a.out_tok_per_s, b.out_tok_per_s, g.tput_gain_pct },
      { "requests/s", a.req_per_s, b.req_per_s, "" },
    })
    return g
  end,
}
