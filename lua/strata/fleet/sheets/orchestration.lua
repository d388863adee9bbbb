-- strata.fleet.sheets.orchestration: the fleet workbook's Orchestration
-- sheet: the srun steps (wall time, slowest node, overhead) and each node's
-- launch and work.
local sheet = require "strata.report.sheet"

local M = {}

function M.write(ctx, fm)
  local F = ctx.F
  local ws = sheet.plain(ctx, "Orchestration", { 10, 8, 10, 14, 14, 12 })
  local ov = fm.overhead
  ws:write(0, 0, "Steps: one srun per node and phase; launch = srun started to the "
    .. "node's first record; overhead = the step's wall time beyond its slowest node's own work", F.note)
  sheet.header(ws, F, 2, { "Phase", "Tasks", "Wall s", "Slowest node s", "Overhead s",
                     "Overhead per task s" })
  local r = 3
  for _, s in ipairs(ov.steps) do
    ws:write(r, 0, s.phase or "", F.text)
    ws:write(r, 1, s.tasks, F.num)
    ws:write(r, 2, s.wall_s, F.num)
    ws:write(r, 3, s.slowest_node_s, F.num)
    ws:write(r, 4, s.overhead_s, F.num)
    ws:write(r, 5, s.tasks > 0 and s.overhead_s / s.tasks or nil, F.num)
    r = r + 1
  end
  r = r + 1
  ws:write(r, 0, "Launch median s", F.key)
  ws:write(r, 1, ov.launch_median_s, F.num)
  ws:write(r + 1, 0, "Launch max s", F.key)
  ws:write(r + 1, 1, ov.launch_max_s, F.num)
  ws:write(r + 2, 0, "Run wall s", F.key)
  ws:write(r + 2, 1, fm.wall_s, F.num)
  r = r + 4
  sheet.header(ws, F, r, { "Node", "Phase", "Status", "Launch s", "Node work s", "Results" })
  r = r + 1
  for _, s in ipairs(fm.steps) do
    for _, t in ipairs(s.tasks or {}) do
      ws:write(r, 0, t.node, F.key)
      ws:write(r, 1, s.phase or "", F.text)
      ws:write(r, 2, t.status, F.for_status(t.status == "OK" and "PASS" or "ERROR"))
      ws:write(r, 3, t.start_s, F.num)
      ws:write(r, 4, t.node_s, F.num)
      ws:write(r, 5, t.results, F.num)
      r = r + 1
    end
  end
end

return M
