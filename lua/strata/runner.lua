-- strata.runner: the plan (selection, needs, ladder order) and the run of
-- every matrix cell in an isolated child process.  It journals each cell's
-- raw outcome; strata.verdict turns outcomes into statuses.
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
local denull = require("strata.journal").denull
local model = require "strata.model"

local M = {}

cjson.encode_invalid_numbers("null")
cjson.encode_sparse_array(true)

-- Is this test selected by one of the patterns (ID globs or tags)?
local function selected(t, patterns)
  if not patterns or #patterns == 0 then return true end
  for _, p in ipairs(patterns) do
    local lp = "^" .. p:gsub("[%^%$%(%)%%%.%[%]%+%-%?]", "%%%0"):gsub("%*", ".*") .. "$"
    if t.id:match(lp) then return true end
    for _, tag in ipairs(t.tags) do
      if tag:match(lp) or tag == p then return true end
    end
    if t.layer == p then return true end
  end
  return false
end

-- Order the selected tests (plus what they need): needs first, then by
-- ladder rung, then by load order.  Returns the list, or raises on a cycle.
function M.plan(tests, by_id, patterns)
  local want, order = {}, {}
  local function pull(t)
    if want[t.id] then return end
    want[t.id] = true
    for _, n in ipairs(t.needs) do pull(by_id[n]) end
  end
  for _, t in ipairs(tests) do
    if selected(t, patterns) then pull(t) end
  end
  local index = {}
  for i, t in ipairs(tests) do index[t.id] = i end
  local pending = {}
  for _, t in ipairs(tests) do
    if want[t.id] then pending[#pending + 1] = t end
  end
  table.sort(pending, function(a, b)
    local ra, rb = spec.LAYER_RANK[a.layer], spec.LAYER_RANK[b.layer]
    if ra ~= rb then return ra < rb end
    return index[a.id] < index[b.id]
  end)
  local done = {}
  while #pending > 0 do
    local progressed = false
    for i, t in ipairs(pending) do
      local ready = true
      for _, n in ipairs(t.needs) do
        if not done[n] then ready = false break end
      end
      if ready then
        order[#order + 1] = t
        done[t.id] = true
        table.remove(pending, i)
        progressed = true
        break
      end
    end
    if not progressed then
      spec.error(pending[1].where, "test %s: needs form a cycle", pending[1].id)
    end
  end
  return order
end

-- Flatten nested metric tables: { lat = { p50 = 1 } } -> { ["lat.p50"] = 1 }
-- A table met again below itself (a cycle) raises; one shared by two keys
-- (a YAML alias of the site) is flattened under each.
local function flatten(t, prefix, out, open)
  out, open = out or {}, open or {}
  if open[t] then
    error(("run() returned metrics that contain themselves (at %s)"):format(
      prefix), 0)
  end
  open[t] = true
  for k, v in pairs(t) do
    local name = prefix and (prefix .. "." .. tostring(k)) or tostring(k)
    if type(v) == "table" then
      flatten(v, name, out, open)
    elseif type(v) == "number" or type(v) == "string" or type(v) == "boolean" then
      out[name] = v
    end
  end
  open[t] = nil
  return out
end

-- The first stack frame in a spec file (not the runner): where to point.
local function spec_frame()
  for level = 3, 40 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.what ~= "C" and info.currentline > 0
       and not info.source:find("/lua/strata/", 1, true) then
      return info.short_src .. ":" .. info.currentline
    end
  end
end

local function error_handler(e)
  if type(e) == "table" and e.skip then return e end
  local msg = tostring(e)
  if type(e) == "table" then
    local mt = getmetatable(e)
    msg = (mt and mt.__tostring) and tostring(e) or cjson.encode(e)
  end
  if not msg:match("^[^%s:]+%.lua:%d+:") then
    local where = spec_frame()
    if where then msg = where .. ": " .. msg end
  end
  return { error = msg, traceback = debug.traceback(nil, 2) }
end

-- t.table's chart: x and y are column numbers of that table (1-based); a
-- wrong one is the spec's error, raised at its line (not a silent note in
-- the workbook).
local CHART_KEYS = { x = true, y = true, title = true, x_title = true,
                     y_title = true, y_min = true }
local function check_chart(name, columns, chart)
  local function bad(fmt, ...)
    error(("t.table '%s': chart: " .. fmt):format(tostring(name), ...), 0)
  end
  if type(chart) ~= "table" then bad("must be a table { x = n, y = { n } }") end
  for k in pairs(chart) do
    if not CHART_KEYS[k] then bad("unknown key '%s'", tostring(k)) end
  end
  local n = type(columns) == "table" and #columns or 0
  local function col(v, what)
    if math.type(v) ~= "integer" or v < 1 or v > n then
      bad("%s = %s is not a column number 1..%d", what, tostring(v), n)
    end
  end
  col(chart.x, "x")
  local ys = type(chart.y) == "table" and chart.y or { chart.y }
  if #ys == 0 then bad("y names no column") end
  for _, y in ipairs(ys) do col(y, "y") end
  if chart.y_min ~= nil and chart.y_min ~= false and type(chart.y_min) ~= "number" then
    bad("y_min must be a number or false (auto)")
  end
end

-- Runs in the child: the spec's run(t) with counters around it.
local function run_cell(t, cell, env)
  local out = { tables = {}, notes = {} }
  local ctx = {
    id = t.id, cell = cell, site = env.site, params = t.params,
    result = env.lookup, results = env.lookup_all,
    log = function(fmt, ...)
      io.stderr:write(("  [%s] %s\n"):format(t.id, fmt:format(...)))
    end,
    note = function(text) out.notes[#out.notes + 1] = tostring(text) end,
    table = function(name, columns, rows, chart)
      if chart ~= nil then check_chart(name, columns, chart) end
      out.tables[#out.tables + 1] = { name = name, columns = columns,
                                      rows = rows, chart = chart }
    end,
    -- t.skip(reason, metrics): facts measured before the reason to skip
    -- (a preflight on a host without the device) travel with it; the
    -- parent judges them by the test's criteria and the Summary counts
    -- the findings beside the SKIP (issue 27: a SKIP must not hide them)
    skip = function(reason, metrics)
      if type(metrics) == "table" then
        local fok, m = pcall(flatten, metrics)
        if fok then out.skip_metrics = m end
      end
      core.skip(reason)
    end,
    fail = function(reason) out.fail = tostring(reason) end,
    -- t.explain(metric, text): why this fact is what it is, in words; a
    -- check that fails the metric carries it in its reason (the Summary),
    -- first among the cell's failures.  It decides nothing: the criteria
    -- do (issue 27: "this site's NIC cannot carry AIStor's S3 over RDMA")
    explain = function(metric, text)
      out.explain = out.explain or {}
      out.explain[tostring(metric)] = tostring(text)
    end,
  }
  local sampler
  if t.sample then
    local counters = require "strata.counters"
    local ok, s = pcall(counters.start, t.sample)
    if not ok then
      out.error = ("%s: counters could not be read: %s"):format(t.where,
        (tostring(s):gsub("^[^%s]-%.lua:%d+: ", "")))
      return cjson.encode(out)
    end
    sampler = s
  end
  local ok, ret = xpcall(t.run, error_handler, ctx)
  if sampler then
    local c = sampler:stop()
    out.series = c.series
    if c.errors and #c.errors > 0 then out.counter_errors = c.errors end
    if ok and type(ret) == "table" then
      for name, d in pairs(c.deltas or {}) do ret["delta." .. name] = d end
    end
  end
  if not ok then
    if type(ret) ~= "table" then
      -- no message handler ran (a memory error, or an error in it)
      out.error = tostring(ret)
    elseif ret.skip then out.skip = ret.skip else
      out.error, out.traceback = ret.error, ret.traceback
    end
  elseif ret ~= nil and type(ret) ~= "table" then
    out.error = ("%s: run() must return a table of metrics, got %s"):format(
      t.where, type(ret))
  else
    local fok, m = pcall(flatten, ret or {})
    if fok then out.metrics = m else out.error = ("%s: %s"):format(t.where, m) end
  end
  return cjson.encode(out)
end

-- The plan as the journal keeps it: what each test would run, so that a
-- report of a killed run can list what never ran (NOT RUN).
function M.plan_record(order, expect, spec_root)
  local tests = {}
  for i, t in ipairs(order) do
    tests[i] = model.test_info(t, #spec.cells(t))
  end
  return { type = "plan", tests = tests, expect = expect,
           spec_root = spec_root }
end

-- The child's answer -> the raw outcome the journal keeps (verdict.cell
-- turns it into a status and reason).
-- What a child answered, checked: anything but the table run_cell
-- encodes (garbage, a plain string, fields of the wrong type) is that
-- cell's error, never the runner's.
local TABLE_FIELDS = { "tables", "notes", "metrics", "counter_errors",
                       "skip_metrics", "explain" }
local TEXT_FIELDS = { "skip", "error", "fail" }
local function answer(payload)
  local ok, out = pcall(cjson.decode, payload)
  if not ok or type(out) ~= "table" then
    return nil, ("the cell's child answered something that is not a "
      .. "result (%d bytes: %q)"):format(#payload, payload:sub(1, 60))
  end
  out = denull(out)
  for _, k in ipairs(TABLE_FIELDS) do
    if out[k] ~= nil and type(out[k]) ~= "table" then
      return nil, ("the cell's child answered a result whose %s is a %s"):format(
        k, type(out[k]))
    end
  end
  for _, k in ipairs(TEXT_FIELDS) do
    if out[k] ~= nil then out[k] = tostring(out[k]) end
  end
  if not (out.skip or out.error or out.metrics) then
    return nil, "the cell's child answered neither metrics nor an error"
  end
  return out
end

-- site.limits -> core.isolate's limits (bytes, seconds, count); nil keys
-- keep the defaults (docs/cli.md, "Limits").
function M.limits(site)
  local l = type(site) == "table" and site.limits
  if type(l) ~= "table" then return nil end
  local MiB = 1024 * 1024
  return { memory = l.memory_mb and l.memory_mb * MiB, cpu = l.cpu_s,
           files = l.open_files, output = l.output_mb and l.output_mb * MiB }
end

local function outcome_of(st, payload, t, limit)
  if st == "ok" then
    local out, bad = answer(payload)
    if not out then return { kind = "error", why = bad }, {} end
    local o = { kind = "ok", fail = out.fail,
                counter_errors = out.counter_errors }
    if out.skip then o = { kind = "skip", why = out.skip }
    elseif out.error then
      o = { kind = "error", why = out.error, traceback = out.traceback }
    end
    return o, out
  elseif st == "timeout" then
    return { kind = "timeout", timeout = t.timeout }, {}
  elseif st == "crashed" then
    return { kind = "crashed", why = tostring(payload) }, {}
  elseif st == "interrupted" then
    return { kind = "stopped" }, {}
  end
  return { kind = "error", why = tostring(payload), limit = limit }, {}
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

-- A plain progress line for logs (no terminal) this often, in seconds
-- (STRATA_PROGRESS_EVERY changes it: tests, impatient logs).
local PLAIN_EVERY = tonumber(os.getenv("STRATA_PROGRESS_EVERY") or "") or 30

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

-- Run the plan.  opts: site, criteria (resolved list), journal (with
-- :write(rec)), progress (bool: stderr is a terminal), tries and
-- try_mode ("repeat": every cell `tries` times; "until_pass": a failed
-- cell again, at most `tries` in all).  Returns the
-- result records and whether the run was interrupted.
function M.run(order, opts)
  local results = {}      -- id -> list of records
  local rolled = {}       -- id -> verdict.test roll-up
  local crit_by_id = verdict.by_test(opts.criteria)

  local function lookup_all(id)
    local out = {}
    for _, r in ipairs(results[id] or {}) do
      out[#out + 1] = { cell = r.cell, metrics = r.metrics, status = r.status }
    end
    return out
  end
  -- another test's metrics at the cell matching on the shared parameters
  local function lookup(id, cell)
    local recs = results[id]
    if not recs then return nil, ("%s has not run"):format(id) end
    for _, r in ipairs(recs) do
      local match = true
      for k, v in pairs(cell or {}) do
        if r.cell[k] ~= nil and r.cell[k] ~= v then match = false break end
      end
      if match and r.metrics then return r.metrics end
    end
    return nil, ("%s has no result for %s"):format(id, cjson.encode(cell or {}))
  end
  local env = { site = opts.site, lookup = lookup, lookup_all = lookup_all }
  local limits = M.limits(opts.site)

  -- Cells fork from a fork server started here, before results pile up
  -- in this process (a fork copies the page tables of the process that
  -- forks: docs/internals.md, "How a test runs").  The server keeps no
  -- results: a cell's t.result/t.results ask this process (core.ask,
  -- answered by ask() below while it waits for the cell), so the server's
  -- memory stays what it was at the first cell, and so does each fork.
  local index_of = {}     -- test id -> its index in order
  for i, t in ipairs(order) do index_of[t.id] = index_of[t.id] or i end
  local function ask(q)   -- here, for a cell's child
    local m = cjson.decode(q)
    if m[1] == "result" then
      local metrics, err = lookup(m[2], m[3] ~= cjson.null and m[3] or nil)
      return cjson.encode { metrics or cjson.null, err or cjson.null }
    end
    -- every result of a test: its cell as where its values are in the
    -- test's matrix (the child has the same), so a cell comes back the
    -- table it was
    local out = {}
    for _, r in ipairs(results[m[2]] or {}) do
      local t = order[index_of[r.id]]
      local gated = r.outcome.kind == "blocked" or r.outcome.kind == "gated_skip"
      out[#out + 1] = { index_of[r.id], gated and cjson.null
                          or spec.cell_at(t, r.cell),
                        r.metrics or cjson.null, r.status }
    end
    return cjson.encode(out)
  end
  local function answered(x)   -- a value of ask()'s answer, as it was
    if x == cjson.null then return nil end
    return type(x) == "table" and denull(x) or x
  end
  local child_env = { site = opts.site,
    lookup = function(id, cell)
      local a = cjson.decode(core.ask(cjson.encode { "result", id,
                                                     cell or cjson.null }))
      return answered(a[1]), answered(a[2])
    end,
    lookup_all = function(id)
      local out = {}
      for _, x in ipairs(cjson.decode(core.ask(cjson.encode { "results", id }))) do
        out[#out + 1] = { cell = x[2] == cjson.null and {}
                            or spec.cell_from(order[x[1]], x[2]),
                          metrics = answered(x[3]), status = x[4] }
      end
      return out
    end }
  -- A cell's request: its test's index in the plan, then the positions
  -- of its values, as decimal integers ("3 17 2").
  local function request(i, t, cell)
    return table.concat({ i, table.unpack(spec.cell_at(t, cell)) }, " ")
  end
  local function cell_answer(req)   -- in the cell's child
    local at, i = {}, nil
    for n in req:gmatch("%d+") do
      if i then at[#at + 1] = tonumber(n) else i = tonumber(n) end
    end
    return run_cell(order[i], spec.cell_from(order[i], at), child_env)
  end
  -- Tries per cell (the fleet's --repeat N / --until-pass N): every try
  -- is its own record (try = k); a retried cell runs alone, after its
  -- previous try, so the fork server's one-ahead start is left off.
  local tries = math.max(1, math.floor(tonumber(opts.tries) or 1))
  local again_always = opts.try_mode == "repeat"
  local server = os.getenv("STRATA_FORK_SERVER") ~= "0" and tries == 1
    and core.fork_server(nil, cell_answer) or nil
  local interrupted = false
  local total = #order
  local run0, last_plain = core.now(), core.now()

  for i, t in ipairs(order) do
    if interrupted then break end
    local cells = spec.cells(t)
    local t0 = core.now()
    local ncells, crits = #cells, crit_by_id[t.id] or {}
    local unit = t.headline and t.units[t.headline] or nil
    -- A record is judged (verdict.cell), kept for t.result / t.results and
    -- the roll-up, and journaled.
    local function keep(r)
      r.status, r.reason = verdict.cell(r)
      local list = results[t.id]
      if not list then list = {} results[t.id] = list end
      list[#list + 1] = r
      opts.journal:write(r)
      return r
    end

    -- needs: a need that did not PASS blocks (or skips) the whole test
    local gate, why = verdict.gate(t.needs, rolled)
    if gate then
      keep(model.result(t, ncells, unit, {
             cell = {}, cell_index = 1, checks = {},
             outcome = { kind = gate == "BLOCKED" and "blocked"
                         or "gated_skip", why = why },
             started = core.utc(), duration_s = 0 }))
    end
    -- The cell being run, for the progress ticks (one closure and one
    -- options table per test, not per cell; the label is made only when
    -- a line shows it).
    local cur_ci, cur_cell, cur_label
    local function label()
      cur_label = cur_label or verdict.label(t.params, cur_cell)
      return cur_label
    end
    local function tick(el)
      if opts.progress then
        io.stderr:write(("\r\27[K  %s [%d/%d] %s  %.1f s"):format(
          t.id, cur_ci, ncells, label(), el))
      elseif core.now() - last_plain >= PLAIN_EVERY then
        -- CI logs and nohup runs: a plain line now and then
        last_plain = core.now()
        local l = label()
        io.stderr:write(("strata: test %d/%d %s, cell %d/%d%s, %.0f s in "
          .. "this cell, %.0f s in all\n"):format(i, total, t.id, cur_ci,
          ncells, l ~= "" and (" " .. l) or "", el, core.now() - run0))
      end
    end
    local iso = { timeout = t.timeout, tick = tick, tick_ms = 500,
                  limits = limits, ask = ask }
    -- With the fork server, the next cell of the test is sent before this
    -- one is waited for: the server holds it and starts it the moment
    -- this one has exited, while this process judges and journals this
    -- one.  Nothing it is sent depends on this one's result, and its
    -- t.result questions are answered only once it is waited for, after
    -- this one is kept.  Its deadline and duration count from its start.
    local list = gate and {} or cells
    local function send(ci)
      return server:send(request(i, t, list[ci]), iso)
    end
    local nxt = server and list[1] and send(1)
    local ci, try = 0, 1
    while true do
      local cell
      if try == 1 then ci = ci + 1 end
      cell = list[ci]
      if not cell then break end
      cur_ci, cur_cell, cur_label = ci, cell, nil
      local started, c0 = core.utc(), core.now()
      local st, payload, limit, duration
      if server then
        local this = nxt
        nxt = list[ci + 1] and not core.stopping() and send(ci + 1) or nil
        st, payload, limit = this:wait(iso)
        local t0, t1 = this:times()
        local now = core.now()
        t0 = t0 or now
        duration = (t1 or now) - t0
        started = core.utc(core.time() - (now - t0))
      else
        st, payload, limit = core.isolate(function()
          return run_cell(t, cell, env)
        end, iso)
        duration = core.now() - c0
      end
      if opts.progress then io.stderr:write("\r\27[K") end
      local o, out = outcome_of(st, payload, t, limit)
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
        checks = thresholds.judge(crits, {
          site = opts.site, metrics = metrics or {}, cell = cell,
          lookup = lookup, fleet = opts.fleet, baseline = opts.baseline and function()
            return compare.lookup(opts.baseline, t.id, t.params, cell)
          end })
      end
      for _, ck in ipairs(checks or {}) do
        local text = not ck.ok and out.explain and out.explain[ck.metric]
        if type(text) == "string" then
          ck.why, ck.explained = ("%s: %s"):format(ck.why or ck.metric, text), true
        end
      end
      if o.kind == "skip" and out.skip_metrics then
        o.why = o.why .. skip_findings(t, crits, out.skip_metrics, cell, opts)
      end
      if o.kind == "stopped" then interrupted = true end
      local r = keep(model.result(t, ncells, unit, {
             cell = cell, cell_index = ci, started = started,
             duration_s = duration, outcome = o, tables = out.tables or {},
             notes = notes, series = out.series, metrics = metrics,
             checks = checks or {}, try = tries > 1 and try or nil,
             tries = tries > 1 and tries or nil }))
      if interrupted then
        if nxt then nxt:drop() end
        break
      end
      if try < tries and (again_always or r.status == "FAIL" or r.status == "ERROR") then
        try = try + 1
      else
        try = 1
      end
    end
    local roll = verdict.test(model.test_info(t, ncells), M.last_tries(results[t.id] or {}),
                              crits, true)
    rolled[t.id] = roll
    local line = ("[%2d/%d] %-8s %-8s %-40s %-7s %5.1f s"):format(i, total,
      t.id, t.layer, t.title:sub(1, 40), roll.status, core.now() - t0)
    if roll.status ~= "PASS" and roll.reason then
      line = line .. "  " .. roll.reason
    end
    io.stderr:write(line, "\n")
    last_plain = core.now()
    if core.stopping() then interrupted = true end
  end
  if server then server:close() end
  return results, interrupted
end

return M
