-- strata.fleet.sheets.incast: the fleet workbook's Incast sheet: R7 into one
-- receiver from the other nodes' agents.
local sheet = require "strata.report.sheet"

local M = {}

function M.write(ctx, fm)
  local F = ctx.F
  local ws = sheet.plain(ctx, "Incast", { 10, 8, 26, 9, 18, 12, 60 })
  if not fm.incast then
    ws:write(0, 0, "R7 did not run in this fleet run.", F.note)
    return
  end
  ws:write(0, 0, ("R7 incast into %s; senders: the other nodes' agents, in allocation order")
    :format(fm.incast.receiver), F.note)
  sheet.header(ws, F, 2, { "Receiver", "Test", "Cell", "Status", "Headline", "Value", "Reason" })
  local r = 3
  for _, x in ipairs(fm.incast.results) do
    ws:write(r, 0, x.node, F.key)
    ws:write(r, 1, x.id, F.text)
    ws:write(r, 2, require("strata.verdict").label(x.params, x.cell), F.text)
    ws:write(r, 3, x.status, F.for_status(x.status))
    ws:write(r, 4, x.headline or "", F.text)
    local v = x.headline and x.metrics and x.metrics[x.headline]
    ws:write(r, 5, type(v) == "number" and v or nil, F.num)
    ws:write(r, 6, x.reason or "", F.wrap)
    r = r + 1
  end
end

return M
