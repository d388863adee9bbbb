-- strata.runner.cell: the cell's child side.  In the child (forked by the
-- fork server, or by core.isolate), the spec's run(t) with its t.* API and
-- counters around it; what it returns, flattened, goes back to the runner
-- as one JSON text (strata.runner.wire reads it).
local core = require "strata.core"
local cjson = require "cjson"
local chart_keys = require "strata.report.chart_keys"

local M = {}

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

-- The t a spec's run(t) gets: its cell, the site, other tests' results
-- (env.lookup, env.lookup_all), and log/note/table/skip/fail, which
-- write into out.
local function api(t, cell, env, out)
  return {
    id = t.id, cell = cell, site = env.site, params = t.params,
    result = env.lookup, results = env.lookup_all,
    log = function(fmt, ...)
      io.stderr:write(("  [%s] %s\n"):format(t.id, fmt:format(...)))
    end,
    note = function(text) out.notes[#out.notes + 1] = tostring(text) end,
    table = function(name, columns, rows, chart)
      if chart ~= nil then chart_keys.check(name, columns, chart) end
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
end

-- What run(t) ended with, into out: a skip, an error (with its
-- traceback), or the flattened metrics.
local function settle(t, out, ok, ret)
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
end

-- Runs in the child: the spec's run(t) with counters around it; returns
-- the JSON text of its outcome.
function M.run(t, cell, env)
  local out = { tables = {}, notes = {} }
  local ctx = api(t, cell, env, out)
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
  settle(t, out, ok, ret)
  return cjson.encode(out)
end

return M
