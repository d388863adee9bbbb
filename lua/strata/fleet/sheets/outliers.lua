-- strata.fleet.sheets.outliers: the fleet workbook's Outliers sheet: the
-- cells below FLEET.node_ratio x the fleet median of the same cell.
local sheet = require "strata.report.sheet"

local M = {}

function M.write(ctx, fm)
  local F = ctx.F
  local ws = sheet.plain(ctx, "Outliers", { 10, 8, 26, 18, 12, 12, 8, 10 })
  ws:write(0, 0, fm.ratio.value and ("Nodes whose cell is below %g x the fleet median "
    .. "of the same cell (%s); cells with fewer than 3 nodes are not judged")
      :format(fm.ratio.value, fm.ratio.source) or fm.ratio.source, F.note)
  sheet.header(ws, F, 2, { "Node", "Test", "Cell", "Metric", "Value", "Fleet median",
                     "Ratio", "Better is" })
  local r = 3
  for _, o in ipairs(fm.outliers) do
    ws:write(r, 0, o.node, F.key)
    ws:write(r, 1, o.id, F.text)
    ws:write(r, 2, o.cell, F.text)
    ws:write(r, 3, o.metric, F.text)
    ws:write(r, 4, o.value, F.outlier)
    ws:write(r, 5, o.median, F.num)
    ws:write(r, 6, o.ratio, F.num)
    ws:write(r, 7, o.direction == "max" and "lower" or "higher", F.text)
    r = r + 1
  end
  if #fm.outliers == 0 then ws:write(r, 0, "No outlier.", F.note) end
end

return M
