-- strata.redact.clean: secrets masked in a copy, the original untouched,
-- and tables with nothing to mask shared, not copied (the journal cleans
-- one record per cell).
local r = require "strata.redact"
r.add("supersecretvalue")
local shared = { a = 1 }
local t = { x = "plain", y = { z = "has supersecretvalue in it", n = 3 }, s = shared, s2 = shared,
            password = "hunter2hunter2", keep = { q = "fine" } }
local c = r.clean(t)
assert(c ~= t, "changed top copied")
assert(t.y.z == "has supersecretvalue in it", "original untouched")
assert(c.y.z == "has *** in it", c.y.z)
assert(c.password == "***")
assert(c.keep == t.keep, "unchanged subtable shared")
assert(c.s == c.s2)
local u = { a = { b = "x" } }
assert(r.clean(u) == u, "nothing to mask: same table")
local cyc = {}; cyc.self = cyc
local ok = pcall(require("cjson").encode, r.clean(cyc))
assert(not ok)
print("ok")
