-- Record an interface's ethtool statistics names as fixtures/roce holds
-- them (`ethtool -S` layout, names sorted, values as read), through the
-- same SIOCETHTOOL path the sampler uses (engine/counters/ethtool.c):
--   strata lua tests/roce/capture-ethtool.lua IFNAME > fixtures/roce/ethtool_<driver>.txt
local counters = require "strata.counters"
local ifname = assert(arg[1], "usage: capture-ethtool.lua IFNAME")
local s = counters.snapshot { sources = { "ethtool" }, ethtool = { ifname } }
local prefix = "ethtool." .. ifname .. "."
local names = {}
for k in pairs(s) do
  if k:sub(1, #prefix) == prefix then names[#names + 1] = k:sub(#prefix + 1) end
end
table.sort(names)
print("NIC statistics:")
for _, n in ipairs(names) do print(("     %s: %d"):format(n, s[prefix .. n])) end
