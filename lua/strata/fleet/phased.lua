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
-- journaled them, in order): { [id] = { status, reason, value, metric,
-- dir } }.
function M.outcome(recs, criteria)
  -- the last try of a cell stands for it (--until-pass, --repeat)
  local last = {}
  for i, r in ipairs(recs) do last[r.id .. "|" .. tostring(r.cell_index)] = i end
  local by, ids = {}, {}
  for i, r in ipairs(recs) do
    if r.type == "result" and last[r.id .. "|" .. tostring(r.cell_index)] == i then
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

-- The worst of a node pair's per-rail outcomes per test (a FAIL or
-- ERROR rail, else the lowest headline): a node is admitted only when
-- every rail to it is good.
local RANK = { ERROR = 4, FAIL = 3, WARN = 2 }
function M.worst(outs)
  local w = {}
  for _, o in ipairs(outs) do
    for id, x in pairs(o) do
      local y = w[id]
      local rx, ry = RANK[x.status] or 0, y and (RANK[y.status] or 0)
      if not y or rx > ry or (rx == ry and type(x.value) == "number"
          and type(y.value) == "number"
          and (x.dir == "max" and x.value > y.value or x.dir ~= "max" and x.value < y.value)) then
        w[id] = x
      end
    end
  end
  return w
end

