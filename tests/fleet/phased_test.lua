-- phased_test.lua FIXTURES: the phased pair mode (strata.fleet.phased)
-- without Slurm: the reference pair, the ring, nodes admitted one at a
-- time behind FLEET.admit_ratio, refused nodes and why, the pair count
-- against all pairs; the gate on the outcome of real pair records
-- (fixtures/fleet/diag-g2-held-60ms-3guests.jsonl); the phased record in
-- the fleet model, workbook and JSON.
local phased = require "strata.fleet.phased"
local journal = require "strata.journal"
local fmodel = require "strata.fleet.model"
local cjson = require "cjson"

local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()
local dir = assert(arg[1], "usage: phased_test.lua FIXTURES OUTDIR")
local out = assert(arg[2], "usage: phased_test.lua FIXTURES OUTDIR")

-- FLEET.admit_ratio as specs/thresholds.yaml ships it
local crit = fmodel.fleet_criteria({ { id = "FLEET", metric = "admit_ratio", op = "min",
  expr = 0.5, text = "admit_ratio >= 0.5", source = "specs/thresholds.yaml" } })

-- A fleet of n nodes: R2 1.0 Gbit/s on every pair, 0.2 through a bad
-- node, 0.1 on a bad link, FAIL through a dead one.  Counts the pairs.
local function fleet(n, bad_node, bad_link, dead, bad2)
  local names, measured = {}, {}
  for i = 1, n do names[i] = ("s%d"):format(i) end
  local function measure(list)
    local outs = {}
    for _, p in ipairs(list) do
      local v, st = 1.0, "PASS"
      if p[1] == bad_node or p[2] == bad_node or p[1] == bad2 or p[2] == bad2 then v = 0.2 end
      if bad_link and ((p[1] == bad_link[1] and p[2] == bad_link[2])
                       or (p[1] == bad_link[2] and p[2] == bad_link[1])) then v = 0.1 end
      if p[1] == dead or p[2] == dead then v, st = nil, "ERROR" end
      outs[p[1] .. "->" .. p[2]] = { R2 = { status = st, value = v, metric = "bw_gbps",
                                            dir = "min", reason = st == "ERROR" and "no far end" or nil } }
      measured[#measured + 1] = p
    end
    return outs
  end
  return names, measure, measured
end
local function by(rec)
  local m = {}
  for _, d in ipairs(rec.nodes) do m[d.node] = d end
  return m
end

-- 1. a clean fleet of 8: n pairs, everyone admitted
local names, measure, measured = fleet(8)
local rec = phased.run(names, measure, crit)
check(rec.pairs == 8 and #measured == 8 and rec.admitted == 8 and rec.refused == 0
      and rec.all_pairs == 28, ("clean 8: %d pairs (all pairs 28), %d admitted"):format(
      rec.pairs, rec.admitted))
check(rec.reference and rec.reference.pair == "s1->s2" and rec.steps[1].step == "reference",
      "the reference pair s1->s2 measured first")

-- 2. a bad node s5: its two ring pairs fail the gate, both with admitted
-- nodes (s4, s6): refused without another pair; everyone else admitted
names, measure, measured = fleet(8, "s5")
rec = phased.run(names, measure, crit)
local d = by(rec)
check(rec.refused == 1 and d.s5 and not d.s5.admitted and rec.pairs == 8,
      ("bad node s5 refused, %d pairs: %s"):format(rec.pairs, tostring(d.s5 and d.s5.why)))
check(d.s5.why:find("with 2 admitted nodes", 1, true)
      and d.s5.why:find("(x0.2, wanted admit_ratio >= 0.5)", 1, true),
      "the reason names both pairs, the ratio and the criterion")
check(d.s6.admitted and d.s4.admitted, "s4, s6 admitted")

-- 2b. two bad neighbours s4, s5: each failed with one admitted node on
-- the ring, then once more with another admitted node (one at a time)
names, measure = fleet(8, "s4", nil, nil, "s5")
rec = phased.run(names, measure, crit)
d = by(rec)
local adm = {}
for _, s in ipairs(rec.steps) do if s.step == "admit" then adm[#adm + 1] = s.pair end end
check(rec.refused == 2 and not d.s4.admitted and not d.s5.admitted and rec.pairs == 10
      and table.concat(adm, ",") == "s1->s4,s2->s5",
      ("bad s4, s5: both refused after one admission pair each (%s), %d pairs")
      :format(table.concat(adm, ","), rec.pairs))

-- 2c. a ring of 3 whose reference pair runs through the bad node s2:
-- the gate's reference is the best pair (s3->s1), s2 refused
names, measure = fleet(3, "s2")
rec = phased.run(names, measure, crit)
d = by(rec)
check(rec.refused == 1 and not d.s2.admitted and d.s1.admitted and d.s3.admitted
      and rec.pairs == 3 and rec.reference.best.R2.value == 1.0,
      "ring of 3, s2 bad: s2 refused against the best pair: " .. d.s2.why)

-- 3. a bad link s3-s4 (the ring pair): s4 admitted through s5 (the ring
-- from the other side), nobody refused; the link's step says below
names, measure = fleet(8, nil, { "s3", "s4" })
rec = phased.run(names, measure, crit)
d = by(rec)
local below = {}
for _, s in ipairs(rec.steps) do if s.why then below[#below + 1] = s.pair end end
check(rec.refused == 0 and d.s4.admitted and table.concat(below, ",") == "s3->s4",
      "bad link s3-s4: all admitted, the one step below the gate s3->s4")

-- 4. a dead first node: the reference moves on (s2->s3), s1 refused
names, measure = fleet(6, nil, nil, "s1")
rec = phased.run(names, measure, crit)
d = by(rec)
check(rec.reference and rec.reference.pair == "s2->s3" and not d.s1.admitted
      and d.s1.why:find("ERROR", 1, true), "dead s1: reference s2->s3, s1 refused: " .. d.s1.why)

-- 5. the pair count at scale (the docs/fleet.md table)
for _, n in ipairs { 64, 256 } do
  names, measure = fleet(n, "s7")
  rec = phased.run(names, measure, crit)
  check(rec.pairs == n and rec.refused == 1 and rec.all_pairs == n * (n - 1) // 2,
        ("%d nodes, one bad: %d pairs phased, %d all pairs"):format(n, rec.pairs, rec.all_pairs))
end

-- 5b. a mode that is none of ring, all, phased: a usage error naming it
local ok, err = pcall(require("strata.fleet.plan").check_mode, "pairwise", "--pairs")
check(not ok and require("strata.args").is_usage_error(err)
      and err.msg == "--pairs: 'pairwise' is not ring, all or phased",
      "--pairs pairwise: a usage error: " .. tostring(type(err) == "table" and err.msg or err))

-- 6. the gate on real pair records: R3 g1->g2 held up 60 ms against the
-- g3->g1 pair as reference
local recs = journal.read(dir .. "/diag-g2-held-60ms-3guests.jsonl")
local criteria
local function pair_recs(a, b)
  local xs = {}
  for _, r in ipairs(recs) do
    if r.type == "thresholds" then criteria = r.criteria end
    if r.type == "result" and r.phase == "pair" and r.pair and r.pair[1] == a and r.pair[2] == b then
      xs[#xs + 1] = r
    end
  end
  return xs
end
local slow = phased.outcome(pair_recs("g1", "g2"), criteria)
local ref = phased.outcome(pair_recs("g3", "g1"), criteria)
check(slow.R3 and slow.R3.dir == "max" and slow.R3.value > 50000 and ref.R3.value < 10000,
      ("outcome of real records: R3 g1->g2 %.0f us (max is better: latency) vs %.0f"):format(
      slow.R3.value, ref.R3.value))
local g = phased.gate(slow, ref, crit)
check(g and g.why:find("R3 median_us", 1, true) and g.ratio < 0.1,
      "the gate refuses g1->g2 against g3->g1: " .. tostring(g and g.why))
check(phased.gate(ref, ref, crit) == nil, "the reference passes its own gate")

-- 7. the phased record in the fleet model, the workbook and JSON
table.insert(recs, #recs, { type = "phased", reference = { pair = "g3->g1" }, pairs = 3,
  all_pairs = 3, admitted = 2, refused = 1, gate = "test",
  nodes = { { node = "g1", admitted = true, step = "reference", via = "g3->g1", why = "the reference pair" },
            { node = "g2", admitted = false, step = "admit", why = g.why },
            { node = "g3", admitted = true, step = "reference", via = "g3->g1", why = "the reference pair" } },
  steps = { { step = "ring", pair = "g1->g2", a = "g1", b = "g2", verdict = "below the gate", why = g.why } } })
-- rails: the gate reads the worst same rail; cross-rail pairs (all ERROR
-- on a rail-only fabric) gate nothing, unless a pair ran on them alone
local good = { R2 = { status = "PASS", value = 90, dir = "min" } }
local slow = { R2 = { status = "PASS", value = 40, dir = "min" } }
local dead = { R2 = { status = "ERROR", reason = "transport retry counter exceeded" } }
check(phased.rail_outcome({ same = { good, slow }, cross = { dead, dead } }).R2.value == 40,
      "same rails: the worst (lowest) of them; cross-rail ERRORs left out of the gate")
check(phased.rail_outcome({ same = { good, dead }, cross = {} }).R2.status == "ERROR",
      "a same rail that ERRORs fails the pair")
check(phased.rail_outcome({ same = {}, cross = { dead } }).R2.status == "ERROR",
      "a cross-rail pair measured alone (a confirmation) by its own outcome")

local fm = fmodel.build(recs)
check(fm.phased and fm.phased.refused == 1, "the model keeps the phased record")
local xlsx = out .. "/phased_test.xlsx"
local jpath = out .. "/phased_test.json"
require("strata.fleet.report").write(fm, { xlsx = xlsx, json = jpath })
local f = assert(io.open(jpath))
local js = cjson.decode(f:read("a"))
f:close()
local ph = js.attribution and js.attribution.phased
check(ph and ph.refused == 1 and ph.nodes[2].node == "g2" and not ph.nodes[2].admitted,
      "JSON attribution.phased names g2 refused")
local txt = require("strata.fleet.report").summary_text(fm)
check(txt:find("phased pairs: 3 (all pairs: 3); 2 admitted, 1 refused", 1, true)
      and txt:find("refused g2: ", 1, true),
      "summary text: " .. (txt:match("phased[^\n]*") or "none"))
os.exit(check.n == 0 and 0 or 1)
