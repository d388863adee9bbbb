-- prom_test.lua FIXTURES: the fleet's Prometheus textfile
-- (strata.fleet.prometheus) from the recorded diag journals
-- (fixtures/fleet, real bed runs): the run with g2's link held names g2
-- as a suspect and g3's FLAKY cell, the clean run names nobody; every
-- line parses with strata's own text-format parser (engine/prom), and
-- with promtool where it is installed.
local journal = require "strata.journal"
local fmodel = require "strata.fleet.model"
local fprom = require "strata.fleet.prometheus"
local prom = require "strata.prom"
local sys = require "strata.sys"
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()
local dir = assert(arg[1], "usage: prom_test.lua FIXTURES")

local function series(file)
  local fm = fmodel.build(journal.read(dir .. "/" .. file))
  local text = fprom.text(fm)
  local by = {}
  for _, s in ipairs(prom.parse(text)) do
    local keys = {}
    for k, v in pairs(s.labels) do if k ~= "host" then keys[#keys + 1] = k .. "=" .. v end end
    table.sort(keys)
    by[s.name .. "{" .. table.concat(keys, ",") .. "}"] = s.value
  end
  return by, text, fm
end

local held, text = series("diag-g2-held-60ms-3guests.jsonl")
check(held["strata_fleet_suspect{kind=node,name=g2,state=suspect}"] == 1,
      "g2's held link: strata_fleet_suspect{kind=node,name=g2,state=suspect} 1")
check(held["strata_fleet_flaky_cells{node=g3}"] == 1 and held["strata_fleet_run_flaky_cells{}"] == 1,
      "g3's FLAKY FT2 counted apart")
check(held["strata_test_pass{layer=host,node=g3,status=FLAKY,test=FT2}"] == 0,
      "FLAKY is not a pass: strata_test_pass 0 with status FLAKY")
check(held["strata_node_pass{node=g1,status=PASS}"] == 1 and held["strata_fleet_nodes{status=PASS}"] == 3,
      "per node: strata_node_pass, strata_fleet_nodes")
check(held["strata_fleet_verdict{verdict=PASS}"] == 1 and held["strata_fleet_timestamp_seconds{}"],
      "the verdict and when the run started")
-- the textfile names what the attribution names, no more: in the clean
-- run that is g1 alone (TCG's noise in that recording, fixtures/fleet/README.md)
for _, file in ipairs { "diag-clean-3guests.jsonl", "diag-g2-held-60ms-3guests.jsonl" } do
  local by, _, fm = series(file)
  local want, got = {}, {}
  for _, st in ipairs { { "suspect", "suspects" }, { "unconfirmed", "unconfirmed" }, { "watch", "watch" } } do
    for _, x in ipairs(fm.attribution[st[2]] or {}) do
      want[#want + 1] = ("kind=%s,name=%s,state=%s"):format(x.kind, x.name, st[1])
    end
  end
  for k in pairs(by) do
    local l = k:match("^strata_fleet_suspect{(.*)}$")
    if l then got[#got + 1] = l end
  end
  table.sort(want)
  table.sort(got)
  check(table.concat(got, ";") == table.concat(want, ";"),
        "%s: the suspects of the attribution: %s", file, table.concat(got, "; "))
end

local promtool = sys.run { cmd = { "sh", "-c", "command -v promtool" } }
if promtool.code == 0 then
  local r = sys.run { cmd = { "promtool", "check", "metrics" }, stdin = text }
  check(r.code == 0, "promtool check metrics: %s", r.stdout .. r.stderr)
else
  print("promtool not installed (Debian package prometheus): strata's parser only")
end
check.done("prom_test")
