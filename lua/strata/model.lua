-- strata.model: the shapes every verdict travels in, declared once (Redis's
-- habit: one struct, one owner, commented fields), with their formatting.
-- The runner, strata.thresholds, strata.verdict, strata.compare, the fleet
-- model and every report writer build and read these through here:
--
--   criterion  one resolved rule of a test (thresholds.resolve)
--   check      one criterion judged against one result (thresholds.judge)
--   test info  what a plan says of a test (runner, verdict.build)
--   roll-up    a test's cells rolled up (verdict.test)
--   run model  what every writer reads (verdict.build)
--
-- and: the one table of operator symbols, the direction of "better", a
-- cell's key, and the "(= v)" a resolved limit shows.
local common = require "strata.report.common"

local M = {}

local fmt = common.fmt

-- --- operators ------------------------------------------------------------

-- Every operator a criterion may use: its symbol in texts (checks, the
-- journal, stderr: ASCII), on the workbook's Thresholds sheet (the
-- mathematical sign), and the symbol of the same comparison not holding
-- ("8 < 20" for a min that failed).
M.OPS = {
  min = { text = ">=", sheet = "\u{2265}", negated = "<" },
  max = { text = "<=", sheet = "\u{2264}", negated = ">" },
  eq = { text = "==", sheet = "=", negated = "!=" },
  ne = { text = "!=", sheet = "\u{2260}", negated = "==" },
  ["in"] = { text = "in", sheet = "in", negated = "not in" },
}

-- Groups of criteria (strata.criteria) and how texts name them.
M.GROUPS = {
  any_of = { text = "any of" },   -- one member must hold
  all_of = { text = "all of" },   -- every member must hold
}

-- The symbol of op in a text, on the sheet, or negated; the op itself for
-- one it does not know.
function M.symbol(op, where)
  local o = M.OPS[op]
  return o and o[where or "text"] or op
end

