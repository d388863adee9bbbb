-- strata.thresholds: where PASS/FAIL criteria come from and how a result
-- is judged against them.
--
-- Precedence, lowest first: the spec's own `criteria` (source: the spec's
-- file:line), the thresholds file (file:line of the value), then each
-- `--set ID.metric.op=VALUE` (source: "--set ...").  A limit is a number,
-- a literal, a list (for `in`), or an expression `[factor *] ref` where
-- ref is `site.<path>`, `<TESTID>.<metric>` (the same matrix cell of that
-- test), `baseline.<metric>` (the same test and cell in the run given with
-- --baseline), `fleet.median.<metric>` (the fleet's median of the same
-- test and cell: fleet runs) or `<metric>` (a metric of the same result).
local yaml = require "strata.yaml"
local spec = require "strata.spec"
local common = require "strata.report.common"

local M = {}

local SYMBOL = { min = ">=", max = "<=", eq = "==", ne = "!=", ["in"] = "in" }

-- Load a thresholds file: { [id] = { [metric] = { [op] = {value, source} } } }
function M.load(path, known)
  local doc, lines = spec.protect(yaml.load_file, path)
  local out = {}
  local function line(t, k)
    return ("%s:%d"):format(path, (lines[t] or {})[k] or 1)
  end
  for id, metrics in pairs(doc) do
    local where = line(doc, id)
    if type(id) ~= "string" or type(metrics) ~= "table" then
      spec.error(where, "expected 'TESTID: { metric: { op: value } }'")
    end
    if known and not known[id] then
      io.stderr:write(("strata: warning: %s: no loaded spec defines test '%s'\n")
                      :format(where, id))
    end
    out[id] = out[id] or {}
    for metric, ops in pairs(metrics) do
      local mwhere = line(metrics, metric)
      if type(ops) ~= "table" then
        spec.error(mwhere, "%s.%s: expected a mapping like { min: 10 }", id,
                   tostring(metric))
      end
      out[id][metric] = out[id][metric] or {}
      for op, v in pairs(ops) do
        local owhere = line(ops, op)
        if not spec.OPS[op] then
          spec.error(owhere, "%s.%s: unknown operator '%s' (use min, max, eq, ne, in)",
                     id, metric, tostring(op))
        end
        if op == "in" and type(v) ~= "table" then
          spec.error(owhere, "%s.%s.in: expected a list", id, metric)
        end
        out[id][metric][op] = { value = v, source = owhere }
      end
    end
  end
  return out
end