-- A node pair's outcome for the gate from its rails' ({ same = {outcome},
-- cross = {outcome} }): the worst same rail.  Cross-rail pairs are
-- measured, reported and attributed but gate nothing: on a rail-only
-- fabric every one fails, and would refuse every node.  A pair measured
-- on cross rails alone (a confirmation of a cross-rail link): its own.
function M.rail_outcome(l)
  return M.worst(#l.same > 0 and l.same or l.cross)
end

local function label(p) return p[1] .. "->" .. p[2] end

-- The gate's reference per test: the best headline among the pairs
-- measured so far that did not FAIL or ERROR (the first pair may itself run
-- through the bad node: on a ring of 3, two pairs of three do).
local function best_of(outs)
  local best = {}
  for _, out in ipairs(outs) do
    for id, o in pairs(out or {}) do
      if not BAD[o.status] and type(o.value) == "number" then
        local b = best[id]
        if not b or (o.dir == "max" and o.value < b.value)
           or (o.dir ~= "max" and o.value > b.value) then
          best[id] = o
        end
      end
    end
  end
  return best
end

-- One phased run's state: S.rec (the journal record), S.decided (node ->
-- decision), S.admitted (in order), S.met ("a|b" -> outcome, both ways),
-- S.whys (node -> the gate's words on its pairs below it).
local function note(S, step, p, out, g)
  S.met[p[1] .. "|" .. p[2]], S.met[p[2] .. "|" .. p[1]] = out or {}, out or {}
  S.rec.pairs = S.rec.pairs + 1
  S.rec.steps[#S.rec.steps + 1] = { step = step, pair = label(p), a = p[1], b = p[2],
    verdict = g and "below the gate" or "passed", why = g and g.why }
  if g then
    table.insert(S.whys[p[1]], label(p) .. ": " .. g.why)
    table.insert(S.whys[p[2]], label(p) .. ": " .. g.why)
  end
end

local function admit(S, node, step, via, why)
  if S.decided[node] then return end
  S.decided[node] = { node = node, admitted = true, step = step, via = via, why = why }
  S.admitted[#S.admitted + 1] = node
end

-- 1. the reference pair: the first along the order whose rungs do not
-- FAIL or ERROR (RDMA works between two nodes before n more pairs run).
local function reference(S)
  local names = S.names
  for i = 1, math.min(S.ref_tries, #names - 1) do
    local p = { names[i], names[i + 1] }
    local out = S.measure({ p })[label(p)]
    local g = M.gate(out, nil, S.crit)
    if not g then
      S.met[p[1] .. "|" .. p[2]], S.met[p[2] .. "|" .. p[1]] = out, out
      return p, out
    end
    note(S, "reference", p, out, g)
  end
end

-- 2. the ring, less the pairs measured already; the gate's reference is
-- the best pair of the reference and the ring; a pair that passes admits
-- both its nodes (a bad node fails every pair through it).  Returns the
-- gate's reference.
local function ring(S, ref_pair, ref_out)
  local judged, todo = { { ref_pair, ref_out, "reference" } }, {}
  for _, p in ipairs(require("strata.fleet.plan").pairs(S.names, "ring")) do
    if not S.met[p[1] .. "|" .. p[2]] then todo[#todo + 1] = p end
  end
  local ro = #todo > 0 and S.measure(todo) or {}
  local outs = { ref_out }
  for _, p in ipairs(todo) do
    outs[#outs + 1] = ro[label(p)]
    judged[#judged + 1] = { p, ro[label(p)], "ring" }
  end
  local ref = best_of(outs)
  S.rec.reference = { pair = label(ref_pair), best = {} }
  for id, o in pairs(ref) do S.rec.reference.best[id] = { value = o.value, metric = o.metric } end
  for _, j in ipairs(judged) do
    local g = M.gate(j[2], ref, S.crit)
    note(S, j[3], j[1], j[2], g)
    if not g then
      for k = 1, 2 do
        admit(S, j[1][k], j[3], label(j[1]), ("passed the gate with %s"):format(j[1][3 - k]))
      end
    end
  end
  return ref
end

-- 3. the rest one at a time, each with an admitted node it has not met
-- (rounds of disjoint pairs), until one passes or `partners` admitted
-- nodes (ring pairs included) had it below the gate.
local function admit_rest(S, ref)
  local pending = {}
  for _, x in ipairs(S.names) do if not S.decided[x] then pending[#pending + 1] = x end end
  local function failed_with_admitted(x)
    local k = 0
    for _, y in ipairs(S.admitted) do if S.met[x .. "|" .. y] then k = k + 1 end end
    return k
  end
  while #pending > 0 do
    local round, busy, left = {}, {}, {}
    for _, x in ipairs(pending) do
      if failed_with_admitted(x) < S.partners then
        for _, y in ipairs(S.admitted) do
          if not busy[y] and not S.met[y .. "|" .. x] then
            busy[y] = true
            round[#round + 1] = { y, x }
            break
          end
        end
      end
    end
    if #round == 0 then break end
    local o = S.measure(round)
    for _, p in ipairs(round) do
      local g = M.gate(o[label(p)], ref, S.crit)
      note(S, "admit", p, o[label(p)], g)
      if not g then admit(S, p[2], "admit", label(p), "passed the gate with admitted " .. p[1]) end
    end
    for _, x in ipairs(pending) do if not S.decided[x] then left[#left + 1] = x end end
    pending = left
  end
  for _, x in ipairs(pending) do
    local k = failed_with_admitted(x)
    S.decided[x] = { node = x, admitted = false, step = "admit",
      why = ("below the gate with %d admitted node%s: %s"):format(k, k == 1 and "" or "s",
        table.concat(S.whys[x], "; ")) }
  end
end

-- Plan and admit.  names: the candidate nodes in allocation order;
-- measure(pairs): runs those pairs (disjoint rounds are the caller's) and
-- returns label -> outcome; crit: the FLEET criteria; opts: reference_tries,
-- partners.  Returns the record the fleet journal keeps (type "phased").
function M.run(names, measure, crit, opts)
  opts = opts or {}
  local n = #names
  local S = { names = names, measure = measure, crit = crit,
              ref_tries = opts.reference_tries or M.DEFAULTS.reference_tries,
              partners = opts.partners or M.DEFAULTS.partners,
              decided = {}, admitted = {}, met = {}, whys = {},
              rec = { type = "phased", nodes = {}, steps = {}, pairs = 0,
                      all_pairs = n * (n - 1) // 2,
                      gate = "no FLEET.admit_ratio criterion: only FAIL/ERROR pairs refuse" } }
  for _, c in ipairs(crit) do
    if c.metric == "admit_ratio" then
      S.rec.gate = ("FAIL/ERROR, or a headline below %s of the best pair of the reference "
        .. "and the ring (%s)"):format(c.text, c.source or "")
    end
  end
  if n < 2 then return S.rec end
  for _, x in ipairs(names) do S.whys[x] = {} end
  local ref_pair, ref_out = reference(S)
  if ref_pair then
    admit_rest(S, ring(S, ref_pair, ref_out))
  else
    for _, x in ipairs(names) do
      S.decided[x] = { node = x, admitted = false, step = "reference",
        why = ("no reference pair passed in %d tries: %s"):format(
          math.min(S.ref_tries, n - 1), table.concat(S.whys[x], "; ")) }
    end
  end
  local rec = S.rec
  rec.admitted, rec.refused = 0, 0
  for _, x in ipairs(names) do
    local d = S.decided[x]
    rec.nodes[#rec.nodes + 1] = d
    if d.admitted then rec.admitted = rec.admitted + 1 else rec.refused = rec.refused + 1 end
  end
  return rec
end

return M