-- The cells a criterion judges, as its text ends: " where qps >= 4, size
-- >= 65536" from the journal's where ({ {param, op, value}, ... }), or "".
function M.where_text(where)
  local parts = {}
  for _, w in ipairs(where or {}) do
    parts[#parts + 1] = ("%s %s %s"):format(w.param, M.symbol(w.op, "text"), fmt(w.value))
  end
  return #parts > 0 and (" where " .. table.concat(parts, ", ")) or ""
end

-- --- better ---------------------------------------------------------------

-- Whether a higher value of metric is better: true, false, or nil (only
-- "changed").  The first min or max criterion on metric says (min: higher
-- is better; max: lower), criteria of test id only when id is given; else
-- its unit, when given (a bandwidth or rate: higher; a time: lower).
function M.better(criteria, metric, unit, id)
  for _, c in ipairs(criteria or {}) do
    if c.metric == metric and (id == nil or c.id == id) then
      if c.op == "min" then return true end
      if c.op == "max" then return false end
    end
  end
  if unit then
    local kind = require("strata.units").kind(unit)
    if kind == "bandwidth" or kind == "rate" then return true end
    if kind == "time" then return false end
  end
  return nil
end

-- --- cells ----------------------------------------------------------------

-- A cell's key and label: "size=4096,qps=1", its test's parameters in
-- order ("" for a test without a matrix).  (Made for every result by the
-- Metrics sheet and JUnit: no list.)
function M.label(params, cell)
  if not params or not cell then return "" end
  local out
  for _, p in ipairs(params) do
    local v = cell[p]
    if v ~= nil then
      local part = p .. "=" .. fmt(v)
      out = out and (out .. "," .. part) or part
    end
  end
  return out or ""
end

-- --- criterion ------------------------------------------------------------

-- A resolved criterion (thresholds.resolve; the journal's thresholds record
-- keeps all but `limit` and `value`):
--   id       the test's ID
--   metric   the metric judged, a pattern (delta.*.x), a derived cv(...),
--            or a group's label
--   op       min max eq ne in, or any_of / all_of for a group
--   value    the limit as written (number, text, list); expr the same
--   ref      the reference a limit expression names (site.x, R2.bw, ...)
--   limit    the parsed limit { kind = value|ref, factor, site|test|... }
--   source   file:line of the limit ("--set ..." for a --set)
--   text     "bw_gbps >= 0.9 x site.rdma.line_rate_gbps", or a group's
--            "benefit: any of (a >= 1; b >= 2)"
--   warn     the WARN band beside op: a criterion of the same shape
--            (band = "warn"), or nil
--   members  a group's criteria, in the order written, or nil
--   where    the matrix cells a limit judges: { {param, op, value,
--            source}, ... } (strata.criteria; the journal keeps all but
--            source); nil: every cell
function M.criterion(f)
  return { id = f.id, metric = f.metric, op = f.op, value = f.value,
           expr = f.value, ref = f.ref, limit = f.limit, source = f.source,
           band = f.band, members = f.members, where = f.where }
end

-- The text a resolved limit adds to a criterion's text: " (= 90)" for a
-- reference that resolved, " (= 8 ... 10)" over cells that differed; ""
-- for a plain number (its text says it).
function M.resolved(ref, lo, hi)
  if not ref or lo == nil then return "" end
  if hi ~= nil and lo ~= hi then
    return (" (= %s \u{2026} %s)"):format(fmt(lo), fmt(hi))
  end
  return (" (= %s)"):format(fmt(lo))
end

-- --- check ----------------------------------------------------------------

-- One criterion judged against one result (thresholds.judge; journaled in
-- the result record's checks):
--   metric     the metric judged (a pattern's match; a group's label)
--   criterion  the criterion's metric (the pattern; the label)
--   op, expr, source   the criterion's
--   limit      what the limit resolved to here; value: the measured value
--   ok         false: FAIL (or ERROR when unresolved = true)
--   why        why it failed (or could not be evaluated)
--   text       the criterion's text with " (= limit)"; a group's says
--              which members held ("benefit: a = 1.2 >= 1.1; b = 8 < 20")
--   warn       true: held the FAIL limit, past the warn limit (WARN);
--              warn_limit, warn_text, warn_why say which
--   explained  true: the spec explained the failed fact in words
--              (t.explain), appended to why and first in the reason
--   not_judged true (with ok = true): the limit is a site.<key> the site
--              file does not set; why = "not judged: ..." (issue 27)
--   out_of_scope  true (with not_judged): the cell is outside the
--              criterion's where; why = "not judged in this cell: ..."
--   members, held, detail   a group's: its members' checks, the names of
--              those that held, the members' outcomes as text
function M.check(c, f)
  return { metric = f.metric, criterion = c.metric, op = c.op,
           expr = c.expr, limit = f.limit, value = f.value, text = f.text,
           source = c.source }
end

-- fn(leaf, top) for each check of a metric: a check, or each member of a
-- group's check, nested (top: the check the verdict reads: the group's).
local function leaves(c, top, fn)
  if c.members then
    for _, m in ipairs(c.members) do leaves(m, top, fn) end
  else
    fn(c, top)
  end
end
M.leaves = leaves

-- The metrics a result's failed checks name: { [metric] = true }, to be
-- read only (NONE, shared, where none failed: called for every result by
-- the Cells, Metrics, pivot and Counters sheets).  A group that failed
-- names its members that did not hold; one that held names none.
local NONE = {}
function M.failed_metrics(r)
  local bad
  for _, c in ipairs(r.checks or NONE) do
    if not c.ok then
      leaves(c, c, function(l)
        if not l.ok and l.metric then
          bad = bad or {}
          bad[l.metric] = true
        end
      end)
    end
  end
  return bad or NONE
end

-- The metrics a result's WARNed checks name (the same way).
function M.warned_metrics(r)
  local warned
  for _, c in ipairs(r.checks or NONE) do
    if c.ok and c.warn then
      leaves(c, c, function(l)
        if l.warn and l.metric then
          warned = warned or {}
          warned[l.metric] = true
        end
      end)
    end
  end
  return warned or NONE
end

-- --- test info, roll-up, run model ---------------------------------------

-- What a plan says of a test (the plan record; verdict.test's `info`):
--   id, layer, title, params (matrix order), cells (planned count),
--   needs, headline (the Summary's metric), units, source (test{}'s
--   file:line), record_only (true: gates nothing: gate = false, --no-gate)
-- t: a loaded spec test (cells: its cell count), or a result record.
function M.test_info(t, cells)
  return { id = t.id, layer = t.layer, title = t.title,
           params = t.params or {}, cells = cells or t.cells, needs = t.needs,
           headline = t.headline, units = t.units or {},
           source = t.where or t.source,
           record_only = (t.gate == false or t.record_only) or nil }
end

-- A cell's result record (the runner journals it; verdict.cell gives it
-- status and reason): the test's id, layer, title, params, cells (planned
-- count), headline, unit (the headline's), units, source (test{}'s
-- file:line), tags; and the cell's (from f): cell (its parameters),
-- cell_index, started, duration_s, outcome (the raw outcome: kind = ok,
-- skip, error, timeout, crashed, stopped, blocked, gated_skip, ...),
-- metrics, checks, tables, notes, series; try and tries (the fleet's
-- --until-pass/--repeat: this try's number and the most tries, nil when a
-- cell runs once).  One constructor, sized for every field (and status,
-- reason).
function M.result(t, ncells, unit, f)
  return { type = "result", id = t.id, layer = t.layer, title = t.title,
           params = t.params, cells = ncells, headline = t.headline,
           unit = unit, units = t.units, source = t.where, tags = t.tags,
           cell = f.cell, cell_index = f.cell_index, started = f.started,
           duration_s = f.duration_s, outcome = f.outcome,
           tables = f.tables, notes = f.notes, series = f.series,
           metrics = f.metrics, checks = f.checks, try = f.try,
           tries = f.tries, status = nil, reason = nil }
end

-- A test rolled up (verdict.test): status and reason (the worst cell's),
-- criteria (resolved: limit_lo, limit_hi, limit_other per criterion, warn
-- and members alike), headline (text), headline_value, headline_metric,
-- cells (recorded), cells_planned, cells_skipped, params, duration_s,
-- source, needs, record_only, and id, layer, title.
function M.rollup(info, f)
  return {
    id = info.id, layer = info.layer, title = info.title, status = f.status,
    reason = f.reason, criteria = f.criteria,
    headline = f.headline, headline_value = f.headline_value,
    headline_metric = f.headline_metric,
    cells = f.cells, cells_planned = f.cells_planned,
    cells_skipped = f.cells_skipped, params = info.params or {},
    duration_s = f.duration_s, source = info.source, needs = info.needs,
    record_only = f.record_only,
  }
end

-- The run model every writer reads (verdict.build fills it):
--   run        the run record (argv, host, started, ended, interrupted,
--              killed, files, ...)
--   inventory  the host's facts; criteria: the thresholds record's list
--   results    every result record, status and reason rebuilt
--   tests      the roll-ups, in plan order; layers: the ladder
--   counts     tests per status (+ total); warnings: gating WARN tests
--   verdict, message, lowest_failed, missing   the headline
--   baseline   the --baseline run's metrics, if any; spec_roots
function M.run_model(layers)
  return { run = {}, inventory = {}, criteria = {}, results = {},
           tests = {}, layers = layers }
end

return M
