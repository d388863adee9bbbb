-- strata.runner.plan: which tests run and in what order (the selection by
-- --only, what they need, the ladder), and the plan record the journal
-- keeps.
local spec = require "strata.spec"
local model = require "strata.model"
local glob = require "strata.glob"

local M = {}

-- Is this test selected by one of the patterns (globs of IDs or tags,
-- or a layer)?
local function selected(t, patterns)
  if not patterns or #patterns == 0 then return true end
  for _, p in ipairs(patterns) do
    if glob.match(p, t.id) then return true end
    for _, tag in ipairs(t.tags) do
      if glob.match(p, tag) or tag == p then return true end
    end
    if t.layer == p then return true end
  end
  return false
end
-- Order the selected tests (plus what they need): needs first, then by
-- ladder rung, then by load order.  Returns the list, or raises on a cycle.
function M.order(tests, by_id, patterns)
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

-- The plan as the journal keeps it: what each test would run, so that a
-- report of a killed run can list what never ran (NOT RUN).
function M.record(order, expect, spec_root)
  local tests = {}
  for i, t in ipairs(order) do
    tests[i] = model.test_info(t, #spec.cells(t))
  end
  return { type = "plan", tests = tests, expect = expect,
           spec_root = spec_root }
end

return M
