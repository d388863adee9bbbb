-- strata.report.prometheus: the run as Prometheus metrics in the text
-- exposition format, for node_exporter's textfile collector (a *.prom
-- file in its --collector.textfile.directory; docs/report.md).  So a site
-- charts its validation history beside its live metrics.
--
--   require("strata.report.prometheus").write("/var/lib/node_exporter/strata.prom", model)
--
-- Series (every one labelled host = the run's host):
--   strata_run_verdict{verdict}            1 when the run's verdict is PASS
--   strata_run_timestamp_seconds           when the run started (Unix time)
--   strata_tests{status}                   tests per status
--   strata_test_pass{test,layer,status[,record_only]}  1 PASS or WARN
--                                          (passed, past a warn limit), 0
--                                          any other status; record_only="true"
--                                          on a test that gates nothing
--                                          (gate = false, --no-gate)
--   strata_run_warnings                    tests of the run that WARNed
--   strata_run_record_only                 tests of the run that gated
--                                          nothing (judged and recorded)
--   strata_test_headline{test,layer,metric,unit,status}  the headline
--                                          figure (worst cell), when it is
--                                          a finite number
-- No sample timestamps: the textfile collector does not accept them.
-- Written to FILE.tmp then renamed, so a scrape never reads half a file.
local common = require "strata.report.common"

local M = {}

local function esc(v)
  return (tostring(v):gsub("[\\\"\n]", { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n" }))
end

local function labels(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  local parts = {}
  for _, k in ipairs(ks) do parts[#parts + 1] = ("%s=\"%s\""):format(k, esc(t[k])) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local function num(v)
  if math.type(v) == "integer" then return tostring(v) end
  return ("%.17g"):format(v)
end

-- "2026-11-29T19:00:00Z" -> Unix seconds (UTC), or nil.
local function epoch(s)
  local y, mo, d, h, mi, se = tostring(s or ""):match(
    "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then return nil end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  -- days from civil (H. Hinnant's algorithm), no dependence on the TZ
  if mo <= 2 then y = y - 1 end
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local mp = (mo + 9) % 12
  local doy = (153 * mp + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  local days = era * 146097 + doe - 719468
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(se)
end
M.epoch = epoch

-- A textfile being written: family(name, help) opens a gauge family,
-- sample(name, labels, value) adds a series labelled host too, text()
-- is the file.  The fleet's textfile (strata.fleet.prometheus) writes
-- through it as well.
function M.series(host)
  local out = {}
  local s = {}
  function s.family(name, help)
    out[#out + 1] = ("# HELP %s %s\n# TYPE %s gauge\n"):format(name, help, name)
  end
  function s.sample(name, l, v)
    l.host = host
    out[#out + 1] = ("%s%s %s\n"):format(name, labels(l), num(v))
  end
  function s.text() return table.concat(out) end
  return s
end

function M.text(m)
  local ser = M.series((m.run or {}).host or "unknown")
  local family, sample = ser.family, ser.sample
  family("strata_run_verdict", "1 when the strata run's verdict is PASS, 0 otherwise")
  sample("strata_run_verdict", { verdict = m.verdict or "NONE" }, m.verdict == "PASS" and 1 or 0)
  local ts = epoch((m.run or {}).started)
  if ts then
    family("strata_run_timestamp_seconds", "when the strata run started, Unix time")
    sample("strata_run_timestamp_seconds", {}, ts)
  end
  family("strata_run_warnings", "strata tests of the run that passed with a warning (WARN)")
  sample("strata_run_warnings", {}, (m.counts or {}).WARN or 0)
  local rec = 0
  for _, t in ipairs(m.tests or {}) do if t.record_only then rec = rec + 1 end end
  family("strata_run_record_only", "strata tests of the run that gated nothing (record only: gate = false or --no-gate)")
  sample("strata_run_record_only", {}, rec)
  family("strata_tests", "strata tests of the run per status")
  local st = {}
  for k in pairs(m.counts or {}) do if k ~= "total" then st[#st + 1] = k end end
  table.sort(st)
  for _, k in ipairs(st) do sample("strata_tests", { status = k }, m.counts[k]) end
  family("strata_test_pass", "1 when the test passed (PASS, or WARN: past a warn limit), 0 for any other status (the label); record_only=\"true\": the test gated nothing")
  for _, t in ipairs(m.tests or {}) do
    -- a record-only FAIL is 0 like any other: the label says it gated nothing
    sample("strata_test_pass", { test = t.id, layer = t.layer or "", status = t.status,
                                 record_only = t.record_only and "true" or nil },
           (t.status == "PASS" or t.status == "WARN") and 1 or 0)
  end
  family("strata_test_headline", "the test's headline metric (its worst cell)")
  for _, t in ipairs(m.tests or {}) do
    local v = t.headline_value
    if type(v) == "number" and common.finite(v) and t.headline_metric then
      local unit = ""
      for _, r in ipairs(m.results or {}) do
        if r.id == t.id and r.units and r.units[t.headline_metric] then
          unit = r.units[t.headline_metric]
          break
        end
      end
      sample("strata_test_headline", { test = t.id, layer = t.layer or "",
             metric = t.headline_metric, unit = unit ~= "" and unit or nil,
             status = t.status }, v)
    end
  end
  return ser.text()
end

-- Through path.tmp + rename, as the JSON and JUnit (a failed write or
-- close, the disk full, raises too); raises "prometheus: cannot write ...".
function M.write(path, m)
  require("strata.report.common").write_model("prometheus", path, m, M.text)
end

return M
