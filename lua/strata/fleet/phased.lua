-- strata.fleet.phased: the pairs of a large allocation, in phases
-- (site.fleet.pairs.mode: phased, or --pairs phased), after AMD CVS's
-- pairwise RCCL test (cvs/tests/rccl/rccl_pairwise.py: a reference, then
-- pairs, then nodes admitted one at a time behind a minimum-bandwidth
-- gate), for point-to-point pairs:
--   reference  the first pair (c1, c2) whose pair rungs do not FAIL or
--              ERROR (at most `reference_tries` pairs along the order);
--              its headlines are the reference of the gate
--   ring       c1->c2 ... cn->c1 (the reference pair is its first), in
--              rounds of disjoint pairs; a node is admitted when a ring
--              pair joins it to an admitted node and passes the gate
--   admit      each node left over, one at a time, paired with an admitted
--              node it has not met; admitted at the first pair that passes
--              the gate, refused after `partners` admitted nodes: then the
--              node, not one link, is the trouble
-- The gate: no pair rung FAILs or ERRORs, and each headline is at least
-- FLEET.admit_ratio x the reference pair's (flipped for a max metric such
-- as latency), judged by strata.thresholds as any criterion.  A clean
-- fleet costs n pairs (all pairs: n(n-1)/2); each node left over adds at
-- most `partners`, each failed reference try one.
local model = require "strata.fleet.model"
local verdict = require "strata.verdict"

local M = {}

M.DEFAULTS = { reference_tries = 3, partners = 2 }

local BAD = { FAIL = true, ERROR = true }

