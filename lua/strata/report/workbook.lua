-- strata.report.workbook: the run model -> an .xlsx workbook a lead
-- engineer can send to a stakeholder (layout: docs/report.md).
--
--   require("strata.report.workbook").write("reports/run.xlsx", model)
--
-- The sheets, in their order: one file each in report/sheets/, written
-- with the toolkit of report/sheet.lua.  Raises on any failure (a failed
-- report write is fatal); nothing is left at path when a write fails
-- before the file is created.
local sheet = require "strata.report.sheet"
local common = require "strata.report.common"

local M = {}

-- Each module: names (the sheet names it writes, reserved before any is
-- written: the Summary links to the test sheets), plan(ctx, model)
-- (optional, before any sheet is written) and write(ctx, model).
M.SHEETS = { "summary", "tests", "warnings", "metrics", "counters",
             "thresholds", "inventory", "run" }

local function check_model(model)
  if type(model) ~= "table" then
    error("report.workbook: model must be a table, got " .. type(model), 0)
  end
  for _, k in ipairs { "tests", "results" } do
    if model[k] ~= nil and type(model[k]) ~= "table" then
      error(("report.workbook: model.%s must be a list"):format(k), 0)
    end
  end
end

-- Write the workbook for model at path; raises on failure.
function M.write(path, model)
  if type(path) ~= "string" or path == "" then
    error("report.workbook: output path must be a non-empty string", 0)
  end
  check_model(model)
  local mods, reserved = {}, {}
  for i, name in ipairs(M.SHEETS) do
    mods[i] = require("strata.report.sheets." .. name)
    table.move(mods[i].names or {}, 1, #(mods[i].names or {}), #reserved + 1,
               reserved)
  end
  local run = model.run or {}
  local wb <close>, ctx = sheet.open(path, { reserved = reserved,
    properties = {
      title = "strata validation report"
        .. (run.host and (": " .. run.host) or ""),
      subject = "verdict " .. tostring(model.verdict or "none"),
      comments = "written by strata " .. tostring(run.version or ""),
    } })
  for _, m in ipairs(mods) do
    if m.plan then m.plan(ctx, model) end
  end
  for _, m in ipairs(mods) do m.write(ctx, model) end
  common.close_book(wb, path)
end

return M
