-- strata.report.json: the run model as one JSON document, for machines
-- and for diffing two runs.
--
--   require("strata.report.json").write("reports/run.json", model)
--
-- Keys are sorted at every level and the output is indented, so two runs
-- diff line by line.  NaN and the infinities (which JSON lacks) become
-- null; a float is printed with the fewest digits that read back to the
-- same double.  Empty tables are arrays where the model holds lists (argv,
-- results, checks, rows, ...) and objects elsewhere.  Raises on a value
-- JSON cannot hold (function, userdata, a cycle) and on a failed write.
local common = require "strata.report.common"
local verdict = require "strata.verdict"
local cjson = require "cjson"

local M = {}

M.FORMAT_VERSION = 1

-- Keys whose value is a list even when empty.
local ARRAY_KEYS = {
  argv = true, files = true, layers = true, tests = true, criteria = true,
  results = true, params = true, checks = true, tables = true,
  columns = true, rows = true, notes = true, t = true, tags = true,
  y = true, ["in"] = true, missing = true, members = true, held = true,
  rules = true, status = true,
}
-- Keys whose children are lists: tables' rows, series' values.
local ARRAY_CHILDREN = { rows = true, values = true }

-- The JSON text of any plain Lua value (the rules above), written by
-- xl.json (engine/report/report_json_lua.c: the walk was Lua, 0.9 s of
-- CPU for 10 000 results; tests/report/json_c.lua checks the two agree).
local to_json = require("strata.report").json
function M.encode(v)
  return to_json(v, ARRAY_KEYS, ARRAY_CHILDREN, common.utf8_clean, cjson.null)
end

-- The document written for a model.
function M.document(model)
  return {
    format = "strata-report", format_version = M.FORMAT_VERSION,
    run = model.run or {}, inventory = model.inventory or {},
    criteria = model.criteria or {}, results = model.results or {},
    tests = model.tests or {}, verdict = model.verdict,
    lowest_failed = model.lowest_failed, layers = model.layers or {},
    message = model.message, missing = model.missing or {},
    counts = verdict.counts(model.tests),
    severity = require("strata.severity").of_model(model),
  }
end

-- Write model as JSON at path (through path.tmp + rename); raises.
function M.write(path, model)
  common.write_model("report.json", path, model, function(m)
    return M.encode(M.document(m)) .. "\n"
  end)
end

return M
