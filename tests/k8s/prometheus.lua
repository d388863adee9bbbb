-- strata lua tests/k8s/prometheus.lua MODEL.lua OUT.prom [JOURNAL_PROM]:
-- strata.report.prometheus writes the fixture run model as a textfile;
-- strata's own exposition parser (counters.prometheus_parse, engine/
-- counters/prom.c) reads it back: one series per test, verdict as label
-- and value, headlines equal to the model's.  JOURNAL_PROM: a file
-- `strata report --prometheus` wrote, parsed the same way.
local counters = require "strata.counters"
local prom = require "strata.report.prometheus"
local m = dofile(arg[1])
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")({ quiet = true })
prom.write(arg[2], m)
local f = assert(io.open(arg[2], "rb"))
local text = f:read("a")
f:close()
local samples = counters.prometheus_parse(text)
local pass, head, run = {}, {}, nil
for _, s in ipairs(samples) do
  check(s.labels.host == m.run.host, "host label on " .. s.name)
  check(s.type == "gauge", "typed gauge: " .. s.name)
  check(s.timestamp == nil, "no timestamps (textfile collector)")
  if s.name == "strata_test_pass" then
    check(pass[s.labels.test] == nil, "one pass series per test: " .. s.labels.test)
    pass[s.labels.test] = s
  elseif s.name == "strata_test_headline" then
    head[s.labels.test] = s
  elseif s.name == "strata_run_verdict" then
    run = s
  end
end
check(run and run.labels.verdict == m.verdict and run.value == (m.verdict == "PASS" and 1 or 0),
      "run verdict")
local nhead = 0
for _, t in ipairs(m.tests) do
  local s = pass[t.id]
  check(s and s.labels.status == t.status and s.labels.layer == t.layer
        and s.value == (t.status == "PASS" and 1 or 0), "pass series of " .. t.id)
  if type(t.headline_value) == "number" and t.headline_value == t.headline_value then
    local h = head[t.id]
    nhead = nhead + 1
    check(h and h.labels.metric == t.headline_metric
          and math.abs(h.value - t.headline_value) <= 1e-12 * math.abs(t.headline_value),
          "headline of " .. t.id)
  else
    check(head[t.id] == nil, "no headline series for a non-number: " .. t.id)
  end
end
check(nhead > 0, "some headlines")
check(prom.epoch("1970-01-02T00:00:01Z") == 86401 and prom.epoch("2026-11-29T19:00:00Z") == 1795978800,
      "epoch")
-- a label value with a quote, a backslash and a newline survives
local tricky = { run = { host = 'a"b\\c\nd' }, tests = {}, counts = {}, verdict = "FAIL" }
local back = counters.prometheus_parse(prom.text(tricky))
check(back[1].labels.host == 'a"b\\c\nd', "escaped label value")
if arg[3] then
  local g = assert(io.open(arg[3], "rb"))
  local s2 = counters.prometheus_parse(g:read("a"))
  g:close()
  local n = 0
  for _, s in ipairs(s2) do if s.name == "strata_test_pass" then n = n + 1 end end
  check(n >= 1, "strata report --prometheus wrote test series")
end
io.stderr:write(check.n == 0 and "prometheus: ok\n" or "")
os.exit(check.n == 0 and 0 or 1)
