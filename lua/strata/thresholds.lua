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
local criteria = require "strata.criteria"

local M = {}

local model = require "strata.model"
local glob = require "strata.glob"

-- the one operator table (strata.model): ">=" in texts, "<" not holding
local function SYM(op) return model.symbol(op, "text") end
local function NOT_SYM(op) return model.symbol(op, "negated") end

-- Load a thresholds file: { [id] = { [name] = entry } }, each entry as
-- strata.criteria reads it (a limit with its warn band, or a group), every
-- limit with the file:line of its value; and { [id] = { value, source } }
-- for each test's `gate: false` (record only).
function M.load(path, known)
  local doc, lines = spec.protect(yaml.load_file, path)
  local out, gates = {}, {}
  local function at(t, k)
    local l = (lines[t] or {})[k]
    return l and ("%s:%d"):format(path, l) or nil
  end
  local function line(t, k) return at(t, k) or (path .. ":1") end
  local function fail(where, fmt, ...) spec.error(where, fmt, ...) end
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
    for metric, node in pairs(metrics) do
      if metric == "gate" then
        if type(node) ~= "boolean" then
          spec.error(line(metrics, metric), "%s.gate: expected true or false "
                     .. "(false: record only)", id)
        end
        gates[id] = { value = node, source = line(metrics, metric) }
      else
        out[id][metric] = criteria.parse(metric, node, at, fail,
          line(metrics, metric), ("%s.%s"):format(id, tostring(metric)))
      end
    end
  end
  return out, gates
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

-- Merge entry e over entry into (the same name, a lower precedence): a
-- group replaces whatever was there, and is replaced whole; a limit
-- replaces the operators it gives, each with its own warn band.
local function merge(into, e)
  if e.group or not into or into.group then return e end
  -- the cells it judges: the later entry's where when it gives one
  local m = { metric = e.metric, ops = {}, warn = nil, where = e.where or into.where }
  for op, x in pairs(into.ops) do m.ops[op] = x end
  for op, x in pairs(into.warn or {}) do
    m.warn = m.warn or {}
    m.warn[op] = x
  end
  for op, x in pairs(e.ops) do
    m.ops[op] = x
    if m.warn then m.warn[op] = nil end
    if e.warn and e.warn[op] then
      m.warn = m.warn or {}
      m.warn[op] = e.warn[op]
    end
  end
  return m
end

