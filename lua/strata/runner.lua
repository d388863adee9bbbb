-- strata.runner: the run of a plan, every matrix cell in an isolated
-- child process.  It journals each cell's raw outcome; strata.verdict
-- turns outcomes into statuses.  Its parts: strata.runner.plan (which
-- tests, in what order), .cell (the child's side: run(t)), .wire (the
-- messages between the runner and a cell's child), .progress (the lines
-- on stderr).
--
-- One child per cell, forked by a fork server (core.fork_server; without
-- one, core.isolate): a primitive that hangs past the cell's timeout,
-- crashes or raises costs that cell only; every finished cell is
-- journaled before the next starts.
local core = require "strata.core"
local cjson = require "cjson"
local spec = require "strata.spec"
local thresholds = require "strata.thresholds"
local verdict = require "strata.verdict"
local compare = require "strata.compare"
local model = require "strata.model"
local plan = require "strata.runner.plan"
local child = require "strata.runner.cell"
local wire = require "strata.runner.wire"
local progress = require "strata.runner.progress"

local M = {}

-- Order the selected tests (plus what they need): needs first, then by
-- ladder rung, then by load order.  Returns the list, or raises on a cycle.
M.plan = plan.order
-- The plan record the journal keeps (what never ran is NOT RUN).
M.plan_record = plan.record

-- site.limits -> core.isolate's limits (bytes, seconds, count); nil keys
-- keep the defaults (docs/cli.md, "Limits").
function M.limits(site)
  local l = type(site) == "table" and site.limits
  if type(l) ~= "table" then return nil end
  local MiB = 1024 * 1024
  return { memory = l.memory_mb and l.memory_mb * MiB, cpu = l.cpu_s,
           files = l.open_files, output = l.output_mb and l.output_mb * MiB }
end

