-- strata.model: turn journal records into the run model the report
-- writers take (docs/internals.md): per-test aggregation, headline
-- figures, the overall verdict and the lowest failed rung of the ladder.
local spec = require "strata.spec"
local runner = require "strata.runner"
local thresholds = require "strata.thresholds"

local M = {}

-- For the Summary: the worst cell's value of the headline metric (the
-- lowest for a `min` criterion, the highest for `max`, else the last).
local function headline(test, cells, crits)
  local metric = test.headline
  if not metric then
    for _, c in ipairs(crits) do
      if not c.metric:find("*", 1, true) then metric = c.metric break end
    end
  end
  if not metric then return nil end
  local op
  for _, c in ipairs(crits) do
    if c.metric == metric and (c.op == "min" or c.op == "max") then op = c.op break end
  end
  local best, n
  n = 0
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
  local unit = test.units and test.units[metric]
  local text = thresholds.fmt_value(best) .. (unit and (" " .. unit) or "")
  text = metric .. " = " .. text
  if n > 1 then
    text = text .. (" (%s of %d cells)"):format(op == "min" and "lowest"
      or op == "max" and "highest" or "last", n)
  end
  return text, type(best) == "number" and best or nil
end

function M.build(records)
  local m = { run = {}, inventory = {}, criteria = {}, results = {},
              tests = {}, layers = spec.LAYERS }
  local by_id, order = {}, {}
  for _, r in ipairs(records) do
    if r.type == "run" then
      m.run = r
    elseif r.type == "inventory" then
      m.inventory = r.data or {}
    elseif r.type == "thresholds" then
      m.criteria = r.criteria or {}
    elseif r.type == "result" then
      m.results[#m.results + 1] = r
      if not by_id[r.id] then
        by_id[r.id] = { id = r.id, layer = r.layer, title = r.title,
                        params = r.params or {}, headline_metric = r.headline,
                        units = r.units or {}, source = r.source, cells = {} }
        order[#order + 1] = r.id
      end
      table.insert(by_id[r.id].cells, r)
    elseif r.type == "end" then
      m.run.ended = r.ended
      m.run.interrupted = r.interrupted
    end
  end
  if m.run.ended == nil then m.run.interrupted = true end
  local crit_by_id = {}
  for _, c in ipairs(m.criteria) do
    crit_by_id[c.id] = crit_by_id[c.id] or {}
    table.insert(crit_by_id[c.id], c)
  end
  local counts = {}
  for _, id in ipairs(order) do
    local b = by_id[id]
    local statuses, reason, duration = {}, nil, 0
    for _, r in ipairs(b.cells) do
      statuses[#statuses + 1] = r.status
      duration = duration + (r.duration_s or 0)
    end
    local status = runner.aggregate(statuses)
    for _, r in ipairs(b.cells) do
      if r.status == status and r.reason then
        reason = r.reason
        if #b.cells > 1 and r.cell then
          local parts = {}
          for _, p in ipairs(b.params) do
            if r.cell[p] ~= nil then
              parts[#parts + 1] = p .. "=" .. tostring(r.cell[p])
            end
          end
          if #parts > 0 then
            reason = "[" .. table.concat(parts, ",") .. "] " .. reason
          end
        end
        break
      end
    end
    local crits = crit_by_id[id] or {}
    local texts = {}
    for _, c in ipairs(crits) do
      texts[#texts + 1] = ("%s (%s)"):format(c.text, c.source)
    end
    local htext, hvalue = headline({ headline = b.headline_metric, units = b.units },
                                   b.cells, crits)
    local expected = b.cells[1] and b.cells[1].cells or #b.cells
    m.tests[#m.tests + 1] = {
      id = id, layer = b.layer, title = b.title, status = status,
      reason = reason, criterion = #texts > 0 and table.concat(texts, "; ")
        or "no criterion: recorded",
      headline = htext, headline_value = hvalue, cells = #b.cells,
      cells_planned = expected, params = b.params, duration_s = duration,
      source = b.source,
    }
    counts[status] = (counts[status] or 0) + 1
  end
  m.counts = counts
  local bad = (counts.FAIL or 0) + (counts.ERROR or 0) + (counts.BLOCKED or 0)
  m.verdict = (bad == 0 and not m.run.interrupted) and "PASS" or "FAIL"
  if #m.tests == 0 then m.verdict = "NO TESTS" end
  for _, t in ipairs(m.tests) do
    if t.status == "FAIL" or t.status == "ERROR" then
      local cur = m.lowest_failed
      if not cur or spec.LAYER_RANK[t.layer] < spec.LAYER_RANK[cur.layer] then
        m.lowest_failed = { layer = t.layer, id = t.id, status = t.status }
      end
    end
  end
  return m
end

return M
