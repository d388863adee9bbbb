-- strata.scale: shrink the shipped runbook to what a site can hold, from
-- the site file's `scale:` block, for every spec alike (docs/specs.md,
-- "Scaling a run down").
--
--   scale:
--     max_object_mb: 4      # object, message and part sizes above it: cut
--     max_streams: 4        # concurrency, QPs, streams above it: cut
--     max_duration_s: 2     # timed windows above it: cut
--     max_iterations: 64    # iteration and request counts above it: cut
--     matrix:               # per test: keep only these values of a parameter
--       R7: { senders: [1, 2] }
--
-- Two places take it.  A matrix parameter named like a size or a stream
-- count (BYTES, STREAMS below) loses the values above the limit; when
-- none is left it keeps one cell at the limit.  A figure a spec's run()
-- holds itself (B10's 256 MiB x 64) goes through t.scale.bytes(n),
-- .streams(n), .seconds(n) or .count(n).  Either way the cell's result
-- names what was scaled, from what to what, in a note: a scaled row never
-- passes for the RUNBOOK's full-size one.
local spec = require "strata.spec"

local M = {}
local MiB = 1048576

-- Matrix parameters each limit applies to, by name.
M.BYTES = { size = true, part_size = true, object_size = true }
M.STREAMS = { concurrency = true, qps = true, streams = true }

local LIMITS = { max_object_mb = true, max_streams = true,
                 max_duration_s = true, max_iterations = true,
                 matrix = true }

local function human(n, bytes)
  if not bytes then return tostring(n) end
  if n >= MiB and n % MiB == 0 then return (n // MiB) .. " MiB" end
  if n >= MiB then return ("%.3f MiB"):format(n / MiB) end
  if n >= 1024 and n % 1024 == 0 then return (n // 1024) .. " KiB" end
  return n .. " B"
end

local function list_text(vals, bytes)
  local out = {}
  for i, v in ipairs(vals) do out[i] = human(v, bytes) end
  return table.concat(out, ", ")
end

local function contains(list, v)
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- Validate site.scale; returns the limits (bytes, streams, seconds,
-- count: numbers or nil) and the per-test matrix restrictions.
local function limits(site, where)
  local s = site and site.scale
  if s == nil then return nil end
  if type(s) ~= "table" then spec.error(where, "scale: must be a mapping") end
  for k in pairs(s) do
    if not LIMITS[k] then
      spec.error(where, "scale.%s: unknown key (one of max_object_mb, "
                 .. "max_streams, max_duration_s, max_iterations, matrix)",
                 tostring(k))
    end
  end
  for _, k in ipairs { "max_object_mb", "max_streams", "max_duration_s",
                       "max_iterations" } do
    if s[k] ~= nil and (type(s[k]) ~= "number" or s[k] <= 0) then
      spec.error(where, "scale.%s: must be a number > 0", k)
    end
  end
  if s.matrix ~= nil and type(s.matrix) ~= "table" then
    spec.error(where, "scale.matrix: must map test IDs to { param: [values] }")
  end
  return {
    bytes = s.max_object_mb and math.floor(s.max_object_mb * MiB),
    streams = s.max_streams and math.floor(s.max_streams),
    seconds = s.max_duration_s,
    count = s.max_iterations and math.floor(s.max_iterations),
    matrix = s.matrix or {},
  }
end

-- Restrict and cut one test's matrix; returns the notes saying how.
local function scale_matrix(t, lim, where)
  local notes = {}
  local keep = lim.matrix[t.id]
  if keep ~= nil and type(keep) ~= "table" then
    spec.error(where, "scale.matrix.%s: must map parameters to lists", t.id)
  end
  if keep and not t.matrix then
    spec.error(where, "scale.matrix.%s: test %s has no matrix", t.id, t.id)
  end
  if not t.matrix then return notes end
  local m = {}
  for k, v in pairs(t.matrix) do m[k] = v end
  for p, vals in pairs(keep or {}) do
    if type(m[p]) ~= "table" or p == "order" or p == "exclude" then
      spec.error(where, "scale.matrix.%s.%s: %s has no matrix parameter '%s'",
                 t.id, tostring(p), t.id, tostring(p))
    end
    if type(vals) ~= "table" or #vals == 0 then
      spec.error(where, "scale.matrix.%s.%s: must be a non-empty list",
                 t.id, p)
    end
    for _, v in ipairs(vals) do
      if not contains(m[p], v) then
        spec.error(where, "scale.matrix.%s.%s: %s is not one of %s's values "
                   .. "(%s)", t.id, p, tostring(v), t.id,
                   list_text(m[p]))
      end
    end
    local out = {}
    for _, v in ipairs(m[p]) do
      if contains(vals, v) then out[#out + 1] = v end
    end
    m[p] = out
  end
  for _, p in ipairs(t.params) do
    local limit = (M.BYTES[p] and lim.bytes) or (M.STREAMS[p] and lim.streams)
    if limit then
      local out, cut = {}, false
      for _, v in ipairs(m[p]) do
        if type(v) == "number" and v > limit then cut = true
        else out[#out + 1] = v end
      end
      if #out == 0 then out[1] = limit end
      if cut then m[p] = out end
    end
    if not same(m[p], t.matrix[p]) then
      local bytes = M.BYTES[p] ~= nil
      notes[#notes + 1] = ("scaled by the site (scale:): %s %s -> %s")
        :format(p, list_text(t.matrix[p], bytes), list_text(m[p], bytes))
    end
  end
  t.matrix = m
  return notes
end

-- The t.scale helpers of one cell: each cuts a figure to its limit and
-- notes the cut in the cell's result.
local function helpers(lim, ctx)
  local said = {}
  local function cutter(limit, what, bytes)
    return function(n, name)
      if limit == nil or type(n) ~= "number" or n <= limit then return n end
      local text = ("scaled by the site (scale.%s): %s %s -> %s"):format(
        what, name or (bytes and "size" or (what:gsub("^max_", ""))),
        human(n, bytes), human(limit, bytes))
      if not said[text] then ctx.note(text) end
      said[text] = true
      return limit
    end
  end
  return {
    bytes = cutter(lim and lim.bytes, "max_object_mb", true),
    streams = cutter(lim and lim.streams, "max_streams"),
    seconds = cutter(lim and lim.seconds, "max_duration_s"),
    count = cutter(lim and lim.count, "max_iterations"),
  }
end

-- Apply site.scale to the loaded tests (in place): matrices restricted,
-- and every run(t) given t.scale and the matrix notes.  where names the
-- site file in errors.  Without a scale block t.scale still exists and
-- returns every figure unchanged.
function M.apply(tests, site, where)
  where = where or "site file"
  -- scale.matrix may name tests this run did not load (a run of some
  -- specs with the whole lab's site file): those entries wait unused
  local lim = limits(site, where)
  for _, t in ipairs(tests) do
    local notes = lim and scale_matrix(t, lim, where) or {}
    local run = t.run
    t.run = function(ctx)
      ctx.scale = helpers(lim, ctx)
      for _, n in ipairs(notes) do ctx.note(n) end
      return run(ctx)
    end
  end
end

return M
