-- strata.fleet.sheets.thresholds: the fleet workbook's Thresholds sheet:
-- every criterion of the run as the launcher resolved it.
local sheet = require "strata.report.sheet"

local M = {}

-- Every criterion of the run as the launcher resolved it (the nodes got
-- the same files and --set), the fleet model's own (FLEET) among them.
function M.write(ctx, fm)
  local F = ctx.F
  local ws = sheet.plain(ctx, "Thresholds", { 10, 24, 6, 30, 70 })
  ws:write(0, 0, "Every criterion of this run and where it came from (file:line, "
    .. "or --set); FLEET's judge the fleet model (outliers, suspects)", F.note)
  sheet.header(ws, F, 2, { "Test", "Metric", "Op", "Limit", "Source" })
  local r = 3
  for _, c in ipairs(fm.criteria or {}) do
    ws:write(r, 0, c.id, F.key)
    ws:write(r, 1, c.metric, F.text)
    ws:write(r, 2, c.op, F.text)
    ws:write(r, 3, c.text or tostring(c.expr), F.text)
    ws:write(r, 4, tostring(c.source), F.text)
    r = r + 1
  end
end

return M
