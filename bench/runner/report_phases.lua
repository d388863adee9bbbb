-- bench/runner/report_phases.lua JOURNAL [OUT.xlsx [ROUNDS]]: the CPU time
-- (os.clock, best of ROUNDS, default 3, a full collection before each) of
-- each phase of `strata report`: read the journal, build the run model
-- (strata.verdict), redact it, write the workbook.
--   strata lua bench/runner/report_phases.lua t.jsonl /tmp/r.xlsx 3
local journal = require "strata.journal"
local verdict = require "strata.verdict"
local path = assert(arg[1], "usage: report_phases.lua JOURNAL [OUT.xlsx [ROUNDS]]")
local out, n = arg[2] or os.tmpname() .. ".xlsx", tonumber(arg[3] or 3)
local function phase(name, f)
  local best, r = math.huge, nil
  for _ = 1, n do
    collectgarbage()
    collectgarbage()
    local c0 = os.clock()
    r = f()
    best = math.min(best, os.clock() - c0)
  end
  print(("%-10s %.3f s (best of %d)"):format(name, best, n))
  return r
end
local recs = phase("read", function() return journal.read(path) end)
local m = phase("model", function() return verdict.build(recs) end)
local cm = phase("redact", function() return require("strata.redact").clean(m) end)
phase("workbook", function() require("strata.report.workbook").write(out, cm) end)
if not arg[2] then os.remove(out) end
