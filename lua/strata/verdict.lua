-- strata.verdict: the one owner of every verdict (docs/internals.md, "Data
-- flow").  From a cell's raw outcome and its checks to the cell's status and
-- reason; from a test's cells to its roll-up; the needs gate; the run's
-- headline (PASS / INCOMPLETE / FAIL), what was not measured and the lowest
-- failed rung; and the run model every writer reads, built from journal
-- records.  The live run and `strata report` both call M.build on the
-- records read back from the journal, so a replay shows what the run showed.
--
-- Cell statuses:  PASS WARN FAIL ERROR STOPPED BLOCKED SKIP (WARN: every
--                 check held its FAIL limit, one was past its warn limit)
-- Test statuses:  the cells' worst, plus INCOMPLETE (fewer cells recorded
--                 than planned: the run ended first) and NOT RUN (planned,
--                 never started).
local common = require "strata.report.common"
local model = require "strata.model"

local M = {}

local fmt = common.fmt

-- Display order of statuses (Summary counts, JSON counts).
M.STATUSES = { "PASS", "WARN", "FAIL", "ERROR", "BLOCKED", "INCOMPLETE",
               "STOPPED", "SKIP", "NOT RUN" }

-- Worst first when rolling cells up into a test.
-- FLAKY (a fleet cell that failed a try and passed another, --until-pass)
-- is worse than WARN and fails nothing.
local RANK = { ERROR = 8, FAIL = 7, BLOCKED = 6, STOPPED = 5,
               INCOMPLETE = 4, FLAKY = 3.5, WARN = 3, PASS = 2, SKIP = 1 }

-- Statuses that passed: a `needs` gate opens on them, the run's verdict
-- stays PASS (WARN: "with N warnings").
M.PASSED = { PASS = true, WARN = true }

-- Statuses that put a test's rung below the line (lowest failed rung).
local FAILED = { FAIL = true, ERROR = true }
-- Statuses of a test whose rung was not measured.
local UNMEASURED = { SKIP = true, INCOMPLETE = true, STOPPED = true,
                     ["NOT RUN"] = true }

-- "size=4096,qps=1": a cell in its test's parameter order (strata.model).
M.label = model.label

-- Items of list grouped by item.id (criteria, results), in list order.
function M.by_test(list)
  local by = {}
  for _, x in ipairs(list or {}) do
    by[x.id] = by[x.id] or {}
    table.insert(by[x.id], x)
  end
  return by
end

local function first_line(s)
  return s and (tostring(s):gsub("\n.*", "")) or nil
end

-- --- one cell -----------------------------------------------------------

