-- strata.outputs: write the workbook, JSON, JUnit and Prometheus textfile
-- from a run model.
-- A failed report write is fatal (raises).
local M = {}

function M.write(model, paths)
  -- the one place the workbook, JSON and JUnit get their text from
  model = require("strata.redact").clean(model)
  if paths.xlsx then
    require("strata.report.workbook").write(paths.xlsx, model)
  end
  if paths.json then
    require("strata.report.json").write(paths.json, model)
  end
  if paths.junit then
    require("strata.report.junit").write(paths.junit, model)
  end
  if paths.prometheus then
    require("strata.report.prometheus").write(paths.prometheus, model)
  end
end

-- "reports/x.xlsx" -> "reports/x.jsonl"
function M.journal_path(xlsx)
  return (xlsx:gsub("%.xlsx$", "")) .. ".jsonl"
end

return M