-- A copy of a limit entry (sets change it; the spec's stays as loaded).
local function copy_limit(e)
  local c = { metric = e.metric, ops = {}, warn = nil, where = e.where }
  for op, x in pairs(e.ops) do c.ops[op] = x end
  for op, x in pairs(e.warn or {}) do
    c.warn = c.warn or {}
    c.warn[op] = x
  end
  return c
end

-- The entry a --set names: "metric", "metric.warn", or a member of a group
-- "label.member[.member...]" (then its owner list and place, so a dropped
-- member leaves its group).  Returns entry, warn?, list, index.
local function set_target(m, name)
  local warn = false
  if name:match("%.warn$") and not m[name] then
    name, warn = name:sub(1, -6), true
  end
  if m[name] or not name:find(".", 1, true) then return m[name], warn, nil, name end
  local head, rest = name:match("^([^.]+)%.(.+)$")
  local g = m[head]
  while g and g.group do
    local part, tail = rest:match("^([^.]+)%.(.+)$")
    for i, mem in ipairs(g.members) do
      if mem.metric == rest then return mem, warn, g.members, i end
      if part and mem.metric == part and mem.group then
        g, rest = mem, tail
        goto next
      end
    end
    do return nil, warn end
    ::next::
  end
  return nil, warn
end

-- A group copied down to the member a --set changes (copy on write).
local function copy_group(g)
  local c = { metric = g.metric, group = g.group, source = g.source,
              members = {} }
  for i, mem in ipairs(g.members) do
    c.members[i] = mem.group and copy_group(mem) or copy_limit(mem)
  end
  return c
end

-- Apply one --set to a test's merged entries m.
local function apply_set(m, s)
  local name = s.metric
  local head = name:match("^([^.]+)%.") or name
  if m[head] and m[head].group and head ~= name then m[head] = copy_group(m[head]) end
  local e, warn, list, idx = set_target(m, name)
  if e and e.group then
    spec.error(s.source, "%s.%s is an %s group: set one of its members "
               .. "(%s.%s.<member>.%s=VALUE)", s.id, e.metric, e.group, s.id,
               e.metric, s.op)
  end
  if not e and list == nil and not m[idx or name] and name:find(".", 1, true)
     and m[head] and m[head].group then
    spec.error(s.source, "%s.%s has no member '%s'", s.id, head,
               name:sub(#head + 2))
  end
  if not e then
    if warn then
      spec.error(s.source, "%s.%s.warn.%s: a WARN band sits beside a FAIL "
                 .. "limit: %s.%s has none", s.id, idx, s.op, s.id, idx)
    end
    if s.drop then return end
    e = { metric = name, ops = {} }
    m[name] = e
  elseif not list then
    e = copy_limit(e)
    m[idx] = e
  else
    e = copy_limit(e)
    list[idx] = e
  end
  local entry = (not s.drop) and { value = s.value, source = s.source } or nil
  if warn then
    if not e.ops[s.op] and entry then
      spec.error(s.source, "%s.%s.warn.%s: a WARN band sits beside a FAIL "
                 .. "limit: give %s.%s.%s too", s.id, e.metric, s.op, s.id,
                 e.metric, s.op)
    end
    e.warn = e.warn or {}
    e.warn[s.op] = entry
  else
    e.ops[s.op] = entry
    if e.warn then e.warn[s.op] = nil end
  end
  if list and next(e.ops) == nil then table.remove(list, idx) end
end

local OP_ORDER = { "eq", "in", "max", "min", "ne" }   -- sorted, as before

-- The resolved criteria of an entry, appended to out: one per operator
-- of a limit (with its warn band as c.warn, the same shape), one per
-- group (its members resolved the same way, in the order written).
local function flatten(id, e, by_id, out)
  if e.group then
    local members = {}
    for _, mem in ipairs(e.members) do flatten(id, mem, by_id, members) end
    if #members == 0 then return out end   -- every member dropped (--set)
    out[#out + 1] = model.criterion { id = id, metric = e.metric,
      op = e.group, members = members, source = e.source }
    return out
  end
  for _, op in ipairs(OP_ORDER) do
    local x = e.ops[op]
    if x then
      local limit = parse_limit(x.value, by_id)
      local c = model.criterion { id = id, metric = e.metric, op = op,
        value = x.value, ref = limit.ref, limit = limit, source = x.source,
        where = e.where and #e.where > 0 and e.where or nil }
      local w = e.warn and e.warn[op]
      if w then
        local wl = parse_limit(w.value, by_id)
        c.warn = model.criterion { id = id, metric = e.metric, op = op,
          value = w.value, ref = wl.ref, limit = wl, source = w.source,
          band = "warn" }
      end
      out[#out + 1] = c
    end
  end
  return out
end

-- fn(c, parent) for every resolved criterion, group member and warn band.
function M.each(list, fn, parent)
  for _, c in ipairs(list) do
    fn(c, parent)
    if c.warn then fn(c.warn, c) end
    if c.members then M.each(c.members, fn, c) end
  end
end

-- A where as the journal keeps it: { { param, op, value }, ... }.
local function where_record(where)
  if not where then return nil end
  local out = {}
  for i, w in ipairs(where) do out[i] = { param = w.param, op = w.op, value = w.value } end
  return out
end

-- The criteria as the journal's thresholds record keeps them (no parsed
-- limits): id, metric, op, expr, ref, text, source, warn?, members?.
function M.records(list)
  local out = {}
  for i, c in ipairs(list) do
    out[i] = { id = c.id, metric = c.metric, op = c.op, expr = c.expr,
               ref = c.ref, text = c.text, source = c.source, where = where_record(c.where),
               warn = c.warn and M.records({ c.warn })[1] or nil,
               members = c.members and M.records(c.members) or nil }
  end
  return out
end

-- Resolve every test's criteria into a flat list of
-- { id, metric, op, limit = parsed, expr = text, source, warn?, members? }.
function M.resolve(tests, by_id, file_crit, sets)
  local merged = {}
  for _, t in ipairs(tests) do
    local m = {}
    for metric, e in pairs(t.criteria) do m[metric] = e end
    for metric, e in pairs((file_crit or {})[t.id] or {}) do
      m[metric] = merge(m[metric], e)
    end
    merged[t.id] = m
  end
  for _, s in ipairs(sets or {}) do
    if not merged[s.id] then
      spec.error(s.source, "no loaded spec defines test '%s'", s.id)
    end
    apply_set(merged[s.id], s)
  end
  local list = {}
  for _, t in ipairs(tests) do
    local metrics = {}
    for metric in pairs(merged[t.id]) do metrics[#metrics + 1] = metric end
    table.sort(metrics)
    for _, metric in ipairs(metrics) do
      flatten(t.id, merged[t.id][metric], by_id, list)
    end
  end
  -- what each test is known to report: its units, headline and the
  -- metrics its criteria name (a bare name in a limit must be one)
  -- (or a name its spec file spells: a spec reports { name = ... })
  local declared, sources, params = {}, {}, {}
  for _, t in ipairs(tests) do
    params[t.id] = t.params or {}
    local d = {}
    for k in pairs(t.units or {}) do d[k] = true end
    if t.headline then d[t.headline] = true end
    for _, e in pairs(merged[t.id]) do
      for _, metric in ipairs(criteria.metrics(e)) do d[metric] = true end
    end
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
  M.each(list, function(c, parent)
    if not c.members then
      if parent and c ~= parent.warn and glob.is_pattern(c.metric)
         and not c.metric:match("^cv%(.*%)$") then
        spec.error(c.source, "%s.%s: a member of %s %s names one metric, "
                   .. "not a pattern", c.id, c.metric, parent.metric, parent.op)
      end
      M.validate(c, declared[c.id])
      M.validate_where(c, params[c.id])
    end
  end)
  for _, c in ipairs(list) do M.set_text(c) end
  return list
end

local function is_number(v)
  return math.type(v) ~= nil and v == v
end

-- A where must name the test's own matrix parameters (a typo would judge
-- no cell at all).  Raises file:line (exit 2).
function M.validate_where(c, params)
  for _, w in ipairs(c.where or {}) do
    local known = false
    for _, p in ipairs(params or {}) do known = known or p == w.param end
    if not known then
      spec.error(w.source, "%s.%s.where: '%s' is not a matrix parameter of %s (%s)",
                 c.id, c.metric, w.param, c.id, #(params or {}) > 0
                 and ("its parameters: " .. table.concat(params, ", "))
                 or "it has no matrix")
    end
  end
end

-- What `check` (and every run) refuses before anything runs: a limit the
-- judge could not use.  Raises file:line (exit 2).
function M.validate(c, declared)
  local l, v = c.limit, c.value
  local function bad(fmt, ...)
    spec.error(c.source, "%s.%s.%s: " .. fmt, c.id, c.metric,
               c.band and (c.band .. "." .. c.op) or c.op, ...)
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

-- With the site file in hand (`check --site`): a site reference whose
-- value is no number where a number is needed raises (exit 2), and so
-- does a key missing from a section the site has when example (the table
-- of specs/site.example.yaml) does not know it either: a typo.  A known
-- key the site does not set returns a warning (its check is not judged),
-- as does one into a section the site lacks (its tests SKIP).
function M.check_site_ref(c, site, example)
  local l = c.limit
  if l.kind ~= "ref" or not l.site then return end
  local parent, last = l.site:match("^(.*)%.([^.]+)$")
  local v = M.site_get(site, l.site)
  -- a WARN band is named as it is written and --set: metric.warn.op
  local band = c.band == "warn" and "warn." or ""
  if v == nil then
    if parent and type(M.site_get(site, parent)) == "table" then
      -- a key specs/site.example.yaml documents is an expectation this
      -- site does not give: not judged, a warning; any other is a typo
      if example and M.site_get(example, l.site) ~= nil then
        return ("%s: %s.%s%s is not judged: site.%s has no key '%s'"):format(
          c.source, c.id, c.metric, band ~= "" and (".warn." .. c.op) or "",
          parent, last)
      end
      spec.error(c.source, "%s.%s.%s%s: site.%s is not in the site file (site.%s "
                 .. "has no key '%s', nor does specs/site.example.yaml)", c.id,
                 c.metric, band, c.op, l.site, parent, last)
    end
    return ("%s: %s%s needs site.%s, absent from the site file"):format(
      c.source, c.id, band ~= "" and ("." .. c.metric .. ".warn." .. c.op) or "",
      l.site)
  end
  if (l.factor ~= 1 or c.op == "min" or c.op == "max") and not is_number(v) then
    spec.error(c.source, "%s.%s.%s%s: site.%s is %s, not a number", c.id,
               c.metric, band, c.op, l.site, type(v) == "string" and ("%q"):format(v)
               or type(v))
  end
end

local fmt_value = common.fmt
M.fmt_value = fmt_value

-- "bw_gbps >= 0.9 x site.rdma.line_rate_gbps"; a group:
-- "benefit: any of (throughput_x >= 1.1; cpu_lower_pct >= 20)".
local function group_words(op) return model.GROUPS[op].text end
function M.text(c)
  if c.members then
    local parts = {}
    for i, mem in ipairs(c.members) do parts[i] = M.text(mem) end
    return ("%s: %s (%s)"):format(c.metric, group_words(c.op),
                                  table.concat(parts, "; "))
  end
  local l = c.limit
  local rhs
  if l.kind == "ref" then
    rhs = (l.factor ~= 1 and (fmt_value(l.factor) .. " x ") or "") .. l.ref
  else
    rhs = fmt_value(l.value)
  end
  return ("%s %s %s%s"):format(c.metric, SYM(c.op), rhs, model.where_text(c.where))
end

-- Set c.text on a resolved criterion, its warn band and its members.
function M.set_text(c)
  c.text = M.text(c)
  if c.warn then c.warn.text = M.text(c.warn) end
  for _, mem in ipairs(c.members or {}) do M.set_text(mem) end
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

-- The symbol of an operator that did not hold ("8 < 20" for a min).

-- A limit's check text: its criterion text, and what a reference resolved
-- to ("bw_gbps >= 0.9 x site.rdma.line_rate_gbps (= 90)").
local function limit_text(c, limit)
  return c.text .. model.resolved(c.limit.kind == "ref" and c.ref, limit)
end

-- The WARN band of a check that held its FAIL limit: ck.warn = true with
-- ck.warn_why when the value is past the warn limit.
local function judge_warn(ck, w, v, ctx)
  local wl, why = eval_limit(w.limit, ctx)
  ck.warn_limit, ck.warn_text = wl, "warn: " .. limit_text(w, wl)
  ck.text = ck.text .. "; " .. ck.warn_text
  if wl == nil then
    ck.ok, ck.unresolved = false, true
    ck.why = "cannot evaluate the warn limit: " .. why
  elseif not compare(w.op, v, wl) then
    ck.warn = true
    ck.warn_why = ("%s = %s, past the warn limit %s %s"):format(ck.metric,
      fmt_value(v), SYM(w.op), fmt_value(wl))
  end
end

-- One member's outcome in its group's text: "throughput_x = 1.23 >= 1.1",
-- "cpu_lower_pct = 8 < 20", "ttft_better_pct not measured".
local function phrase(ck)
  if ck.members then
    return ("%s (%s: %s)"):format(ck.metric, group_words(ck.op), ck.detail)
  end
  if ck.unresolved or ck.not_judged then return ck.metric .. ": " .. ck.why end
  if ck.value == nil then return ck.metric .. " not measured" end
  local s = ("%s = %s %s %s"):format(ck.metric, fmt_value(ck.value),
    ck.ok and SYM(ck.op) or NOT_SYM(ck.op), fmt_value(ck.limit))
  if ck.warn then
    s = s .. (" (warn: %s %s)"):format(NOT_SYM(ck.op), fmt_value(ck.warn_limit))
  end
  return s
end

local judge_one

-- A group's check from its members' checks: any_of holds when one member
-- held (a held member without warning makes it no warning), all_of when
-- every member held (any warning is the group's).  A member that could
-- not be evaluated makes the group unresolved only when it could decide.
local function judge_group(c, ctx)
  local members, held = {}, {}
  local n_ok, n_clean, unresolved, judged = 0, 0, nil, 0
  for _, mem in ipairs(c.members) do
    local ck = judge_one(mem, ctx)[1]
    members[#members + 1] = ck
    if ck.unresolved then unresolved = unresolved or ck end
    -- a member not judged (an unset site expectation) neither holds nor
    -- fails: the group is decided by the others
    if not ck.not_judged then judged = judged + 1 end
    if ck.ok and not ck.not_judged then
      n_ok = n_ok + 1
      held[#held + 1] = ck.metric
      if not ck.warn then n_clean = n_clean + 1 end
    end
  end
  local parts = {}
  for i, ck in ipairs(members) do parts[i] = phrase(ck) end
  local ck = { metric = c.metric, criterion = c.metric, op = c.op,
               members = members, held = held, source = c.source,
               detail = table.concat(parts, "; ") }
  ck.text = ck.metric .. ": " .. ck.detail
  if judged == 0 and not unresolved then
    ck.ok, ck.not_judged = true, true
    ck.why = ("not judged: %s"):format(ck.detail)
    return { ck }
  end
  if c.op == "any_of" then
    ck.ok = n_ok > 0
    ck.warn = ck.ok and n_clean == 0 or nil
    if not ck.ok and unresolved then ck.unresolved = true end
  else
    ck.ok = n_ok == judged
    ck.warn = ck.ok and n_clean < #members or nil
    if unresolved then ck.ok, ck.unresolved = false, true end
  end
  if ck.unresolved then
    ck.why = ("%s: cannot evaluate %s: %s"):format(c.metric,
      unresolved.metric, unresolved.why)
  elseif not ck.ok then
    ck.why = ("%s: %s (%s)"):format(c.metric, c.op == "any_of" and "none held"
      or ("%d of %d held"):format(n_ok, #members), ck.detail)
  elseif ck.warn then
    ck.warn_why = ("%s: held with a warning (%s)"):format(c.metric, ck.detail)
  end
  return { ck }
end

-- A derived metric a criterion may name: "cv(<names>)", the coefficient
-- of variation in % (population standard deviation / |mean| x 100) of the
-- numbers of this result that <names> (comma-separated) select: a metric,
-- a list a spec returned ({ iter_gbps = { 9.8, 10.1, ... } } reads as
-- iter_gbps.1, iter_gbps.2, ...), or a pattern (lat.*.p99).  Returns the
-- value, or nil and why.
local function derived(name, metrics)
  local args = name:match("^cv%((.*)%)$")
  if not args then return nil end
  local xs = {}
  local function add(v)
    if type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge then
      xs[#xs + 1] = v
    end
  end
  for arg in args:gmatch("[^,]+") do
    arg = arg:match("^%s*(.-)%s*$")
    if glob.is_pattern(arg) then
      local names = {}
      for k in pairs(metrics) do
        if glob.match(arg, k) then names[#names + 1] = k end
      end
      table.sort(names)
      for _, k in ipairs(names) do add(metrics[k]) end
    elseif metrics[arg] ~= nil then
      add(metrics[arg])
    else
      for i = 1, math.huge do
        local v = metrics[arg .. "." .. i]
        if v == nil then break end
        add(v)
      end
    end
  end
  if #xs < 2 then
    return false, ("%s: %d number%s to compare, 2 or more needed"):format(
      name, #xs, #xs == 1 and "" or "s")
  end
  local sum = 0
  for _, x in ipairs(xs) do sum = sum + x end
  local mean = sum / #xs
  if mean == 0 then return false, name .. ": the mean is 0" end
  local ss = 0
  for _, x in ipairs(xs) do ss = ss + (x - mean) ^ 2 end
  return math.sqrt(ss / #xs) / math.abs(mean) * 100
end
M.derived = derived

-- Why a cell is outside a criterion's where ("size = 4096, not >= 65536"),
-- or nil when the criterion judges it.  A result with no cell (a fleet
-- roll-up) is judged.
function M.outside(where, cell)
  if not cell then return nil end
  for _, w in ipairs(where) do
    local v = cell[w.param]
    if v == nil then return ("no %s in this cell"):format(w.param) end
    if not compare(w.op, v, w.value) then
      return ("%s = %s, not %s %s"):format(w.param, fmt_value(v), SYM(w.op),
                                           fmt_value(w.value))
    end
  end
end

-- The checks of one criterion (several for a pattern like delta.*.x).
judge_one = function(c, ctx)
  if c.members then return judge_group(c, ctx) end
  local outside = c.where and M.outside(c.where, ctx.cell)
  if outside then
    -- a cell the criterion does not judge: said so, neither pass nor fail
    local ck = model.check(c, { metric = c.metric, text = M.text(c) })
    ck.ok, ck.not_judged, ck.out_of_scope = true, true, true
    ck.why = "not judged in this cell: " .. outside
    return { ck }
  end
  local checks = {}
  local limit, why = eval_limit(c.limit, ctx)
  local names, values = {}, ctx.metrics
  local dv, dwhy = derived(c.metric, ctx.metrics)
  if dv ~= nil then
    -- a derived metric (cv(...)): one value of its own
    names[1] = c.metric
    values = { [c.metric] = dv or nil }
  elseif glob.is_pattern(c.metric) then
    for name in pairs(ctx.metrics) do
      if glob.match(c.metric, name) then names[#names + 1] = name end
    end
    table.sort(names)
  else
    names[1] = c.metric
  end
  local text = limit_text(c, limit)
  if #names == 0 then
    checks[#checks + 1] = { metric = c.metric, criterion = c.metric,
      op = c.op, expr = c.expr, ok = false, text = text, source = c.source,
      why = "no metric matches " .. c.metric }
  end
  for _, name in ipairs(names) do
    local v = values[name]
    local ck = model.check(c, { metric = name, limit = limit, value = v,
                                text = text })
    if why == DEFER then
      ck.ok, ck.deferred = true, true
    elseif limit == nil and c.limit.site then
      -- an expectation the site file does not give: this check is not
      -- judged (README: what is missing is not a failure), and says why
      ck.ok, ck.not_judged = true, true
      ck.why = "not judged: " .. why
    elseif limit == nil then
      ck.ok, ck.why = false, "cannot evaluate: " .. why
      ck.unresolved = true
    elseif v == nil then
      ck.ok, ck.why = false, dwhy or (name .. " was not measured")
    else
      ck.ok = compare(c.op, v, limit)
      if not ck.ok then
        ck.why = ("%s = %s, wanted %s %s"):format(name, fmt_value(v),
                                               SYM(c.op), fmt_value(limit))
      elseif c.warn then
        judge_warn(ck, c.warn, v, ctx)
      end
    end
    checks[#checks + 1] = ck
  end
  return checks
end

-- Judge one result's metrics against the test's criteria.
-- Returns a list of checks {metric, op, limit, value, ok, text, source};
-- a group's check holds its members' checks (members, held).
-- A check whose limit is a site.<key> the site file does not set is
-- { ok = true, not_judged = true, why = "not judged: ..." }: it neither
-- passes nor fails the cell, and the cell's reason names it.
function M.judge(criteria_list, ctx)
  local checks = {}
  for _, c in ipairs(criteria_list) do
    for _, ck in ipairs(judge_one(c, ctx)) do checks[#checks + 1] = ck end
  end
  return checks
end

return M
