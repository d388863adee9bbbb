-- strata.compare: one run against another.  What `strata diff A B` shows
-- and what `strata run --baseline FILE` puts beside each cell: the same
-- tests and cells matched by ID and cell label, the headline metric's
-- change in %, verdict changes, and inventory differences.
local verdict = require "strata.verdict"
local common = require "strata.report.common"
local units = require "strata.units"

local M = {}

-- Percent change from a to b (nil unless both are finite numbers, a ~= 0).
function M.pct(a, b)
  if not (common.finite(a) and common.finite(b)) or a == 0 then return nil end
  return (b - a) / math.abs(a) * 100
end

-- Results of a model (or of a "baseline" record) by test ID and cell
-- label: index[id][label] = metrics.
function M.index(results)
  local idx = {}
  for _, r in ipairs(results or {}) do
    idx[r.id] = idx[r.id] or {}
    idx[r.id][verdict.label(r.params, r.cell)] = r.metrics or {}
  end
  return idx
end

-- The metrics of test id at this cell in an index, or nil, why.
function M.lookup(idx, id, params, cell, what)
  local cells = idx and idx[id]
  if not cells then
    return nil, ("%s has no result for %s"):format(what or "the baseline", id)
  end
  local label = verdict.label(params, cell)
  local m = cells[label]
  if not m then
    return nil, ("%s has no result for %s%s"):format(what or "the baseline",
      id, label ~= "" and (" [" .. label .. "]") or "")
  end
  return m
end

-- The record `strata run --baseline FILE` journals: the baseline's
-- metrics per cell (not its series or tables), so that a report of this
-- run's journal needs nothing but the journal.
function M.baseline_record(path, model)
  local rs = {}
  for _, r in ipairs(model.results) do
    if r.metrics and next(r.metrics) then
      rs[#rs + 1] = { id = r.id, params = r.params, cell = r.cell,
                      metrics = r.metrics }
    end
  end
  return { type = "baseline", path = path, host = model.run.host,
           started = model.run.started, verdict = model.verdict,
           results = rs }
end

-- Whether a higher value of metric is better for test t (strata.model:
-- its criterion, else its unit, else nil: just "changed").
local function better_up(t, metric, unit)
  return require("strata.model").better(t.criteria, metric, unit or false)
end

-- Flatten an inventory into "key" -> text, lists of records keyed by their
-- name or address (nics[eth0].mtu) so that order does not make a
-- difference.  Volatile keys (load, free memory) are left out.
local VOLATILE = { loadavg = true, ["memory.available_bytes"] = true,
                   uptime = true, uptime_s = true }
local function flatten(v, prefix, out)
  if type(v) ~= "table" then
    out[prefix] = common.fmt(v)
    return out
  end
  local n = #v
  for k, x in pairs(v) do
    local key
    if math.type(k) == "integer" and n > 0 then
      local id = type(x) == "table" and (x.name or x.address or x.addr
        or x.bus_id or x.index or x.node) or k
      key = ("%s[%s]"):format(prefix, tostring(id))
    else
      key = prefix ~= "" and (prefix .. "." .. tostring(k)) or tostring(k)
    end
    if not VOLATILE[key] then flatten(x, key, out) end
  end
  return out
end