-- A test's records with only the last try of each cell (records of one
-- try each pass as they are).
function M.last_tries(recs)
  local last, out = {}, {}
  for i, r in ipairs(recs) do
    if r.try then last[r.cell_index or 0] = i end
  end
  for i, r in ipairs(recs) do
    if not r.try or last[r.cell_index or 0] == i then out[#out + 1] = r end
  end
  return out
end

-- Another test's metrics at the cell matching on the shared parameters
-- (t.result), and every result of a test (t.results), from results
-- (id -> records).
local function lookups(results)
  local function lookup_all(id)
    local out = {}
    for _, r in ipairs(results[id] or {}) do
      out[#out + 1] = { cell = r.cell, metrics = r.metrics, status = r.status }
    end
    return out
  end
  local function lookup(id, c)
    local recs = results[id]
    if not recs then return nil, ("%s has not run"):format(id) end
    for _, r in ipairs(recs) do
      local match = true
      for k, v in pairs(c or {}) do
        if r.cell[k] ~= nil and r.cell[k] ~= v then match = false break end
      end
      if match and r.metrics then return r.metrics end
    end
    return nil, ("%s has no result for %s"):format(id, cjson.encode(c or {}))
  end
  return lookup, lookup_all
end

-- The run's state: results (id -> records), rolled (id -> roll-up), the
-- criteria by test, the lookups, the limits, the tries and the fork
-- server.
--
-- Cells fork from a fork server started here, before results pile up
-- in this process (a fork copies the page tables of the process that
-- forks: docs/internals.md, "How a test runs").  The server keeps no
-- results: a cell's t.result/t.results ask this process (core.ask,
-- answered by wire.answerer while it waits for the cell), so the
-- server's memory stays what it was at the first cell, and so does each
-- fork.
local function start(order, opts)
  local R = { order = order, opts = opts, results = {}, rolled = {},
              crit_by_id = verdict.by_test(opts.criteria),
              limits = M.limits(opts.site), interrupted = false,
              progress = progress.new(opts.progress, #order) }
  R.lookup, R.lookup_all = lookups(R.results)
  R.env = { site = opts.site, lookup = R.lookup, lookup_all = R.lookup_all }
  R.ask = wire.answerer(order, R.results, R.lookup)
  -- Tries per cell (the fleet's --repeat N / --until-pass N): every try
  -- is its own record (try = k); a retried cell runs alone, after its
  -- previous try, so the fork server's one-ahead start is left off.
  R.tries = math.max(1, math.floor(tonumber(opts.tries) or 1))
  R.again_always = opts.try_mode == "repeat"
  R.server = os.getenv("STRATA_FORK_SERVER") ~= "0" and R.tries == 1
    and core.fork_server(nil, wire.server_handler(order, opts.site)) or nil
  return R
end

-- A record of test T: built (strata.model's result), judged
-- (verdict.cell), kept for t.result / t.results and the roll-up, and
-- journaled.
local function keep(R, T, f)
  local r = model.result(T.t, T.ncells, T.unit, f)
  r.status, r.reason = verdict.cell(r)
  local list = R.results[T.t.id]
  if not list then list = {} R.results[T.t.id] = list end
  list[#list + 1] = r
  R.opts.journal:write(r)
  return r
end

-- The criteria a skipped cell's facts fail, as a suffix of its reason:
-- " (5 findings on the E3P sheet)", or "" when none fails.  The decision
-- stays the criteria's (not judged, unresolved and unmeasured checks do
-- not count); the status stays SKIP.
local function skip_findings(t, crits, metrics, cell, opts)
  local n = 0
  for _, ck in ipairs(thresholds.judge(crits, { site = opts.site,
                                                 metrics = metrics,
                                                 cell = cell })) do
    if not ck.ok and not ck.unresolved and not ck.not_judged
       and ck.value ~= nil then
      n = n + 1
    end
  end
  if n == 0 then return "" end
  return (" (%d finding%s on the %s sheet)"):format(n,
    n == 1 and "" or "s", t.id)
end

-- A cell's end (st, payload, limit) judged and kept: its outcome, notes,
-- the checks of its criteria (or, skipped, the findings of its facts).
local function settle(R, T, ci, c, try, st, payload, limit, started, duration)
  local opts, t = R.opts, T.t
  local o, out = wire.outcome(st, payload, t, limit)
  if o.traceback then
    if opts.verbose then
      io.stderr:write(o.why, "\n", o.traceback, "\n")
    end
    o.traceback = nil
  end
  local notes, metrics = out.notes or {}, out.metrics
  for _, e in ipairs(o.counter_errors or {}) do
    notes[#notes + 1] = "counters: " .. e
  end
  local checks
  if o.kind == "ok" then
    checks = thresholds.judge(T.crits, {
      site = opts.site, metrics = metrics or {}, cell = c,
      lookup = R.lookup, fleet = opts.fleet, baseline = opts.baseline and function()
        return compare.lookup(opts.baseline, t.id, t.params, c)
      end })
  end
  for _, ck in ipairs(checks or {}) do
    local text = not ck.ok and out.explain and out.explain[ck.metric]
    if type(text) == "string" then
      ck.why, ck.explained = ("%s: %s"):format(ck.why or ck.metric, text), true
    end
  end
  if o.kind == "skip" and out.skip_metrics then
    o.why = o.why .. skip_findings(t, T.crits, out.skip_metrics, c, opts)
  end
  if o.kind == "stopped" then R.interrupted = true end
  return keep(R, T, {
           cell = c, cell_index = ci, started = started,
           duration_s = duration, outcome = o, tables = out.tables or {},
           notes = notes, series = out.series, metrics = metrics,
           checks = checks or {}, try = R.tries > 1 and try or nil,
           tries = R.tries > 1 and R.tries or nil })
end

-- One cell run in core.isolate (no fork server): its end, start and
-- duration.
local function isolated(R, T, c, iso)
  local started, c0 = core.utc(), core.now()
  local st, payload, limit = core.isolate(function()
    return child.run(T.t, c, R.env)
  end, iso)
  return st, payload, limit, started, core.now() - c0
end

-- One cell the fork server was sent (this): waited for; its start and
-- duration count from when the server started it.
local function served(this, iso)
  local st, payload, limit = this:wait(iso)
  local t0, t1 = this:times()
  local now = core.now()
  t0 = t0 or now
  return st, payload, limit, core.utc(core.time() - (now - t0)), (t1 or now) - t0
end

-- The cells of test T (list), each tried as R.tries says.  With the fork
-- server, the next cell of the test is sent before this one is waited
-- for: the server holds it and starts it the moment this one has exited,
-- while this process judges and journals this one.  Nothing it is sent
-- depends on this one's result, and its t.result questions are answered
-- only once it is waited for, after this one is kept.  Its deadline and
-- duration count from its start.
local function run_cells(R, T, list, iso, at)
  local server = R.server
  local function send(ci)
    return server:send(wire.request(T.i, T.t, list[ci]), iso)
  end
  local nxt = server and list[1] and send(1)
  local ci, try = 0, 1
  while true do
    if try == 1 then ci = ci + 1 end
    local c = list[ci]
    if not c then break end
    at(ci, c)
    local st, payload, limit, started, duration
    if server then
      local this = nxt
      nxt = list[ci + 1] and not core.stopping() and send(ci + 1) or nil
      st, payload, limit, started, duration = served(this, iso)
    else
      st, payload, limit, started, duration = isolated(R, T, c, iso)
    end
    R.progress:cell_done()
    local r = settle(R, T, ci, c, try, st, payload, limit, started, duration)
    if R.interrupted then
      if nxt then nxt:drop() end
      break
    end
    if try < R.tries and (R.again_always or r.status == "FAIL" or r.status == "ERROR") then
      try = try + 1
    else
      try = 1
    end
  end
end

-- Test t, the i-th of the plan: gated by its needs, or its cells run;
-- then rolled up.
local function run_test(R, i, t)
  local cells = spec.cells(t)
  local t0 = core.now()
  local T = { t = t, i = i, ncells = #cells, crits = R.crit_by_id[t.id] or {},
              unit = t.headline and t.units[t.headline] or nil }
  -- needs: a need that did not PASS blocks (or skips) the whole test
  local gate, why = verdict.gate(t.needs, R.rolled)
  if gate then
    keep(R, T, { cell = {}, cell_index = 1, checks = {},
                 outcome = { kind = gate == "BLOCKED" and "blocked"
                             or "gated_skip", why = why },
                 started = core.utc(), duration_s = 0 })
  end
  local tick, at = R.progress:ticker(i, t, T.ncells)
  local iso = { timeout = t.timeout, tick = tick, tick_ms = 500,
                limits = R.limits, ask = R.ask }
  run_cells(R, T, gate and {} or cells, iso, at)
  local roll = verdict.test(model.test_info(t, T.ncells),
                            M.last_tries(R.results[t.id] or {}), T.crits, true)
  R.rolled[t.id] = roll
  R.progress:test_done(i, t, roll, t0)
  if core.stopping() then R.interrupted = true end
end

-- Run the plan.  opts: site, criteria (resolved list), journal (with
-- :write(rec)), progress (bool: stderr is a terminal), tries and
-- try_mode ("repeat": every cell `tries` times; "until_pass": a failed
-- cell again, at most `tries` in all).  Returns the
-- result records and whether the run was interrupted.
function M.run(order, opts)
  local R = start(order, opts)
  for i, t in ipairs(order) do
    if R.interrupted then break end
    run_test(R, i, t)
  end
  if R.server then R.server:close() end
  return R.results, R.interrupted
end

return M
