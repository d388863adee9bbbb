-- rails_test.lua FIXTURES OUTDIR: per-device pairs on nodes with several
-- RDMA devices (docs/fleet.md "Rails") without Slurm: the plan
-- (strata.fleet.plan.rails, rail_pairs, rounds), then the fleet model,
-- attribution and workbook on journals shaped as a real fleet run writes
-- them: the pair records of fixtures/fleet/diag-*-3guests.jsonl (real
-- runs, one device rxe0 each) given devices in memory, as strata.fleet.run
-- tags them (pair_devices, rail).  Rail rxe0 is the clean run's pairs,
-- rail rxe1 the run with g2's NIC held up 60 ms: g2:rxe1 is the bad NIC.
-- Section 3 reads a real two-device run of the bed (rails-cross-3guests).
local journal = require "strata.journal"
local fmodel = require "strata.fleet.model"
local plan = require "strata.fleet.plan"
local report = require "strata.fleet.report"
local cjson = require "cjson"

local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()
local dir = assert(arg[1], "usage: rails_test.lua FIXTURES OUTDIR")
local out = assert(arg[2], "usage: rails_test.lua FIXTURES OUTDIR")

-- 1. the plan
check(plan.rails(nil) == nil and plan.rails({ device = "mlx5_0" }) == nil
      and plan.rails({ devices = { { device = "mlx5_0", port = 1 } } }) == nil,
      "one device (or none listed): no rails, pairs node to node as before")
local devs = plan.rails({ devices = { { device = "mlx5_0", port = 1 }, { device = "mlx5_1", port = 1 },
                                      { device = "mlx5_1", port = 2 } } })
check(devs and table.concat(devs, ",") == "mlx5_0,mlx5_1",
      "site.rdma.devices mlx5_0, mlx5_1 (two ports of mlx5_1): rails mlx5_0, mlx5_1")
