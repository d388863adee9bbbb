-- strata.fleet.tries: the tries of a fleet cell (`--repeat N`,
-- `--until-pass N`).  The runner journals every try as its own record
-- (try = k, tries = N); here the tries of one cell (node, phase, pair,
-- its devices on rails, test, cell) become one cell: the last try stands for it, the earlier
-- ones are kept (superseded) with their figures, and a cell whose tries
-- both failed and passed is FLAKY: its own status, never a PASS.
local M = {}

local function key(r)
  return table.concat({ r.node or "", r.phase or "",
                        r.pair and table.concat(r.pair, ">") or "",
                        r.pair_devices and table.concat(r.pair_devices, ">") or "", r.id,
                        tostring(r.cell_index or 0) }, "|")
end

local function median(xs)
  local v = {}
  for i, x in ipairs(xs) do v[i] = x end
  table.sort(v)
  local n = #v
  if n == 0 then return nil end
  if n % 2 == 1 then return v[(n + 1) // 2] end
  return (v[n // 2] + v[n // 2 + 1]) / 2
end

local BAD = { FAIL = true, ERROR = true }

-- results: judged result records (status set).  Marks every try but the
-- last r.superseded; the last gets r.tries_seen = { {try, status, value,
-- reason} }, r.spread = {n, min, median, max} of its headline across
-- tries and, when its tries both passed and failed, r.flaky (the reason
-- strata.verdict.cell gives FLAKY).  Returns the FLAKY cells.
function M.collapse(results)
  local groups, order = {}, {}
  for _, r in ipairs(results) do
    if r.type == "result" and r.try then
      local k = key(r)
      if not groups[k] then
        groups[k] = {}
        order[#order + 1] = k
      end
      table.insert(groups[k], r)
    end
  end
  local flaky = {}
  for _, k in ipairs(order) do
    local g = groups[k]
    table.sort(g, function(a, b) return a.try < b.try end)
    local last, seen, vals = g[#g], {}, {}
    local passed, failed, first_bad = 0, 0, nil
    for i, r in ipairs(g) do
      if i < #g then r.superseded = true end
      local v = r.headline and r.metrics and r.metrics[r.headline]
      if type(v) == "number" and v == v then vals[#vals + 1] = v end
      seen[#seen + 1] = { try = r.try, status = r.status, value = v, reason = r.reason }
      if r.status == "PASS" then passed = passed + 1
      elseif BAD[r.status] then
        failed = failed + 1
        first_bad = first_bad or r
      end
    end
    last.tries_seen = seen
    if #vals > 0 then
      table.sort(vals)
      last.spread = { n = #vals, min = vals[1], median = median(vals), max = vals[#vals] }
    end
    if passed > 0 and failed > 0 then
      last.flaky = ("failed %d of %d tries (try %d %s: %s), passed %d"):format(
        failed, #g, first_bad.try, first_bad.status,
        tostring(first_bad.reason or ""):gsub("\n.*", ""), passed)
      last.status, last.reason = "FLAKY", last.flaky
      flaky[#flaky + 1] = last
    end
  end
  return flaky
end

return M
