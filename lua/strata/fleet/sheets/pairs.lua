-- strata.fleet.sheets.pairs: the fleet workbook's Pairs sheet: per pair test
-- the node x node matrix (row drives, column's agent is the far end; the
-- worst cell's headline; on rails the rows and columns are "node:device"),
-- the same- and cross-rail summary on rails, then every pair as a row.
local sheet = require "strata.report.sheet"
local fmt = require("strata.report.common").fmt

local M = {}

function M.write(ctx, fm)
  local F = ctx.F
  local ws = sheet.plain(ctx, "Pairs", { 14 })
  local p = fm.pairs
  ws:write(0, 0, "Pair matrix: row = the node that drives, column = the node whose agent "
    .. "is the far end; the value is the worst cell's headline", F.note)
  local r = 2
  if not p then
    ws:write(r, 0, "No pair rung ran (fewer than 2 nodes, or R2/R3 not selected).", F.note)
    return
  end
  for _, id in ipairs(p.tests) do
    ws:write(r, 0, id, F.h2)
    r = r + 1
    ws:write(r, 0, "from \\ to", F.header)
    for j, b in ipairs(p.names) do ws:write(r, j, b, F.header) end
    r = r + 1
    for _, a in ipairs(p.names) do
      ws:write(r, 0, a, F.key)
      for j, b in ipairs(p.names) do
        local e = p.cells[id .. "|" .. a .. "|" .. b]
        if e then
          local v = e.value ~= nil and fmt(e.value) or e.status
          ws:write(r, j, e.value ~= nil and (v .. " " .. e.status) or e.status, F.for_status(e.status))
        elseif a == b then
          ws:write(r, j, "-", F.text)
        else
          ws:write(r, j, nil, F.text)
        end
      end
      r = r + 1
    end
    r = r + 1
  end
  if p.by_rail then r = M.rails(ws, F, p, r) end
  ws:write(r, 0, "Pairs", F.h2)
  r = r + 1
  local cols = { "Test", "From", "To", "Status", "Metric", "Value", "Reason" }
  if p.by_rail then cols[#cols + 1] = "Rail" end
  local keys, gpu = {}, false
  for k, e in pairs(p.cells) do
    keys[#keys + 1] = k
    gpu = gpu or e.gpu ~= nil
  end
  if gpu then cols[#cols + 1] = "GPU" end
  sheet.header(ws, F, r, cols)
  r = r + 1
  table.sort(keys)
  for _, k in ipairs(keys) do
    local e = p.cells[k]
    ws:write(r, 0, e.id, F.text)
    ws:write(r, 1, e.a, F.text)
    ws:write(r, 2, e.b, F.text)
    ws:write(r, 3, e.status, F.for_status(e.status))
    ws:write(r, 4, e.metric or "", F.text)
    ws:write(r, 5, e.value, F.num)
    ws:write(r, 6, e.reason or "", F.wrap)
    if p.by_rail then ws:write(r, 7, e.rail or "", F.text) end
    if gpu then ws:write(r, #cols - 1, e.gpu or "", F.text) end
    r = r + 1
  end
  ws:set_column(6, 6, 70)
end

-- On rails: same rail (device i to device i) and cross rail apart, per
-- test (strata.fleet.model.rail_summary).  Returns the next row.
function M.rails(ws, F, p, r)
  ws:write(r, 0, "Rails: same rail = device i to device i of the other node, cross rail = "
    .. "device i to device j", F.h2)
  r = r + 1
  sheet.header(ws, F, r, { "Test", "Rail", "Pairs", "FAIL/ERROR", "Metric", "Median", "Worst" })
  r = r + 1
  for _, x in ipairs(p.by_rail) do
    ws:write(r, 0, x.id, F.text)
    ws:write(r, 1, x.rail, F.text)
    ws:write(r, 2, x.pairs, F.num)
    ws:write(r, 3, x.bad, F.num)
    ws:write(r, 4, (x.metric or "") .. (x.unit and (" (" .. x.unit .. ")") or ""), F.text)
    ws:write(r, 5, x.median, F.num)
    ws:write(r, 6, x.worst, F.num)
    r = r + 1
  end
  return r + 1
end

return M
