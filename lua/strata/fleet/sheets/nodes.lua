-- strata.fleet.sheets.nodes: the fleet workbook's Nodes sheet: every node's
-- own rungs, one row per node and test (status, headline, reason, criterion).
local sheet = require "strata.report.sheet"

local M = {}

function M.write(ctx, fm)
  local F = ctx.F
  local ws = sheet.plain(ctx, "Nodes", { 10, 8, 10, 34, 9, 40, 60, 40 })
  sheet.header(ws, F, 0, { "Node", "Test", "Layer", "Title", "Status", "Headline",
                     "Reason", "Criterion" })
  ws:freeze_panes(1, 2)
  local r = 1
  for _, n in ipairs(fm.nodes) do
    for _, c in ipairs(fm.columns) do
      local t = n.tests[c.id]
      if t then
        ws:write(r, 0, n.name, F.key)
        ws:write(r, 1, t.id, F.text)
        ws:write(r, 2, t.layer, F.text)
        ws:write(r, 3, t.title, F.wrap)
        ws:write(r, 4, t.status, F.for_status(t.status))
        ws:write(r, 5, t.headline or "", F.wrap)
        ws:write(r, 6, t.reason or "", F.wrap)
        ws:write(r, 7, t.criterion or "", F.wrap)
        r = r + 1
      end
    end
  end
  ws:autofilter(0, 0, math.max(1, r - 1), 7)
end

return M
