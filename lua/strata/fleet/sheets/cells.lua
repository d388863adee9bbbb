-- strata.fleet.sheets.cells: the fleet workbook's Cells sheet: every result
-- of the fleet run, one row per node, phase, pair, test, cell and try.
local sheet = require "strata.report.sheet"

local M = {}

function M.write(ctx, fm)
  local F = ctx.F
  local ws = sheet.plain(ctx, "Cells", { 10, 8, 12, 8, 26, 9, 18, 12, 60, 6 })
  sheet.header(ws, F, 0, { "Node", "Phase", "Pair", "Test", "Cell", "Status",
                     "Headline metric", "Value", "Reason", "Try" })
  ws:freeze_panes(1, 1)
  local r = 1
  for _, x in ipairs(fm.results) do
    ws:write(r, 0, x.node, F.key)
    ws:write(r, 1, x.phase or "", F.text)
    ws:write(r, 2, require("strata.fleet.plan").pair_label(x) or "", F.text)
    ws:write(r, 3, x.id, F.text)
    ws:write(r, 4, require("strata.verdict").label(x.params, x.cell), F.text)
    ws:write(r, 5, x.status, F.for_status(x.status))
    ws:write(r, 6, x.headline or "", F.text)
    local v = x.headline and x.metrics and x.metrics[x.headline]
    ws:write(r, 7, type(v) == "number" and v or (v ~= nil and tostring(v) or nil), F.num)
    ws:write(r, 8, x.reason or "", F.wrap)
    ws:write(r, 9, x.try and (x.try .. "/" .. tostring(x.tries or "?")) or "", F.text)
    r = r + 1
  end
  ws:autofilter(0, 0, math.max(1, r - 1), 9)
end

return M