-- Keys whose values differ between two inventories: { key, a, b }.
function M.inventory(a, b)
  local fa, fb = flatten(a or {}, "", {}), flatten(b or {}, "", {})
  local keys, seen = {}, {}
  for k in pairs(fa) do keys[#keys + 1] = k seen[k] = true end
  for k in pairs(fb) do if not seen[k] then keys[#keys + 1] = k end end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do
    if fa[k] ~= fb[k] then out[#out + 1] = { key = k, a = fa[k], b = fb[k] } end
  end
  return out
end

-- Compare two run models (inventory also lists text metrics of the same
-- cells that differ: "G1 driver 580.95 -> 580.159").  tolerance: percent within which a change is
-- noise.  Returns { tests = { {id, layer, title, status_a, status_b,
-- changed, metric, cells = { {label, a, b, pct, flag, status_a,
-- status_b} } } }, inventory, regressions, improvements }.
function M.diff(A, B, tolerance)
  tolerance = tolerance or 5
  local d = { tolerance = tolerance, tests = {}, regressions = 0,
              improvements = 0, verdict_a = A.verdict, verdict_b = B.verdict,
              run_a = A.run, run_b = B.run }
  local ta, tb, order = {}, {}, {}
  for _, t in ipairs(A.tests) do ta[t.id] = t order[#order + 1] = t.id end
  for _, t in ipairs(B.tests) do
    tb[t.id] = t
    if not ta[t.id] then order[#order + 1] = t.id end
  end
  local ra, rb = verdict.by_test(A.results), verdict.by_test(B.results)
  -- PASS -> WARN is worse (a warn limit crossed), WARN -> PASS better
  local RANK = { PASS = 1, WARN = 1.5, SKIP = 2, INCOMPLETE = 3,
                 ["NOT RUN"] = 3, STOPPED = 3, BLOCKED = 4, FAIL = 5, ERROR = 5 }
  for _, id in ipairs(order) do
    local a, b = ta[id], tb[id]
    local t = a or b
    local metric = (a and a.headline_metric) or (b and b.headline_metric)
    local r1 = (ra[id] or rb[id] or {})[1] or {}
    local up = better_up(a or b, metric, units.of(r1.units, metric))
    local e = { id = id, layer = t.layer, title = t.title,
                status_a = a and a.status or "absent",
                status_b = b and b.status or "absent", metric = metric,
                cells = {} }
    e.changed = e.status_a ~= e.status_b
    if e.changed and (RANK[e.status_b] or 6) > (RANK[e.status_a] or 6) then
      e.worse = true
      d.regressions = d.regressions + 1
    elseif e.changed and (RANK[e.status_b] or 6) < (RANK[e.status_a] or 6) then
      e.better = true
    end
    -- cells in A's order, then B's own
    local cells, by_label = {}, {}
    local function add(r, side)
      local label = verdict.label(r.params, r.cell)
      local c = by_label[label]
      if not c then
        c = { label = label }
        by_label[label] = c
        cells[#cells + 1] = c
      end
      c["status_" .. side] = r.status
      c[side] = metric and r.metrics and r.metrics[metric] or nil
    end
    for _, r in ipairs(ra[id] or {}) do add(r, "a") end
    for _, r in ipairs(rb[id] or {}) do add(r, "b") end
    for _, c in ipairs(cells) do
      c.pct = M.pct(c.a, c.b)
      if not c.status_a then c.flag = "only in B"
      elseif not c.status_b then c.flag = "only in A"
      elseif c.pct and math.abs(c.pct) > tolerance then
        if up == nil then
          c.flag = "changed"
        elseif (c.pct > 0) == up then
          c.flag = "better"
          d.improvements = d.improvements + 1
        else
          c.flag = "worse"
          d.regressions = d.regressions + 1
        end
      elseif c.pct then
        c.flag = "within tolerance"
      end
      e.cells[#e.cells + 1] = c
    end
    d.tests[#d.tests + 1] = e
  end
  d.inventory = M.inventory(A.inventory, B.inventory)
  -- facts tests measured as text (driver and firmware versions, MTU state,
  -- GID types, ...): those that differ between the same cells, listed with
  -- the inventory
  local ia, ib = M.index(A.results), M.index(B.results)
  for _, id in ipairs(order) do
    local labels = {}
    for label in pairs(ia[id] or {}) do labels[#labels + 1] = label end
    table.sort(labels)
    for _, label in ipairs(labels) do
      local ma, mb = ia[id][label], (ib[id] or {})[label]
      if mb then
        local names = {}
        for k, v in pairs(ma) do
          if type(v) == "string" or type(v) == "boolean" then names[#names + 1] = k end
        end
        table.sort(names)
        for _, k in ipairs(names) do
          if mb[k] ~= nil and mb[k] ~= ma[k] then
            d.inventory[#d.inventory + 1] = {
              key = ("%s%s %s"):format(id, label ~= "" and ("[" .. label .. "]") or "", k),
              a = common.fmt(ma[k]), b = common.fmt(mb[k]) }
          end
        end
      end
    end
  end
  return d
end

return M
