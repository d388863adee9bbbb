-- The fleet's configuration view (lua/strata/fleet/config.lua) and the
-- merge of `strata site init --fleet` (lua/strata/site/fleet.lua) on the
-- shapes H4 and `site init --json` write: three nodes, one MTU apart.
-- (fleet_golden [fleet] does the same on the bed's guests for real.)
local config = require "strata.fleet.config"
local sf = require "strata.site.fleet"
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")({ quiet = true })
local function eq(got, want, what)
  check(got == want, "%s: got %s, want %s", what, tostring(got), tostring(want))
end

local function h4(mtu, golden_row)
  local t = { { name = "Node configuration", rows = {
    { "kernel", "6.1.0-40-amd64" }, { "nics.eth0.mtu", mtu } } } }
  if golden_row then
    t[2] = { name = "Golden configuration", rows = { golden_row } }
  end
  return { id = "H4", tables = t }
end
local fm = { nodes = {
  { name = "g1", cells = { h4("1500", { "nics.eth0.mtu", "1500", "1500", "" }) } },
  { name = "g2", cells = { h4("1280", { "nics.eth0.mtu", "1500", "1280", "DIFFERS" }) } },
  { name = "g3", cells = { h4("1500", { "nics.eth0.mtu", "1500", "1500", "" }) } },
} }
local c = config.build(fm)
eq(c.nodes, 3, "nodes with H4")
eq(c.settings, 2, "settings")
eq(#c.rows, 1, "one difference")
local e = c.rows[1]
eq(e.node, "g2", "node")
eq(e.key, "nics.eth0.mtu", "setting")
eq(e.value, "1280", "value")
eq(e.golden, "1500", "golden")
eq(e.majority, "1500", "majority")
eq(e.held, 2, "held")
eq(config.lines(c)[1], "g2: nics.eth0.mtu 1280, golden 1500, majority 1500 (2 of 3 nodes)", "line")
-- two nodes split evenly: no majority, said so
local two = config.build { nodes = { fm.nodes[1], fm.nodes[2] } }
eq(two.ties[1], "nics.eth0.mtu", "a tie is no majority")
eq(#two.rows, 1, "the golden difference stands without a majority")

-- site init --fleet: the facts merged
local function node(name, mtu)
  return { node = name, entries = {
    { path = "site.name", value = name, from = "gethostname(2)" },
    { path = "host.cpus", value = 1, from = "/sys/devices/system/cpu/online: 0" },
    { path = "s3.endpoint", todo = "the endpoint" },
    { path = "golden.nics", value = { { name = "eth0", mtu = mtu, driver = "virtio_net" } },
      from = "/sys/class/net/*/mtu" } } }
end
local out = sf.merge { node("g1", 1500), node("g2", 1280.0), node("g3", 1500) }
local by = {}
for _, x in ipairs(out) do by[x.path] = x end
eq(by["site.name"].todo ~= nil, true, "hostnames differ: a TODO")
eq(by["host.cpus"].value, 1, "shared fact")
eq(by["host.cpus"].from, "all 3 nodes; /sys/devices/system/cpu/online: 0", "shared fact's source")
eq(by["s3.endpoint"].todo, "the endpoint", "TODO once")
eq(by["golden.nics"].value[1].mtu, 1500, "golden from the majority")
eq(by["golden.nics"].from:match("DIFFERS: (.*)$"), "g2 eth0.mtu 1280 (majority 1500)", "difference named")
if check.n > 0 then return 1 end
print("config_test: ok")
return 0
