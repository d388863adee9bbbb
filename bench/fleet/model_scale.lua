-- bench/fleet/model_scale.lua FIXTURES N [MODE]: the fleet model (judging,
-- outliers, attribution) and the fleet workbook at N simulated nodes.
--
-- A journal is synthesised from the real recording fixtures/fleet/
-- run-3nodes.jsonl (every node's own records are copies of n1's; the pair
-- records copies of its R2 pair record with a made-up figure: 1.0 Gbit/s,
-- +-10 % by a fixed sequence; every pair through the node named "s7" at
-- 0.2), pairs as `site.fleet.pairs` plans them: a ring (MODE ring,
-- default) or all pairs (MODE all, capped at site.fleet.pairs.max = 64 by
-- default; MODE all-uncapped for every pair) or phased (strata.fleet.phased:
-- its planner fed the same figures; the pairs it measured become the
-- records, its record joins the journal).  It measures the
-- model, not Slurm: bench/fleet/orch_scale.sh runs the orchestration on
-- N namespace nodes (docs/fleet.md, "At scale").  Prints the wall of each step and
-- whether the suspect came out as s7, and the process's peak resident
-- memory (VmHWM, /proc/self/status: proc(5)).
local journal = require "strata.journal"
local core = require "strata.core"
local fmodel = require "strata.fleet.model"
local plan = require "strata.fleet.plan"
local report = require "strata.fleet.report"

local dir, n, mode = arg[1], tonumber(arg[2] or "64"), arg[3] or "ring"
local recs = journal.read(dir .. "/run-3nodes.jsonl")
local run, th, own, pair_rec, ended = nil, nil, {}, nil, nil
for _, r in ipairs(recs) do
  if r.type == "run" then run = r
  elseif r.type == "thresholds" then th = r
  elseif r.type == "end" then ended = r
  elseif r.type == "result" and r.node == "n1" and r.phase ~= "pair" and r.phase ~= "incast" then
    own[#own + 1] = r
  elseif r.type == "result" and r.phase == "pair" and r.id == "R2" and not pair_rec then
    pair_rec = r
  end
end
local function copy(v)
  if type(v) ~= "table" then return v end
  local o = {}
  for k, x in pairs(v) do o[k] = copy(x) end
  return o
end
table.insert(th.criteria, { id = "FLEET", metric = "node_ratio", op = "min", expr = 0.9,
                            text = "node_ratio >= 0.9", source = "bench" })
table.insert(th.criteria, { id = "FLEET", metric = "pair_ratio", op = "min", expr = 0.5,
                            text = "pair_ratio >= 0.5", source = "bench" })
local names, nodes = {}, {}
for i = 1, n do
  names[i] = "s" .. i
  nodes[i] = { name = names[i], addr = "10.0.0." .. i, features = {}, roles = {} }
end
run.fleet.nodes = nodes
local out = { run, th }
for _, name in ipairs(names) do
  for _, r in ipairs(own) do
    local x = copy(r)
    x.node = name
    out[#out + 1] = x
  end
end
local function value(i, p)
  if p[1] == "s7" or p[2] == "s7" then return 0.2 end
  return 1.0 + ((i * 7) % 21 - 10) / 100
end
local pairs_, t_plan, phased_rec
if mode == "phased" then
  local phased = require "strata.fleet.phased"
  local crit = fmodel.fleet_criteria({ { id = "FLEET", metric = "admit_ratio", op = "min",
    expr = 0.5, text = "admit_ratio >= 0.5", source = "bench" } })
  pairs_ = {}
  local t = core.now()
  phased_rec = phased.run(names, function(list)
    local o = {}
    for _, p in ipairs(list) do
      pairs_[#pairs_ + 1] = p
      o[p[1] .. "->" .. p[2]] = { R2 = { status = "PASS", value = value(#pairs_, p),
                                         metric = "bw_gbps", dir = "min" } }
    end
    return o
  end, crit)
  t_plan = core.now() - t
else
  pairs_ = mode == "ring" and plan.pairs(names, "ring")
    or plan.pairs(names, "all", mode == "all" and 64 or math.huge)
end
for i, p in ipairs(pairs_) do
  local x = copy(pair_rec)
  x.node, x.pair = p[1], { p[1], p[2] }
  x.outcome = { kind = "ok" }
  x.status, x.reason = nil, nil
  x.headline, x.cells, x.cell_index = "bw_gbps", 1, 1
  x.metrics = { bw_gbps = value(i, p) }
  x.checks = {}
  out[#out + 1] = x
end
if phased_rec then out[#out + 1] = phased_rec end
out[#out + 1] = ended
local t0 = core.now()
local fm = fmodel.build(out)
local t1 = core.now()
report.write(fm, { xlsx = os.tmpname() .. ".xlsx" })
local t2 = core.now()
local sus = {}
for _, s in ipairs(fm.attribution.suspects) do sus[#sus + 1] = s.kind .. " " .. s.name end
local f = io.open("/proc/self/status")
local hwm = f and f:read("a"):match("VmHWM:%s*(%d+)")
if f then f:close() end
print(("nodes %d, pairs %d (%s; all pairs %d): model + attribution %.3f s, workbook %.3f s, "
  .. "%d records; suspects: %s; peak RSS %s MiB"):format(n, #pairs_, mode, n * (n - 1) // 2,
  t1 - t0, t2 - t1, #out, table.concat(sus, ", "),
  hwm and ("%.0f"):format(tonumber(hwm) / 1024) or "?"))
if phased_rec then
  local refused = {}
  for _, d in ipairs(phased_rec.nodes) do if not d.admitted then refused[#refused + 1] = d.node end end
  print(("phased planner %.3f s: %d pairs, %d admitted, refused: %s"):format(t_plan,
    phased_rec.pairs, phased_rec.admitted, table.concat(refused, ", ")))
end