-- One pair's outcome per pair test from its result records (as the node
-- journaled them): { [id] = { status, reason, value, metric, dir } }.
function M.outcome(recs, criteria)
  local by, ids = {}, {}
  for _, r in ipairs(recs) do
    if r.type == "result" and not r.superseded then
      if not by[r.id] then
        by[r.id] = {}
        ids[#ids + 1] = r.id
      end
      r.status, r.reason = verdict.cell(r)
      table.insert(by[r.id], r)
    end
  end
  local crit_by = verdict.by_test(criteria or {})
  local out = {}
  for _, id in ipairs(ids) do
    local cells = by[id]
    local t = verdict.test(require("strata.model").test_info(cells[1]), cells,
                           crit_by[id] or {}, true)
    out[id] = { status = t.status, reason = t.reason, value = t.headline_value,
                metric = t.headline_metric,
                dir = model.direction(criteria, id, t.headline_metric) }
  end
  return out
end

-- The gate on one pair's outcome against the reference's: nil when it
-- passes, else { why = text, ratio = worst ratio }.  SKIP rows (no RDMA
-- device) are not judged; with no reference (the reference pair itself)
-- only FAIL/ERROR count.
function M.gate(out, ref, crit)
  local why, worst = {}, nil
  local ids = {}
  for id in pairs(out or {}) do ids[#ids + 1] = id end
  table.sort(ids)
  for _, id in ipairs(ids) do
    local o = out[id]
    if BAD[o.status] then
      why[#why + 1] = ("%s %s%s"):format(id, o.status,
        o.reason and (": " .. tostring(o.reason):gsub("\n.*", ""):sub(1, 100)) or "")
    elseif ref and ref[id] and type(o.value) == "number" and type(ref[id].value) == "number"
           and ref[id].value ~= 0 then
      local rel = o.dir == "max" and (o.value == 0 and math.huge or ref[id].value / o.value)
                  or o.value / ref[id].value
      local ck = model.judge_ratio(crit, "admit_ratio", rel)
      if ck then
        why[#why + 1] = ("%s %s %s vs the reference's %s (x%.2g, wanted %s)"):format(id,
          o.metric or "", require("strata.report.common").fmt(o.value),
          require("strata.report.common").fmt(ref[id].value), rel, ck.text or ck.why)
        worst = worst and math.min(worst, rel) or rel
      end
    end
  end
  if #why == 0 then return nil end
  return { why = table.concat(why, "; "), ratio = worst }
end

local function label(p) return p[1] .. "->" .. p[2] end

-- Plan and admit.  names: the candidate nodes in allocation order;
-- measure(pairs): runs those pairs (disjoint rounds are the caller's) and
-- returns label -> outcome; crit: the FLEET criteria; opts: reference_tries,
-- partners.  Returns the record the fleet journal keeps (type "phased").
function M.run(names, measure, crit, opts)
  opts = opts or {}
  local ref_tries = opts.reference_tries or M.DEFAULTS.reference_tries
  local partners = opts.partners or M.DEFAULTS.partners
  local rec = { type = "phased", nodes = {}, steps = {}, pairs = 0,
                gate = "no FLEET.admit_ratio criterion: only FAIL/ERROR pairs refuse" }
  for _, c in ipairs(crit) do
    if c.metric == "admit_ratio" then
      rec.gate = ("FAIL/ERROR, or a headline below %s of the reference pair's (%s)")
        :format(c.text, c.source or "")
    end
  end
  local n = #names
  if n < 2 then return rec end
  local decided, admitted, order = {}, {}, {}
  local met = {}   -- "a|b" -> true: pairs measured
  local function note(step, p, out, verdict_, why)
    met[p[1] .. "|" .. p[2]], met[p[2] .. "|" .. p[1]] = true, true
    rec.pairs = rec.pairs + 1
    rec.steps[#rec.steps + 1] = { step = step, pair = label(p), a = p[1], b = p[2],
                                  verdict = verdict_, why = why }
    return out
  end
  local function admit(node, step, via, why)
    if decided[node] then return end
    decided[node] = { node = node, admitted = true, step = step, via = via, why = why }
    admitted[#admitted + 1] = node
    order[#order + 1] = node
  end

  -- 1. the reference pair: the first along the order that does not fail
  local ref, ref_pair
  for i = 1, math.min(ref_tries, n - 1) do
    local p = { names[i], names[i + 1] }
    local out = measure({ p })[label(p)]
    local g = M.gate(out, nil, crit)
    note("reference", p, out, g and "refused" or "reference", g and g.why)
    if not g then
      ref, ref_pair = out, p
      break
    end
  end
  if not ref then
    for _, x in ipairs(names) do
      decided[x] = { node = x, admitted = false, step = "reference",
                     why = ("no reference pair passed in %d tries"):format(math.min(ref_tries, n - 1)) }
    end
    rec.reference = nil
  else
    rec.reference = { pair = label(ref_pair), outcome = ref }
    admit(ref_pair[1], "reference", label(ref_pair), "the reference pair")
    admit(ref_pair[2], "reference", label(ref_pair), "the reference pair")

    -- 2. the ring, less the pairs measured already
    local ring = {}
    for _, p in ipairs(require("strata.fleet.plan").pairs(names, "ring")) do
      if not met[p[1] .. "|" .. p[2]] then ring[#ring + 1] = p end
    end
    local outs = #ring > 0 and measure(ring) or {}
    local good = {}
    for _, p in ipairs(ring) do
      local g = M.gate(outs[label(p)], ref, crit)
      note("ring", p, outs[label(p)], g and "below the gate" or "passed", g and g.why)
      if not g then good[#good + 1] = p end
    end
    -- admitted through passing ring pairs from the reference outwards
    local grew = true
    while grew do
      grew = false
      for _, p in ipairs(good) do
        for k = 1, 2 do
          local x, y = p[k], p[3 - k]
          if decided[x] and decided[x].admitted and not decided[y] then
            admit(y, "ring", label(p), "passed the gate with admitted " .. x)
            grew = true
          end
        end
      end
    end

    -- 3. the rest one at a time, each with admitted nodes it has not met
    local pending, tried, whys = {}, {}, {}
    for _, x in ipairs(names) do
      if not decided[x] then pending[#pending + 1] = x; tried[x], whys[x] = 0, {} end
    end
    for _, s in ipairs(rec.steps) do
      if s.why and tried[s.a] then table.insert(whys[s.a], s.pair .. ": " .. s.why) end
      if s.why and tried[s.b] then table.insert(whys[s.b], s.pair .. ": " .. s.why) end
    end
    while #pending > 0 do
      local round, busy = {}, {}
      for _, x in ipairs(pending) do
        for _, y in ipairs(admitted) do
          if not busy[y] and not met[y .. "|" .. x] then
            busy[y] = true
            round[#round + 1] = { y, x }
            break
          end
        end
      end
      if #round == 0 then break end
      local o = measure(round)
      for _, p in ipairs(round) do
        local x = p[2]
        tried[x] = tried[x] + 1
        local g = M.gate(o[label(p)], ref, crit)
        note("admit", p, o[label(p)], g and "refused" or "admitted", g and g.why)
        if g then
          table.insert(whys[x], label(p) .. ": " .. g.why)
        else
          admit(x, "admit", label(p), ("passed the gate with admitted %s (%d before it failed)")
            :format(p[1], #whys[x]))
        end
      end
      local left = {}
      for _, x in ipairs(pending) do
        if not decided[x] then
          if tried[x] >= partners then
            decided[x] = { node = x, admitted = false, step = "admit",
              why = ("below the gate with %d admitted nodes: %s"):format(tried[x],
                table.concat(whys[x], "; ")) }
          else
            left[#left + 1] = x
          end
        end
      end
      pending = left
    end
    for _, x in ipairs(pending) do
      decided[x] = { node = x, admitted = false, step = "admit",
        why = "no admitted node left to pair it with: " .. table.concat(whys[x], "; ") }
    end
  end
  for _, x in ipairs(names) do rec.nodes[#rec.nodes + 1] = decided[x] end
  rec.admitted, rec.refused = 0, 0
  for _, d in ipairs(rec.nodes) do
    if d.admitted then rec.admitted = rec.admitted + 1 else rec.refused = rec.refused + 1 end
  end
  rec.all_pairs = n * (n - 1) // 2
  return rec
end

return M
