-- strata.fleet.baseline: the fleet as its own baseline.  Per (test,
-- phase, cell, metric) over the nodes: the median and the spread (min,
-- max, n).  A criterion whose limit names `fleet.median.<metric>` (e.g.
-- R2 bw_gbps: { min: "0.9 * fleet.median.bw_gbps" }) cannot be evaluated
-- on a node alone: the node journals it deferred (ok for now), and here it is
-- judged again by strata.thresholds.judge with the fleet's median, before
-- any status is rolled up.
local thresholds = require "strata.thresholds"

local M = {}

local function median(v)
  local n = #v
  if n == 0 then return nil end
  if n % 2 == 1 then return v[(n + 1) // 2] end
  return (v[n // 2] + v[n // 2 + 1]) / 2
end

-- the fleet model's cell key (required when called: the model requires
-- this module)
local function cell_key(r) return require("strata.fleet.model").cell_key(r) end

local function key(r, metric)
  return table.concat({ r.id, r.phase or "", cell_key(r), metric }, "|")
end

-- Every numeric metric of every result (the last try of a cell where it
-- ran more than once), pooled over the nodes.  Returns key -> stats and
-- the ordered list of stats.
function M.stats(records)
  local last = {}
  for i, r in ipairs(records) do
    if r.type == "result" and r.try then
      last[table.concat({ r.node or "", r.phase or "", r.id, tostring(r.cell_index) }, "|")] = i
    end
  end
  local by, list = {}, {}
  for i, r in ipairs(records) do
    local keep = r.type == "result" and r.node and r.metrics and (not r.try or
      last[table.concat({ r.node or "", r.phase or "", r.id, tostring(r.cell_index) }, "|")] == i)
    if keep then
      for m, v in pairs(r.metrics) do
        if math.type(v) and v == v then
          local k = key(r, m)
          if not by[k] then
            by[k] = { id = r.id, phase = r.phase, cell = cell_key(r), metric = m, vals = {} }
            list[#list + 1] = by[k]
          end
          table.insert(by[k].vals, v)
        end
      end
    end
  end
  for _, s in ipairs(list) do
    table.sort(s.vals)
    s.n, s.min, s.max, s.median = #s.vals, s.vals[1], s.vals[#s.vals], median(s.vals)
  end
  return by, list
end

-- Judge again every check a node could not evaluate because its limit is
-- the fleet's (fleet.median.<metric>).  criteria: the run's resolved list
-- (the journal's thresholds record).
function M.rejudge(records, criteria)
  local fleet_crit = {}
  for _, c in ipairs(criteria or {}) do
    if type(c.expr) == "string" and c.expr:find("fleet%.median%.") then
      local x = {}
      for k, v in pairs(c) do x[k] = v end
      x.limit = thresholds.parse_limit(c.expr, {})
      x.ref = x.ref or x.limit.ref
      x.text = x.text or thresholds.text(x)
      fleet_crit[c.id .. "|" .. c.metric .. "|" .. c.op] = x
    end
  end
  if not next(fleet_crit) then return 0 end
  local by = M.stats(records)
  local n = 0
  for _, r in ipairs(records) do
    if r.type == "result" and r.node and r.checks then
      for i, ck in ipairs(r.checks) do
        local c = fleet_crit[r.id .. "|" .. tostring(ck.criterion or ck.metric) .. "|" .. tostring(ck.op)]
        if c and (ck.deferred or ck.unresolved) then
          local new = thresholds.judge({ c }, { metrics = r.metrics or {}, cell = r.cell,
            fleet = function(stat, metric)
              local s = by[key(r, metric)]
              if not s or s.n < 2 then
                return nil, ("fleet.%s.%s: fewer than 2 nodes measured it"):format(stat, metric)
              end
              return s[stat]
            end })
          if new[1] then
            r.checks[i] = new[1]
            n = n + 1
          end
        end
      end
    end
  end
  return n
end

return M
