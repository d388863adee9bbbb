-- strata.fleet.actbook: the fleet workbook's Severity sheet and the
-- JSON's `severity` and `act`: the severity model the run used (each rule
-- with its file:line) and, per node, what it asks, what strata did to the
-- scheduler (--act) and why not.  Read from fm.severity and fm.act
-- (strata.fleet.act), never decided here.
local sev = require "strata.severity"

local M = {}

local COLS = { "Node", "Node status", "Action", "Test", "Status", "Rule",
               "Scheduler state before", "Reason before", "Done", "Command / why" }

function M.write_sheet(ctx, fm)
  if not fm.severity then return end
  local F = ctx.F
  local ws = ctx.wb:worksheet("Severity")
  for c, w in ipairs({ 10, 10, 8, 8, 8, 34, 20, 30, 10, 70 }) do ws:set_column(c - 1, c - 1, w) end
  ws:write(0, 0, "Severity: what the verdicts ask of the scheduler", F.title)
  ws:write(2, 0, "Rules from", F.key)
  ws:write(2, 1, tostring(fm.severity.source), F.text)
  local r = 3
  for i, rule in ipairs(fm.severity.rules or {}) do
    ws:write(r, 0, ("Rule %d"):format(i), F.key)
    ws:write(r, 1, sev.rule_text(rule), F.text)
    ws:write(r, 5, rule.source or "", F.text)
    r = r + 1
  end
  ws:write(r, 0, "The first rule a node's own rungs match decides (its lowest matching "
    .. "test); no match: none. Pair rows name two nodes and drain neither.", F.note)
  r = r + 2
  local act = fm.act or { nodes = {}, modes = {} }
  ws:write(r, 0, "Asked", F.key)
  ws:write(r, 1, #(act.modes or {}) > 0 and ("--act " .. table.concat(act.modes, ","))
           or "nothing (no --act): the actions below are what the model asks", F.text)
  r = r + 2
  for c, h in ipairs(COLS) do ws:write(r, c - 1, h, F.header) end
  ws:freeze_panes(r + 1, 1)
  r = r + 1
  local status_of = {}
  for _, n in ipairs(fm.nodes) do status_of[n.name] = n.status end
  for _, a in ipairs(act.nodes or {}) do
    local ns = status_of[a.node] or ""
    ws:write(r, 0, a.node, F.key)
    ws:write(r, 1, ns, F.status[ns] or F.text)
    ws:write(r, 2, a.action, F.text)
    ws:write(r, 3, a.test or "", F.text)
    ws:write(r, 4, a.status or "", F.status[a.status or ""] or F.text)
    ws:write(r, 5, a.rule and ("%d (%s)"):format(a.rule, a.source) or "", F.text)
    ws:write(r, 6, a.state or "", F.text)
    ws:write(r, 7, a.slurm_reason or "", F.wrap)
    ws:write(r, 8, a.done or (a.error and "FAILED") or "", F.text)
    ws:write(r, 9, a.command and (a.command .. (a.error and (": " .. a.error) or ""))
             or a.why or "", F.wrap)
    r = r + 1
  end
end

-- The JSON's keys: severity (the model) and act (per node, as above).
function M.json(fm, doc)
  doc.severity = fm.severity
  doc.act = fm.act
  return doc
end

return M