-- "R2.bw_gbps.min=0.9 * site.x" -> id, metric, op, value (or nil = drop)
function M.parse_set(s)
  local key, val = s:match("^([^=]+)=(.*)$")
  if not key then return nil, "expected ID.metric.op=VALUE" end
  local id, rest = key:match("^([^.]+)%.(.+)$")
  local metric, op = (rest or ""):match("^(.+)%.([%a]+)$")
  if not id or not metric then return nil, "expected ID.metric.op=VALUE" end
  if not spec.OPS[op] then
    return nil, ("unknown operator '%s' (use min, max, eq, ne, in)"):format(op)
  end
  local v
  if val == "none" then
    v = nil
  elseif tonumber(val) then
    v = tonumber(val)
  elseif val == "true" or val == "false" then
    v = val == "true"
  elseif op == "in" then
    v = {}
    for item in val:gmatch("[^,]+") do
      item = item:match("^%s*(.-)%s*$")
      v[#v + 1] = tonumber(item) or item
    end
  else
    v = val
  end
  return { id = id, metric = metric, op = op, value = v, drop = val == "none",
           source = "--set " .. s }
end

-- Parse a limit into {kind = "value"|"ref", ...}.
local function parse_limit(v, by_id)
  if type(v) ~= "string" then return { kind = "value", value = v } end
  local factor, ref = v:match("^%s*([%d%.eE%+%-]+)%s*[x%*]%s*([%w_%.%-]+)%s*$")
  if factor and tonumber(factor) then
    factor = tonumber(factor)
  else
    factor, ref = 1, v:match("^%s*([%w_%.%-]+)%s*$")
  end
  if ref then
    local site_path = ref:match("^site%.(.+)$")
    if site_path then
      return { kind = "ref", factor = factor, site = site_path, ref = ref }
    end
    -- fleet.median.<metric>: the fleet's median of the same test and cell
    -- (judged by the fleet model, strata.fleet.baseline; a node alone
    -- cannot evaluate it)
    local fstat, fmetric = ref:match("^fleet%.(median)%.(.+)$")
    if fstat then
      return { kind = "ref", factor = factor, fleet = fmetric, stat = fstat, ref = ref }
    end
    local base_metric = ref:match("^baseline%.(.+)$")
    if base_metric then
      return { kind = "ref", factor = factor, baseline = base_metric, ref = ref }
    end
    local tid, metric = ref:match("^([^.]+)%.(.+)$")
    if tid and by_id[tid] then
      return { kind = "ref", factor = factor, test = tid, metric = metric, ref = ref }
    end
    if factor ~= 1 or not ref:find("%.") then
      -- "0.9 * line_rate_gbps" or "line_rate_gbps": a metric of this result
      if factor ~= 1 or v:match("^[%a_][%w_]*$") then
        return { kind = "ref", factor = factor, own = ref, ref = ref }
      end
    end
  end
  return { kind = "value", value = v }
end

M.parse_limit = parse_limit

-- Resolve every test's criteria into a flat list of
-- { id, metric, op, limit = parsed, expr = text, source }.
function M.resolve(tests, by_id, file_crit, sets)
  local merged = {}
  for _, t in ipairs(tests) do
    local m = {}
    for metric, ops in pairs(t.criteria) do
      m[metric] = {}
      for op, v in pairs(ops) do
        -- the criterion's own line in the spec, not that of `test {`
        m[metric][op] = { value = v,
                          source = (t.criteria_where or {})[metric] or t.where }
      end
    end
    for metric, ops in pairs((file_crit or {})[t.id] or {}) do
      m[metric] = m[metric] or {}
      for op, e in pairs(ops) do m[metric][op] = e end
    end
    merged[t.id] = m
  end
  for _, s in ipairs(sets or {}) do
    if not merged[s.id] then
      spec.error(s.source, "no loaded spec defines test '%s'", s.id)
    end
    local m = merged[s.id]
    m[s.metric] = m[s.metric] or {}
    m[s.metric][s.op] = (not s.drop) and { value = s.value, source = s.source } or nil
  end
  local list = {}
  for _, t in ipairs(tests) do
    local metrics = {}
    for metric in pairs(merged[t.id]) do metrics[#metrics + 1] = metric end
    table.sort(metrics)
    for _, metric in ipairs(metrics) do
      local ops = {}
      for op in pairs(merged[t.id][metric]) do ops[#ops + 1] = op end
      table.sort(ops)
      for _, op in ipairs(ops) do
        local e = merged[t.id][metric][op]
        local limit = parse_limit(e.value, by_id)
        list[#list + 1] = {
          id = t.id, metric = metric, op = op, value = e.value,
          expr = e.value, ref = limit.ref, limit = limit, source = e.source,
        }
      end
    end
  end
  -- what each test is known to report: its units, headline and the
  -- metrics its criteria name (a bare name in a limit must be one)
  -- (or a name its spec file spells: a spec reports { name = ... })
  local declared, sources = {}, {}
  for _, t in ipairs(tests) do
    local d = {}
    for k in pairs(t.units or {}) do d[k] = true end
    if t.headline then d[t.headline] = true end
    for metric in pairs(merged[t.id]) do d[metric] = true end
    local file = tostring(t.where):match("^(.*):%d+$")
    if file and sources[file] == nil then
      local f = io.open(file, "r")
      sources[file] = f and f:read("a") or false
      if f then f:close() end
    end
    setmetatable(d, { __index = function(_, name)
      local text = file and sources[file]
      if not text then return true end   -- no source to look at: trust it
      for part in tostring(name):gmatch("[^.]+") do
        if not text:find("%f[%w_]" .. part:gsub("%p", "%%%0") .. "%f[^%w_]") then
          return false
        end
      end
      return true
    end })
    declared[t.id] = d
  end
  for _, c in ipairs(list) do
    M.validate(c, declared[c.id])
    c.text = M.text(c)
  end
  return list
end

local function is_number(v)
  return math.type(v) ~= nil and v == v
end

-- What `check` (and every run) refuses before anything runs: a limit the
-- judge could not use.  Raises file:line (exit 2).
function M.validate(c, declared)
  local l, v = c.limit, c.value
  local function bad(fmt, ...)
    spec.error(c.source, "%s.%s.%s: " .. fmt, c.id, c.metric, c.op, ...)
  end
  if l.kind == "ref" then
    if l.own and declared and not declared[l.own] then
      bad("%q is neither a number nor a reference: '%s' is no site.<key>, no "
          .. "<TEST>.<metric>, and no metric of test %s (its units, headline "
          .. "and criteria do not name it, nor does its spec file)",
          tostring(v), l.own, c.id)
    end
    return
  end
  if type(v) == "number" and v ~= v then
    bad("NaN is no limit (nothing compares equal to it)")
  end
  if c.op == "min" or c.op == "max" then
    if not is_number(v) then
      bad("%s is neither a number nor a reference (site.<key>, <TEST>.<metric>, "
          .. "[factor *] <metric>)%s", type(v) == "string" and ("%q"):format(v)
          or type(v), type(v) == "string" and v:match("^([^.]+)%.") and
          (" - no loaded spec defines test '" .. v:match("^([^.]+)%.") .. "'") or "")
    end
  elseif c.op == "in" then
    if type(v) ~= "table" or #v == 0 then bad("expected a non-empty list") end
    for i, x in ipairs(v) do
      if type(x) == "table" or (type(x) == "number" and x ~= x) then
        bad("item %d of the list is not a plain value", i)
      end
    end
  else
    if type(v) == "table" then bad("expected one value, got a list or mapping") end
    if type(v) == "string" and v:match("^%s*[%d%.]*%s*[x%*]?%s*site%.") then
      bad("%q is not a reference strata can read (site.<key> or "
          .. "<factor> * site.<key>)", v)
    end
  end
end

-- With the site file in hand (`check --site`, and every run): a site
-- reference whose section exists but lacks the key, or whose value is no
-- number where a number is needed, raises (exit 2).  A reference into a
-- section the site does not have at all returns a warning instead (the
-- tests that use that section SKIP on such a site).
function M.check_site_ref(c, site)
  local l = c.limit
  if l.kind ~= "ref" or not l.site then return end
  local parent, last = l.site:match("^(.*)%.([^.]+)$")
  local v = M.site_get(site, l.site)
  if v == nil then
    if parent and type(M.site_get(site, parent)) == "table" then
      spec.error(c.source, "%s.%s.%s: site.%s is not in the site file (site.%s "
                 .. "has no key '%s')", c.id, c.metric, c.op, l.site, parent, last)
    end
    return ("%s: %s needs site.%s, absent from the site file"):format(
      c.source, c.id, l.site)
  end
  if (l.factor ~= 1 or c.op == "min" or c.op == "max") and not is_number(v) then
    spec.error(c.source, "%s.%s.%s: site.%s is %s, not a number", c.id,
               c.metric, c.op, l.site, type(v) == "string" and ("%q"):format(v)
               or type(v))
  end
end

local fmt_value = common.fmt
M.fmt_value = fmt_value

-- "bw_gbps >= 0.9 x site.rdma.line_rate_gbps"
function M.text(c)
  local l = c.limit
  local rhs
  if l.kind == "ref" then
    rhs = (l.factor ~= 1 and (fmt_value(l.factor) .. " x ") or "") .. l.ref
  else
    rhs = fmt_value(l.value)
  end
  return ("%s %s %s"):format(c.metric, SYMBOL[c.op], rhs)
end

local function site_get(site, path)
  local v = site
  for part in path:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    v = v[tonumber(part) or part]
  end
  return v
end
M.site_get = site_get

-- A node of a fleet run (ctx.fleet == "defer") leaves a fleet.median
-- check to the fleet model (strata.fleet.baseline): ok for now, marked.
local DEFER = {}

-- Evaluate a limit: returns value or nil, why.
-- ctx = { site, metrics, cell, lookup = function(id, cell) -> metrics|nil, why }
local function eval_limit(l, ctx)
  if l.kind == "value" then return l.value end
  local v
  if l.site then
    v = site_get(ctx.site, l.site)
    if v == nil then
      return nil, ("site.%s is not set in the site file"):format(l.site)
    end
  elseif l.fleet then
    if not ctx.fleet then
      return nil, ("%s is the fleet's: judged by strata run --fleet"):format(l.ref)
    end
    if ctx.fleet == "defer" then return nil, DEFER end
    local fv, why = ctx.fleet(l.stat, l.fleet)
    if fv == nil then return nil, why end
    v = fv
  elseif l.baseline then
    if not ctx.baseline then
      return nil, ("%s needs a baseline: strata run --baseline FILE.jsonl"):format(l.ref)
    end
    local m, why = ctx.baseline()
    if not m then return nil, why end
    v = m[l.baseline]
    if v == nil then
      return nil, ("the baseline did not report %s"):format(l.baseline)
    end
  elseif l.test then
    local m, why = ctx.lookup(l.test, ctx.cell)
    if not m then return nil, why end
    v = m[l.metric]
    if v == nil then
      return nil, ("%s did not report %s"):format(l.test, l.metric)
    end
  else
    v = ctx.metrics[l.own]
    if v == nil then
      return nil, ("this test did not report %s"):format(l.own)
    end
  end
  if l.factor ~= 1 then
    if type(v) ~= "number" then
      return nil, ("%s is not a number"):format(l.ref)
    end
    v = v * l.factor
  end
  return v
end

local function glob_match(pattern, name)
  local lp = "^" .. pattern:gsub("[%^%$%(%)%%%.%[%]%+%-%?]", "%%%0"):gsub("%*", ".*") .. "$"
  return name:match(lp) ~= nil
end

local function compare(op, value, limit)
  if op == "in" then
    for _, x in ipairs(limit) do if x == value then return true end end
    return false
  end
  if op == "eq" then return value == limit end
  if op == "ne" then return value ~= limit end
  if type(value) ~= "number" or type(limit) ~= "number" then return false end
  if value ~= value then return false end   -- NaN never passes
  if op == "min" then return value >= limit end
  return value <= limit
end

-- Judge one result's metrics against the test's criteria.
-- Returns a list of checks {metric, op, limit, value, ok, text, source}.
function M.judge(criteria, ctx)
  local checks = {}
  for _, c in ipairs(criteria) do
    local limit, why = eval_limit(c.limit, ctx)
    local names = {}
    if c.metric:find("*", 1, true) then
      for name in pairs(ctx.metrics) do
        if glob_match(c.metric, name) then names[#names + 1] = name end
      end
      table.sort(names)
    else
      names[1] = c.metric
    end
    local text = c.text
    if c.limit.kind == "ref" and limit ~= nil then
      text = ("%s (= %s)"):format(text, fmt_value(limit))
    end
    if #names == 0 then
      checks[#checks + 1] = { metric = c.metric, criterion = c.metric,
        op = c.op, expr = c.expr, ok = false, text = text, source = c.source,
        why = "no metric matches " .. c.metric }
    end
    for _, name in ipairs(names) do
      local v = ctx.metrics[name]
      local ck = { metric = name, criterion = c.metric, op = c.op,
                   expr = c.expr, limit = limit, value = v, text = text,
                   source = c.source }
      if why == DEFER then
        ck.ok, ck.deferred = true, true
      elseif limit == nil then
        ck.ok, ck.why = false, "cannot evaluate: " .. why
        ck.unresolved = true
      elseif v == nil then
        ck.ok, ck.why = false, name .. " was not measured"
      else
        ck.ok = compare(c.op, v, limit)
        if not ck.ok then
          ck.why = ("%s = %s, wanted %s %s"):format(name, fmt_value(v),
                                                 SYMBOL[c.op], fmt_value(limit))
        end
      end
      checks[#checks + 1] = ck
    end
  end
  return checks
end

return M
