-- The golden's parsers and comparison (lua/strata/site/discover.lua),
-- on the outputs the tools' own manuals print: dcb-pfc(8) "Show what was
-- set" (iproute2 6.1.0, this machine's /usr/share/man/man8/dcb-pfc.8.gz)
-- and dcb-apptrust(8) (iproute2, 22 November 2022: `order` then the
-- selectors).  No NIC here answers DCB netlink (virtio_net, veth), so the
-- live readings are "not present" (site_Golden checks that on this host).
local d = require "strata.site.discover"
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")({ quiet = true })
local function eq(got, want, what)
  check(got == want, "%s: got %s, want %s", what, tostring(got), tostring(want))
end

local man = "pfc-cap 8 macsec-bypass off delay 4096\n"
  .. "prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:on 7:on\n"
eq(d.parse_pfc(man), "6,7", "dcb-pfc(8) example")
eq(d.parse_pfc("prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off\n"), "none", "all off")
eq(d.parse_pfc("Attribute read: Operation not supported\n"), nil, "no DCB")
eq(d.parse_pfc(nil), nil, "no output")
eq(d.parse_apptrust("order dscp pcp \n"), "dscp pcp", "dcb-apptrust(8) order")
eq(d.parse_apptrust("order \n"), "none", "empty trust list")
eq(d.parse_apptrust(nil), nil, "no apptrust")

-- the comparison: same, differs, not present (a key the node cannot
-- answer), and a NIC of the golden the node lacks (differs)
local golden = { kernel = "6.1.0", nccl = "2.28.3",
  nics = { { name = "eth0", mtu = 9000, pfc = "3" }, { name = "eth9", mtu = 9000 } } }
local facts = {
  { path = "golden.kernel", value = "6.1.0" },
  { path = "golden.nics", value = { { name = "eth0", mtu = 1500 } } },
}
local by = {}
for _, r in ipairs(d.golden_diff(golden, facts)) do by[r.key] = r end
eq(by.kernel.state, "same", "kernel")
eq(by.nccl.state, "not present", "no NCCL library")
eq(by["nics.eth0.mtu"].state, "differs", "mtu")
eq(by["nics.eth0.mtu"].now, 1500, "mtu now")
eq(by["nics.eth0.pfc"].state, "not present", "no dcb answer")
eq(by["nics.eth9.mtu"].state, "differs", "a NIC the node lacks")

-- a golden that came through JSON (a fleet run's work) holds 9000.0
local j = d.golden_diff({ nics = { { name = "eth0", mtu = 9000.0 } } },
  { { path = "golden.nics", value = { { name = "eth0", mtu = 9000 } } } })
eq(j[1].state, "same", "9000.0 from JSON is the file's 9000")
eq(math.type(j[1].golden), "integer", "shown as 9000")

local s = d.settings(facts)
eq(#s, 2, "settings")
eq(s[1].key, "kernel", "settings order")
eq(s[2].key, "nics.eth0.mtu", "settings key")
if check.n > 0 then return 1 end
print("golden_test: ok")
return 0