local ring = plan.pairs({ "g1", "g2", "g3" }, "ring")
check(plan.rail_pairs(ring, nil) == ring, "no rails: the node pairs unchanged")
local same = plan.rail_pairs(ring, devs)
local txt = {}
for _, p in ipairs(same) do txt[#txt + 1] = p[1] .. ":" .. p.dev[1] .. ">" .. p[2] .. ":" .. p.dev[2] .. "/" .. p.rail end
check(#same == 6 and txt[1] == "g1:mlx5_0>g2:mlx5_0/same" and txt[2] == "g1:mlx5_1>g2:mlx5_1/same",
      "ring of 3 on 2 rails: 6 same-rail pairs: " .. table.concat(txt, " "))
local cross = plan.rail_pairs(ring, devs, true)
local n_cross = 0
for _, p in ipairs(cross) do if p.rail == "cross" then n_cross = n_cross + 1 end end
check(#cross == 12 and n_cross == 6 and cross[2].dev[1] == "mlx5_0" and cross[2].dev[2] == "mlx5_1",
      "cross_rail: 12 pairs, 6 of them cross rail (mlx5_0 -> mlx5_1 ...)")
local confirm = { { "g2", "g3", dev = { "mlx5_1", "mlx5_1" }, rail = "same" } }
check(#plan.rail_pairs(confirm, devs, true) == 1, "a pair naming its devices (a confirmation) stays one")
local rounds = plan.rounds(same)
local ok = #rounds == 6
for _, r in ipairs(rounds) do ok = ok and #r == 1 end
check(ok, "rounds: a node in one measurement at a time (3 nodes: one pair a round)")

-- 2. the journals
local function pair_recs(file, da, db, rail)
  local rs = {}
  for _, r in ipairs(journal.read(dir .. "/" .. file)) do
    if r.phase == "pair" then
      r.pair_devices, r.rail = { da, db }, rail
      rs[#rs + 1] = r
    end
  end
  return rs
end
local function fleet_journal(rails)
  local recs = {}
  for _, r in ipairs(journal.read(dir .. "/diag-clean-3guests.jsonl")) do
    if r.phase ~= "pair" and r.type ~= "end" then recs[#recs + 1] = r end
  end
  for _, x in ipairs(rails) do
    for _, r in ipairs(pair_recs(x[1], x[2], x[3], x[4])) do recs[#recs + 1] = r end
  end
  for _, r in ipairs(journal.read(dir .. "/diag-clean-3guests.jsonl")) do
    if r.type == "end" then recs[#recs + 1] = r end
  end
  return recs
end
local CLEAN, HELD = "diag-clean-3guests.jsonl", "diag-g2-held-60ms-3guests.jsonl"
local function suspects(fm)
  local s = {}
  for _, x in ipairs(fm.attribution.suspects) do s[#s + 1] = x.kind .. " " .. x.name end
  return table.concat(s, "; ")
end

-- g2's second NIC held: the node is fine on rxe0, so the NIC is named
local fm = fmodel.build(fleet_journal { { CLEAN, "rxe0", "rxe0", "same" },
                                        { HELD, "rxe1", "rxe1", "same" } })
check(fm.pairs.cells["R3|g1:rxe1|g2:rxe1"] and fm.pairs.cells["R3|g1:rxe0|g2:rxe0"]
      and not fm.pairs.cells["R3|g1|g2"], "pair cells keyed with the device: R3|g1:rxe1|g2:rxe1")
check(table.concat(fm.pairs.names, ",") == "g1:rxe0,g1:rxe1,g2:rxe0,g2:rxe1,g3:rxe0,g3:rxe1",
      "matrix rows and columns are the ends: " .. table.concat(fm.pairs.names, ","))
check(suspects(fm) == "nic g2:rxe1", "g2:rxe1 held: the NIC named, not the node: " .. suspects(fm))
local s = fm.attribution.suspects[1]
local ev = {}
for _, e in ipairs(s and s.evidence or {}) do ev[#ev + 1] = e.test .. " " .. e.pair end
table.sort(ev)
check(table.concat(ev, ",") == "R2 g2:rxe1->g3:rxe1,R3 g1:rxe1->g2:rxe1,R3 g2:rxe1->g3:rxe1",
      "its evidence: R3 both pairs through g2:rxe1, R2 g2:rxe1->g3:rxe1: " .. table.concat(ev, ","))

-- g2 held on every rail: the node, as with one device
fm = fmodel.build(fleet_journal { { HELD, "rxe0", "rxe0", "same" },
                                  { HELD, "rxe1", "rxe1", "same" } })
check(suspects(fm) == "node g2", "g2 bad on both rails: node g2: " .. suspects(fm))

-- a single bad rail pair: the link named with its ends
fm = fmodel.build(fleet_journal { { CLEAN, "rxe0", "rxe0", "same" },
                                  { CLEAN, "rxe1", "rxe1", "same" } })
for k, e in pairs(fm.pairs.cells) do
  if k == "R2|g2:rxe1|g3:rxe1" then e.status, e.reason = "FAIL", "bw_gbps below the floor" end
end
fm.attribution = require("strata.fleet.attrib").build(fm)
local names = {}
for _, x in ipairs(fm.attribution.suspects) do names[#names + 1] = x.name end
check(table.concat(names, ";"):find("g2:rxe1 <-> g3:rxe1", 1, true),
      "one bad rail pair: link g2:rxe1 <-> g3:rxe1 named (beside node g1, the clean run's "
      .. "TCG noise at 0.25, fixtures/fleet/README.md): " .. table.concat(names, ";"))

-- same and cross rail apart
fm = fmodel.build(fleet_journal { { CLEAN, "rxe0", "rxe0", "same" },
                                  { HELD, "rxe0", "rxe1", "cross" } })
local by = {}
for _, x in ipairs(fm.pairs.by_rail) do by[x.id .. " " .. x.rail] = x end
check(by["R3 same"] and by["R3 cross"] and by["R3 same"].pairs == 3 and by["R3 cross"].pairs == 3
      and by["R3 cross"].worst > 60000 and by["R3 same"].worst < 5000,
      "R3 same rail and cross rail apart: 3 pairs each, cross worst "
      .. tostring(by["R3 cross"] and by["R3 cross"].worst))
report.write(fm, { xlsx = out .. "/rails.xlsx", json = out .. "/rails.json" })
local f = assert(io.open(out .. "/rails.json"))
local j = cjson.decode(f:read("a"))
f:close()
local rails = {}
for _, x in ipairs(j.rails or {}) do rails[#rails + 1] = x.id .. " " .. x.rail end
local railed = 0
for _, p in ipairs(j.pairs) do if p.rail and p.from:find(":", 1, true) then railed = railed + 1 end end
check(table.concat(rails, ",") == "R2 cross,R2 same,R3 cross,R3 same" and railed == #j.pairs,
      "JSON: rails R2/R3 same and cross, every pair with its rail and ends")
local py = io.popen(("/usr/bin/python3 -c \"import openpyxl; ws = openpyxl.load_workbook('%s')['Pairs']; "
  .. "rows = list(ws.iter_rows(values_only=True)); "
  .. "print([r[:4] for r in rows if r[0] in ('R2', 'R3') and r[1] in ('same', 'cross')]); "
  .. "print(sorted(set(r[7] for r in rows if len(r) > 7 and r[7] in ('same', 'cross'))))\"")
  :format(out .. "/rails.xlsx"))
local got = py:read("a")
py:close()
check(got:find("('R3', 'cross', 3, 0)", 1, true) and got:find("('R3', 'same', 3, 0)", 1, true)
      and got:find("['cross', 'same']", 1, true),
      "Pairs sheet: the Rails table (same and cross apart), each pair's rail: " .. got)

-- R4 as a pair test (site.fleet.pairs.tests) on rails: each record names
-- the GPU its near end used (metrics gpu_bus_id, lib/verbsite.lua gpu);
-- the clean run's R2 records stand in for R4's, given the GPU of each
-- rail on fixtures/host/two-rail (irdma0 -> 0000:03:00.0, irdma1 ->
-- 0000:08:00.0, tests/site/affinity_test.lua)
local GPU = { rxe0 = "0000:03:00.0", rxe1 = "0000:08:00.0" }
local recs = fleet_journal { { CLEAN, "rxe0", "rxe0", "same" }, { CLEAN, "rxe1", "rxe1", "same" } }
for _, r in ipairs(recs) do
  if r.type == "run" then r.fleet.pair_tests = { "R2", "R3", "R4" } end
  if r.phase == "pair" and r.id == "R2" then
    r.id = "R4"
    r.metrics.gpu_bus_id = GPU[r.pair_devices[1]]
  end
end
fm = fmodel.build(recs)
local e = fm.pairs.cells["R4|g1:rxe1|g2:rxe1"]
check(e and e.gpu == "0000:08:00.0" and fm.pairs.cells["R4|g1:rxe0|g2:rxe0"].gpu == "0000:03:00.0",
      "R4 pair cells carry their rail's GPU: " .. tostring(e and e.gpu))
report.write(fm, { xlsx = out .. "/rails-gpu.xlsx", json = out .. "/rails-gpu.json" })
f = assert(io.open(out .. "/rails-gpu.json"))
j = cjson.decode(f:read("a"))
f:close()
local gpus = {}
for _, p in ipairs(j.pairs) do if p.id == "R4" then gpus[p.from] = p.gpu end end
check(gpus["g2:rxe1"] == "0000:08:00.0" and gpus["g3:rxe0"] == "0000:03:00.0",
      "JSON pairs: R4's gpu per end")
py = io.popen(("/usr/bin/python3 -c \"import openpyxl; ws = openpyxl.load_workbook('%s')['Pairs']; "
  .. "rows = list(ws.iter_rows(values_only=True)); h = [r for r in rows if r[0] == 'Test' and 'GPU' in r][0]; "
  .. "i = h.index('GPU'); print(sorted(set((r[1], r[i]) for r in rows if r[0] == 'R4' and r[i])))\"")
  :format(out .. "/rails-gpu.xlsx"))
got = py:read("a")
py:close()
check(got:find("('g1:rxe0', '0000:03:00.0')", 1, true) and got:find("('g1:rxe1', '0000:08:00.0')", 1, true),
      "Pairs sheet: a GPU column, each R4 pair's GPU: " .. got)

-- 3. a real two-rail run (fixtures/fleet/rails-cross-3guests.jsonl: the
-- bed's guests, rxe1 on another subnet than rxe0): every cross-rail pair
-- ERROR, every same-rail pair PASS is the fabric's, no suspect
local RAILS = dir .. "/rails-cross-3guests.jsonl"
fm = fmodel.build(journal.read(RAILS))
local a = fm.attribution
local finding = {}
for _, x in ipairs(a.rails or {}) do
  finding[#finding + 1] = ("%s %d/%d"):format(x.test, #x.evidence, x.same)
end
check(#a.suspects == 0 and #a.unconfirmed == 0 and #a.watch == 0,
      "cross rail all ERROR, same rail all PASS: no suspect node, NIC or link: " .. suspects(fm))
check(table.concat(finding, ",") == "R2 6/6,R3 6/6",
      "a rail finding per test, its 6 cross-rail pairs as evidence: " .. table.concat(finding, ","))
local t = a.rails and a.rails[1].text or ""
check(t:find("R2 cross rail: 0 of 6 pairs connect, same rail all 6 good", 1, true)
      and t:find("rxe0 (10.78.1.1) -> rxe1 (10.213.79.102)", 1, true)
      and t:find("transport retry counter exceeded", 1, true),
      "its text says what and gives the real error naming both ends: " .. t)
report.write(fm, { xlsx = out .. "/rails-cross.xlsx", json = out .. "/rails-cross.json" })
f = assert(io.open(out .. "/rails-cross.json"))
j = cjson.decode(f:read("a"))
f:close()
check(#(j.attribution.rails or {}) == 2 and next(j.attribution.suspects) == nil,
      "JSON: attribution.rails, no suspect")
py = io.popen(("/usr/bin/python3 -c \"import openpyxl; wb = openpyxl.load_workbook('%s'); "
  .. "print(sum(1 for r in wb['Attribution'].iter_rows(values_only=True) if r[0] == 'rail')); "
  .. "print([r[0] for r in wb['Summary'].iter_rows(values_only=True) if r[0] and "
  .. "(r[0].startswith('Suspect') or r[0] == 'Rail finding')])\"")
  :format(out .. "/rails-cross.xlsx"))
got = py:read("a")
py:close()
check(got == "12\n['Suspect', 'Rail finding', 'Rail finding']\n",
      "workbook: 12 cross-rail rows on Attribution, Summary 'Suspect' none and two rail findings: "
      .. got)
-- the pattern broken either way (a pair cell changed in memory): back to
-- the suspects' rules
local function with(key, status, reason)
  local m = fmodel.build(journal.read(RAILS))
  local e = assert(m.pairs.cells[key], key)
  e.status, e.reason = status, reason
  return require("strata.fleet.attrib").build(m)
end
a = with("R2|g2:rxe1|g3:rxe1", "ERROR", "(a same-rail pair made ERROR in memory)")
check(#(a.rails or {}) == 1 and a.rails[1].test == "R3",
      "a same-rail pair bad: no R2 rail finding (R3's stands)")
a = with("R3|g3:rxe1|g1:rxe0", "PASS", nil)
-- (links "not confirmed": this run's launcher re-measured nothing)
local links = {}
for _, x in ipairs(a.unconfirmed) do
  if x.kind == "link" then links[#links + 1] = x.name end
end
check(#(a.rails or {}) == 1 and a.rails[1].test == "R2" and #links == 5,
      "one cross-rail pair good: no R3 rail finding, its 5 bad cross pairs are links again: "
      .. table.concat(links, "; "))

-- one device: no rail fields anywhere
fm = fmodel.build(journal.read(dir .. "/" .. HELD))
check(fm.pairs.by_rail == nil and fm.pairs.devices == nil and fm.pairs.cells["R3|g1|g2"],
      "one device: keys and names per node, no rail summary")

if check.n > 0 then
  print(check.n .. " failed")
  os.exit(1)
end
print("all passed")
