-- strata.fleet.prometheus: a fleet run as Prometheus metrics in the text
-- exposition format (node_exporter's textfile collector on the node that
-- launched it, or a push to a gateway), so a site charts which node and
-- which link its acceptance runs named, run after run, beside its live
-- metrics.  `strata report FLEET.jsonl --prometheus FILE.prom`.
--
-- Series (every one labelled host = the launching host, through
-- strata.report.prometheus's writer):
--   strata_fleet_verdict{verdict}             1 when the fleet's verdict is PASS
--   strata_fleet_timestamp_seconds            when the run started (Unix time)
--   strata_fleet_nodes{status}                nodes per status
--   strata_node_pass{node,status}             1 when the node passed (PASS or
--                                             WARN), 0 for any other status
--   strata_test_pass{node,test,layer,status}  the same per node and test, as a
--                                             single run's strata_test_pass
--   strata_fleet_suspect{kind,name,state}     1 per node, link or NIC the
--                                             attribution names: state
--                                             "suspect" (confirmed when measured
--                                             again), "unconfirmed" or "watch"
--   strata_fleet_flaky_cells{node}            FLAKY cells through the node
--   strata_fleet_run_flaky_cells            FLAKY cells of the run
local prom = require "strata.report.prometheus"

local M = {}

local PASSED = require("strata.verdict").PASSED

function M.text(fm)
  local run = fm.run or {}
  local ser = prom.series(run.host or "unknown")
  local family, sample = ser.family, ser.sample
  family("strata_fleet_verdict", "1 when the strata fleet run's verdict is PASS, 0 otherwise")
  sample("strata_fleet_verdict", { verdict = fm.verdict or "NONE" }, fm.verdict == "PASS" and 1 or 0)
  local ts = prom.epoch(run.started)
  if ts then
    family("strata_fleet_timestamp_seconds", "when the strata fleet run started, Unix time")
    sample("strata_fleet_timestamp_seconds", {}, ts)
  end
  local per, order = {}, {}
  for _, n in ipairs(fm.nodes or {}) do
    local st = n.status or "NONE"
    if not per[st] then order[#order + 1] = st end
    per[st] = (per[st] or 0) + 1
  end
  table.sort(order)
  family("strata_fleet_nodes", "nodes of the strata fleet run per status")
  for _, st in ipairs(order) do sample("strata_fleet_nodes", { status = st }, per[st]) end
  family("strata_node_pass", "1 when the node passed every rung (PASS, or WARN: past a warn limit), 0 otherwise (the status label)")
  for _, n in ipairs(fm.nodes or {}) do
    sample("strata_node_pass", { node = n.name, status = n.status or "NONE" },
           PASSED[n.status] and 1 or 0)
  end
  family("strata_test_pass", "1 when the test passed on the node (PASS, or WARN), 0 for any other status (the label)")
  for _, n in ipairs(fm.nodes or {}) do
    for _, c in ipairs(fm.columns or {}) do
      local t = n.tests and n.tests[c.id]
      if t then
        sample("strata_test_pass", { node = n.name, test = t.id, layer = t.layer or "",
                                     status = t.status }, PASSED[t.status] and 1 or 0)
      end
    end
  end
  local a = fm.attribution or {}
  family("strata_fleet_suspect", "1 for each node, link or NIC the fleet's attribution names (state: suspect = confirmed, unconfirmed, watch)")
  for _, part in ipairs { { "suspect", a.suspects }, { "unconfirmed", a.unconfirmed },
                          { "watch", a.watch } } do
    for _, s in ipairs(part[2] or {}) do
      sample("strata_fleet_suspect", { kind = s.kind, name = s.name, state = part[1] }, 1)
    end
  end
  family("strata_fleet_flaky_cells", "FLAKY cells (failed, then passed when tried again) through the node")
  for _, f in ipairs(a.flaky or {}) do
    sample("strata_fleet_flaky_cells", { node = f.node }, #f.cells)
  end
  family("strata_fleet_run_flaky_cells", "FLAKY cells of the strata fleet run")
  sample("strata_fleet_run_flaky_cells", {}, #(fm.flaky or {}))
  return ser.text()
end

-- Through path.tmp + rename, as every other output.
function M.write(path, fm)
  require("strata.report.common").write_model("fleet prometheus", path, fm, M.text)
end

return M