-- A cell's status and reason from its raw outcome (rec.outcome, as the
-- runner journals it) and its checks.  Journals older than the outcome
-- field carry status/reason only: those stand as written, but for the old
-- "ERROR interrupted" of a SIGINT, which is STOPPED.
function M.cell(rec)
  -- a fleet cell whose tries both failed and passed (strata.fleet.tries)
  if rec.flaky then return "FLAKY", rec.flaky end
  local o = rec.outcome
  if not o then
    if rec.status == "ERROR" and rec.reason == "interrupted" then
      return "STOPPED", "stopped by a signal before the cell finished"
    end
    return rec.status or "ERROR", rec.reason
  end
  local k = o.kind
  if k == "blocked" then return "BLOCKED", o.why end
  if k == "gated_skip" or k == "skip" then return "SKIP", o.why end
  if k == "stopped" then
    return "STOPPED", "stopped by a signal before the cell finished"
  end
  if k == "timeout" then
    local label = M.label(rec.params, rec.cell)
    return "ERROR", ("timed out after %s s%s (timeout set at %s)"):format(
      fmt(o.timeout), label ~= "" and (" in cell " .. label) or "",
      tostring(rec.source))
  end
  if k == "crashed" then return "ERROR", "crashed: " .. tostring(o.why) end
  if k == "error" then return "ERROR", o.why end
  -- k == "ok": the spec returned; its counters and checks decide
  if o.counter_errors and #o.counter_errors > 0 then
    -- the spec asked for these counters: a run without them is not a
    -- measurement to judge
    return "ERROR", "counters could not be read: " .. o.counter_errors[1]
  end
  local failed, warned   -- made only for a failed (warned) check
  local unjudged -- the first check a missing site expectation left out
  for _, c in ipairs(rec.checks or {}) do
    if c.unresolved then return "ERROR", c.why end
    -- (a cell outside a criterion's where is not news in its reason)
    if c.not_judged and not c.out_of_scope then
      unjudged = unjudged or (c.metric .. " " .. c.why)
    end
    if not c.ok then
      failed = failed or {}
      -- a failure the spec explained in words (t.explain) leads the reason
      table.insert(failed, c.explained and 1 or #failed + 1, c.why)
    elseif c.warn then
      warned = warned or {}
      warned[#warned + 1] = c.warn_why or c.text
    end
  end
  if o.fail then return "FAIL", o.fail end
  if failed and #failed > 0 then return "FAIL", table.concat(failed, "; ") end
  if warned then return "WARN", table.concat(warned, "; ") end
  return "PASS", unjudged
end

-- --- one test -----------------------------------------------------------

-- Was metric outside its criterion's where in cell r (a check saying so)?
local function out_of_scope(r, metric)
  for _, k in ipairs(r.checks or {}) do
    if k.out_of_scope and (k.criterion or k.metric) == metric then return true end
  end
  return false
end

-- The criteria with a where that judged none of the measured cells:
-- "bw_gbps >= 0.9 x line_rate_gbps where qps >= 4" for the test's reason.
local function judged_nowhere(cells)
  local judged, order, text = {}, {}, {}
  for _, r in ipairs(cells) do
    if r.status ~= "SKIP" then
      for _, k in ipairs(r.checks or {}) do
        local key = (k.criterion or k.metric) .. "|" .. tostring(k.op)
        if judged[key] == nil then
          order[#order + 1] = key
          judged[key] = false
        end
        if k.out_of_scope then text[key] = text[key] or k.text
        else judged[key] = true end
      end
    end
  end
  local out = {}
  for _, key in ipairs(order) do
    if not judged[key] then out[#out + 1] = text[key] end
  end
  return out
end

-- The value of the headline metric the Summary shows: the worst cell's
-- (lowest for a `min` criterion, highest for `max`, else the last).
local function headline(metric, units, cells, crits)
  if not metric then
    for _, c in ipairs(crits) do
      -- a metric it reports: no pattern, group or derived cv(...)
      if not c.metric:find("[*(]") and not c.members then
        metric = c.metric
        break
      end
    end
  end
  if not metric then return nil end
  -- the worst cell: the lowest where higher is better (strata.model),
  -- among the cells the metric's criteria judge (a where leaves some out)
  local up = model.better(crits, metric)
  local op = up == true and "min" or up == false and "max" or nil
  local best, n = nil, 0
  local judged = {}
  for _, r in ipairs(cells) do
    if not out_of_scope(r, metric) then judged[#judged + 1] = r end
  end
  if #judged < #cells and #judged > 0 then cells = judged else judged = nil end
  for _, r in ipairs(cells) do
    local v = r.metrics and r.metrics[metric]
    if v ~= nil then
      n = n + 1
      if best == nil or type(v) ~= "number" or type(best) ~= "number" then
        best = best == nil and v or (op and best or v)
      elseif op == "min" then
        if v < best then best = v end
      elseif op == "max" then
        if v > best then best = v end
      else
        best = v
      end
    end
  end
  if best == nil then return nil end
  local unit = require("strata.units").of(units, metric)
  local text = metric .. " = " .. fmt(best) .. (unit and (" " .. unit) or "")
  if n > 1 then
    text = text .. (" (%s of %d%s cells)"):format(op == "min" and "lowest"
      or op == "max" and "highest" or "last", n, judged and " judged" or "")
  end
  return text, common.finite(best) and best or nil, metric
end

-- One criterion with what it resolved to in the checks cks made of it:
-- { metric, op, expr, text, source, limit_lo, limit_hi, limit_other,
--   warn = the same for its WARN band, members = the same for a group's }.
local function resolve_one(c, cks)
  local lo, hi, other, wlo, whi, wother
  for _, k in ipairs(cks) do
    local l, w = k.limit, k.warn_limit
    if type(l) == "number" then
      lo, hi = math.min(lo or l, l), math.max(hi or l, l)
    elseif l ~= nil then
      other = l
    end
    if type(w) == "number" then
      wlo, whi = math.min(wlo or w, w), math.max(whi or w, w)
    elseif w ~= nil then
      wother = w
    end
  end
  local r = { id = c.id, metric = c.metric, op = c.op, expr = c.expr,
              text = c.text, source = c.source, ref = c.ref,
              limit_lo = lo, limit_hi = hi, limit_other = other }
  if c.warn then
    local w = c.warn
    r.warn = { id = w.id, metric = w.metric, op = w.op, expr = w.expr,
               text = w.text, source = w.source, ref = w.ref,
               limit_lo = wlo, limit_hi = whi, limit_other = wother }
  end
  if c.members then
    r.members = {}
    for i, mem in ipairs(c.members) do
      local sub = {}
      for _, k in ipairs(cks) do
        if k.members and k.members[i] then sub[#sub + 1] = k.members[i] end
      end
      r.members[i] = resolve_one(mem, sub)
    end
  end
  return r
end

-- A test's criteria with what they resolved to in its cells.
local function resolved_criteria(crits, cells)
  local out = {}
  for i, c in ipairs(crits) do
    local cks = {}
    for _, r in ipairs(cells) do
      for _, k in ipairs(r.checks or {}) do
        if (k.criterion or k.metric) == c.metric and k.op == c.op then
          cks[#cks + 1] = k
        end
      end
    end
    out[i] = resolve_one(c, cks)
  end
  return out
end

-- Roll a test's cells up.  info: the planned test (id, layer, title,
-- params, cells = planned count, headline, units, source); cells: its
-- journaled results; crits: its criteria; ended: the run reached its end
-- record.
function M.test(info, cells, crits, ended)
  local planned = info.cells or #cells
  local worst, all_skip, duration, skipped = nil, #cells > 0, 0, {}
  for _, r in ipairs(cells) do
    local s = r.status
    duration = duration + (r.duration_s or 0)
    if s ~= "SKIP" then all_skip = false end
    if s == "SKIP" then skipped[#skipped + 1] = r end
    if s ~= "SKIP" and (not worst or (RANK[s] or 8) > (RANK[worst] or 8)) then
      worst = s
    end
  end
  local status
  if #cells == 0 then status = "NOT RUN"
  elseif all_skip then status = "SKIP"
  else status = worst end
  -- a test the needs gate stopped has one record standing for all cells
  local o = cells[1] and cells[1].outcome
  local gated = (o and (o.kind == "blocked" or o.kind == "gated_skip"))
    or (not o and #cells == 1 and cells[1].cells == 1)
  local reason
  for _, r in ipairs(cells) do
    if r.status == status and r.reason then
      reason = first_line(r.reason)
      local label = M.label(info.params, r.cell)
      if planned > 1 and label ~= "" then
        reason = "[" .. label .. "] " .. reason
      end
      break
    end
  end
  local missing = gated and 0 or planned - #cells
  if missing > 0 and (M.PASSED[status] or status == "SKIP") then
    status = "INCOMPLETE"
    reason = ("%d of %d cells recorded: the run %s before the rest"):format(
      #cells, planned, ended and "stopped" or "was killed")
  elseif status == "NOT RUN" then
    reason = ended and "the run stopped before this test"
      or "the run was killed before this test"
  end
  if status == "PASS" and #skipped > 0 then
    -- a cell that did not measure inside a passing test: say so
    local s = skipped[1]
    local label = M.label(info.params, s.cell)
    reason = ("%d of %d cells skipped: %s%s"):format(#skipped, #cells,
      label ~= "" and ("[" .. label .. "] ") or "", first_line(s.reason) or "")
  end
  local nowhere = judged_nowhere(cells)
  if #nowhere > 0 and M.PASSED[status] then
    -- every cell fell outside the criterion's where: nothing was judged
    reason = ("judged in no cell: %s%s"):format(table.concat(nowhere, "; "),
      reason and ("; " .. reason) or "")
  end
  local htext, hvalue, hmetric = headline(info.headline, info.units, cells, crits)
  local record_only = info.record_only or nil
  if record_only then
    -- shown as judged, marked: it gates neither the run nor its needers
    reason = "record only (gates nothing)" .. (reason and (": " .. reason) or "")
  end
  return model.rollup(info, {
    status = status, reason = reason,
    criteria = resolved_criteria(crits, cells),
    headline = htext, headline_value = hvalue, headline_metric = hmetric,
    cells = #cells, cells_planned = planned, cells_skipped = #skipped,
    duration_s = duration, record_only = record_only,
  })
end

-- The needs gate: nil when every need PASSed, else "BLOCKED"|"SKIP", why.
-- rolled: id -> test roll-up (M.test) of the tests run so far.
function M.gate(needs, rolled)
  local blocked, skipped
  for _, n in ipairs(needs or {}) do
    local t = rolled[n]
    if t and t.record_only then goto next end   -- a record-only need gates nothing
    local s = t and t.status or "NOT RUN"
    local why = t and t.reason and (": " .. t.reason) or ""
    if s == "SKIP" then
      skipped = skipped or ("needs %s, which was skipped%s"):format(n, why)
    elseif not M.PASSED[s] then
      blocked = blocked or ("needs %s, which is %s%s"):format(n, s, why)
    end
    ::next::
  end
  if blocked then return "BLOCKED", blocked end
  if skipped then return "SKIP", skipped end
end

-- --- the run ------------------------------------------------------------

-- A reason cut to about n characters at a word boundary.
local function short(s, n)
  n = n or 72
  s = first_line(s)
  if utf8.len(s) and utf8.len(s) <= n then return s end
  local cut = utf8.offset(s, n + 1) or (#s + 1)
  local head = s:sub(1, cut - 1)
  return (head:match("^(.*%S)%s") or head) .. "\u{2026}"
end

-- The headline of tests that all gate (M.headline's, below).
local function judge_run(tests, expect, interrupted)
  local expected
  if expect then
    expected = {}
    for _, l in ipairs(expect) do expected[l] = true end
  end
  local lowest, bad, rank = nil, 0, require("strata.spec").LAYER_RANK
  local warned = {}
  local missing, by_layer, not_expected = {}, {}, 0
  for _, t in ipairs(tests) do
    if FAILED[t.status] or t.status == "BLOCKED" then bad = bad + 1 end
    if t.status == "WARN" then warned[#warned + 1] = t.id end
    if FAILED[t.status] then
      if not lowest or (rank[t.layer] or 99) < (rank[lowest.layer] or 99) then
        lowest = { layer = t.layer, id = t.id, status = t.status }
      end
    end
    if UNMEASURED[t.status] then
      if expected and not expected[t.layer] and t.status == "SKIP" then
        not_expected = not_expected + 1
      else
        local m = by_layer[t.layer]
        if not m then
          m = { layer = t.layer, tests = {} }
          by_layer[t.layer] = m
          missing[#missing + 1] = m
        end
        m.tests[#m.tests + 1] = { id = t.id, status = t.status,
                                  reason = t.reason }
      end
    end
  end
  if #tests == 0 then return "NO TESTS", "No test ran.", nil, missing end
  local verdict, msg
  if bad > 0 then
    verdict = "FAIL"
    if lowest then
      msg = ("Lowest failed rung: %s (%s %s) \u{2014} results above it are "
             .. "not trusted"):format(lowest.layer, lowest.id, lowest.status)
    else
      msg = ("No test failed, but %d %s blocked."):format(bad,
        bad == 1 and "is" or "are")
    end
  elseif #missing > 0 or interrupted then
    verdict = "INCOMPLETE"
    local parts = {}
    for _, m in ipairs(missing) do
      -- per rung the first cause (a test's own reason, not "needs ..."),
      -- and how many more tests the rung lost
      local cause = m.tests[1]
      for _, t in ipairs(m.tests) do
        if not tostring(t.reason or ""):match("^needs ") then cause = t break end
      end
      parts[#parts + 1] = ("%s (%s %s%s%s)"):format(m.layer, cause.id,
        cause.status, cause.reason and (": " .. short(cause.reason)) or "",
        #m.tests > 1 and (", +%d more"):format(#m.tests - 1) or "")
    end
    msg = #parts > 0 and ("Not measured: " .. table.concat(parts, "; "))
      or "The run was interrupted."
  else
    verdict = "PASS"
    msg = expected and "Every rung the site expects was measured and passed."
      or "Every planned rung was measured and passed."
    if #warned > 0 then
      msg = msg:gsub("%.$", (", with %d warning%s (%s)."):format(#warned,
        #warned == 1 and "" or "s", table.concat(warned, ", ")))
    end
    if not_expected > 0 then
      msg = msg .. (" %d skipped test%s on rungs the site does not expect.")
        :format(not_expected, not_expected == 1 and "" or "s")
    end
  end
  return verdict, msg, lowest, missing
end

-- The headline of a run from its tests.  expect: the rungs (layers) the
-- site says it has (site.site.expect), nil = every rung that was planned.
-- Returns verdict, message, lowest_failed, missing (rungs not measured:
-- { layer, tests = { {id, status, reason} } }).  Record-only tests (gate
-- = false, --no-gate) are left out of it and named after it; a run of
-- record-only tests alone is RECORDED, its message what it would have been.
function M.headline(tests, expect, interrupted)
  local gating, n_rec, by = {}, 0, {}
  for _, t in ipairs(tests) do
    if t.record_only then
      n_rec = n_rec + 1
      by[t.status] = (by[t.status] or 0) + 1
    else
      gating[#gating + 1] = t
    end
  end
  if n_rec == 0 then return judge_run(tests, expect, interrupted) end
  local parts = {}
  for _, st in ipairs(M.STATUSES) do
    if by[st] then parts[#parts + 1] = ("%d %s"):format(by[st], st) end
  end
  if #gating == 0 then
    local wv, wmsg = judge_run(tests, expect, interrupted)
    return "RECORDED", ("Record only: nothing gated (%s). As judged: %s "
      .. "\u{2014} %s"):format(table.concat(parts, ", "), wv, wmsg), nil, {}
  end
  local v, msg, lowest, missing = judge_run(gating, expect, interrupted)
  return v, ("%s Record only (gates nothing): %d test%s, as judged %s.")
    :format(msg, n_rec, n_rec == 1 and "" or "s", table.concat(parts, ", ")),
    lowest, missing
end

-- Per-status counts of tests (every status present, 0 if none).
function M.counts(tests)
  local c = { total = 0 }
  for _, s in ipairs(M.STATUSES) do c[s] = 0 end
  for _, t in ipairs(tests or {}) do
    local st = tostring(t.status)
    c[st] = (c[st] or 0) + 1
    c.total = c.total + 1
  end
  return c
end

-- The folders criteria sources are shown relative to: the plan's, and the
-- folder holding every spec file the run loaded (journals without a plan).
local function spec_roots(files, given)
  local roots = {}
  for _, r in ipairs(given or {}) do roots[#roots + 1] = r end
  local common
  for _, f in ipairs(files or {}) do
    if f.role == "spec" and f.path then
      local dir = tostring(f.path):match("^(.*)/[^/]*$") or "."
      if not common then
        common = dir
      else
        while common ~= "" and dir ~= common
              and dir:sub(1, #common + 1) ~= common .. "/" do
          common = common:match("^(.*)/[^/]*$") or ""
        end
      end
    end
  end
  if common and common ~= "" and common ~= "." then
    roots[#roots + 1] = common
  end
  -- and the thresholds file's folder (specs/ when the run loaded specs/gpu)
  for _, f in ipairs(files or {}) do
    local dir = f.role == "thresholds" and tostring(f.path):match("^(.*)/[^/]*$")
    if dir then roots[#roots + 1] = dir end
  end
  return roots
end

-- The run model (docs/internals.md) from journal records.
function M.build(records)
  local m = model.run_model(require("strata.spec").LAYERS)
  local plan, ended
  for _, r in ipairs(records) do
    if r.type == "run" then
      m.run = r
    elseif r.type == "inventory" then
      m.inventory = r.data or {}
    elseif r.type == "thresholds" then
      m.criteria = r.criteria or {}
    elseif r.type == "plan" then
      plan = r
    elseif r.type == "baseline" then
      m.baseline = { path = r.path, host = r.host, started = r.started,
                     verdict = r.verdict, results = r.results or {} }
    elseif r.type == "result" then
      r.status, r.reason = M.cell(r)
      m.results[#m.results + 1] = r
    elseif r.type == "end" then
      ended = true
      m.run.ended = r.ended
      m.run.interrupted = r.interrupted
    end
  end
  if not ended then m.run.interrupted = true end
  m.run.killed = not ended
  local by_res = M.by_test(m.results)
  local crit_by = M.by_test(m.criteria)
  -- the planned tests in plan order; journals without a plan record (older
  -- ones) know only the tests that ran
  local order = {}
  if plan then
    for _, t in ipairs(plan.tests or {}) do order[#order + 1] = t end
  end
  local known = {}
  for _, t in ipairs(order) do known[t.id] = true end
  for _, r in ipairs(m.results) do
    if not known[r.id] then
      known[r.id] = true
      order[#order + 1] = model.test_info(r)
    end
  end
  local base_by
  if m.baseline then
    m.baseline.index = require("strata.compare").index(m.baseline.results)
    base_by = M.by_test(m.baseline.results)
  end
  for _, info in ipairs(order) do
    local t = M.test(info, by_res[info.id] or {}, crit_by[info.id] or {}, ended)
    if base_by and t.headline_metric then
      -- the baseline's figure by the same rule (worst cell)
      local _, bv = headline(t.headline_metric, info.units,
                             base_by[info.id] or {}, crit_by[info.id] or {})
      t.baseline_value = bv
      t.vs_baseline = require("strata.compare").pct(bv, t.headline_value)
    end
    m.tests[#m.tests + 1] = t
  end
  m.counts = M.counts(m.tests)
  m.warnings = 0   -- tests that WARNed and gate (what --strict reads)
  for _, t in ipairs(m.tests) do
    if t.status == "WARN" and not t.record_only then m.warnings = m.warnings + 1 end
  end
  m.verdict, m.message, m.lowest_failed, m.missing =
    M.headline(m.tests, plan and plan.expect, m.run.interrupted)
  m.spec_roots = spec_roots(m.run.files, plan and plan.spec_root)
  return m
end

-- The exit code of a run with this model: 0 PASS or INCOMPLETE without an
-- interruption (nothing failed; the headline says what was not measured),
-- 1 otherwise; with strict (--strict), 3 for a run that would be 0 but
-- has a test WARN.
function M.exit_code(m, strict)
  if strict and M.exit_code(m) == 0 and (m.warnings or 0) > 0 then
    return 3
  end
  if m.verdict == "PASS" then return 0 end
  -- record only: nothing gated the exit code
  if m.verdict == "RECORDED" then return m.run.interrupted and 1 or 0 end
  if m.verdict == "INCOMPLETE" and not m.run.interrupted then return 0 end
  return 1
end

return M
