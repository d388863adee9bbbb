-- strata.glob: the one glob dialect (docs/specs.md, "Patterns"), and the
-- three places that use it: --only (runner.plan), a criterion on a metric
-- pattern and cv(<pattern>) (thresholds), a fleet role by node name
-- (fleet.plan).
local glob = require "strata.glob"

local function eq(got, want, what)
  if got ~= want then
    error(("%s: got %s, want %s"):format(what, tostring(got), tostring(want)), 2)
  end
end

-- the dialect: * any run (none included), ? one character, the rest literal
eq(glob.match("R*", "R2"), true, "* a run")
eq(glob.match("R*", "R"), true, "* none")
eq(glob.match("R?", "R2"), true, "? one character")
eq(glob.match("R?", "R"), false, "? not none")
eq(glob.match("R?", "R23"), false, "? not two")
eq(glob.match("lat.*.p99", "lat.get.p99"), true, "dots literal, * across")
eq(glob.match("lat.*.p99", "latxgetxp99"), false, ". is not any character")
eq(glob.match("cpu[0-9]", "cpu[0-9]"), true, "brackets literal")
eq(glob.match("cpu[0-9]", "cpu1"), false, "no character classes")
eq(glob.match("a%d", "a%d"), true, "% literal")
eq(glob.match("a-b+c^$(x)", "a-b+c^$(x)"), true, "magic characters literal")
eq(glob.match("H", "H1"), false, "the whole name")
eq(glob.match("*1", "H1"), true, "a leading *")
eq(glob.pattern("n?-*"), "^n.%-.*$", "the Lua pattern")

-- --only: IDs and tags by the same dialect, a layer by name
local spec = require "strata.spec"
local plan = require "strata.runner.plan"
local function t(id, tags, layer)
  return { id = id, tags = tags or {}, needs = {}, layer = layer or "host",
           where = "glob.lua:1" }
end
local tests = { t("H1"), t("H12", { "slow" }), t("G1", {}, "gpu") }
local by_id = {}
for _, x in ipairs(tests) do by_id[x.id] = x end
assert(spec.LAYER_RANK.host and spec.LAYER_RANK.gpu, "ladder layers")
local function ids(order)
  local out = {}
  for _, x in ipairs(order) do out[#out + 1] = x.id end
  return table.concat(out, " ")
end
eq(ids(plan.order(tests, by_id, { "H?" })), "H1", "--only H?")
eq(ids(plan.order(tests, by_id, { "H*" })), "H1 H12", "--only H*")
eq(ids(plan.order(tests, by_id, { "sl?w" })), "H12", "--only a tag glob")
eq(ids(plan.order(tests, by_id, { "gpu" })), "G1", "--only a layer")

-- a criterion on a metric pattern, and cv() over a pattern
local th = require "strata.thresholds"
local c = { id = "T", metric = "lat.?.p99", op = "max", value = 10, expr = 10,
            limit = { kind = "value", value = 10 }, source = "t:1" }
th.set_text(c)
local checks = th.judge({ c }, { metrics = { ["lat.a.p99"] = 5, ["lat.b.p99"] = 20,
                                             ["lat.bb.p99"] = 50 } })
local judged = {}
for _, ck in ipairs(checks) do judged[#judged + 1] = ck.metric .. "=" .. tostring(ck.ok) end
table.sort(judged)
eq(table.concat(judged, " "), "lat.a.p99=true lat.b.p99=false", "a pattern criterion")
local v = th.derived("cv(x.?)", { ["x.1"] = 2, ["x.2"] = 4, ["x.3"] = 4, ["x.4"] = 4,
                                 ["x.5"] = 5, ["x.6"] = 5, ["x.7"] = 7, ["x.8"] = 9,
                                 ["x.10"] = 1000 })
eq(v and math.floor(v * 100 + 0.5), 4000, "cv over x.? (x.10 left out)")

-- a fleet role by node name
local fplan = require "strata.fleet.plan"
local nodes = { { name = "gpu01", features = {} }, { name = "gpu1", features = {} },
                { name = "cpu.1", features = {} } }
local roles = fplan.roles({ roles = { gpu = { nodes = { "gpu??" } },
                                      storage_client = { "cpu.?" } } }, nodes)
eq(roles.gpu.gpu01, true, "gpu?? takes gpu01")
eq(roles.gpu.gpu1, nil, "gpu?? leaves gpu1")
eq(roles.storage_client["cpu.1"], true, "cpu.? takes cpu.1")
eq(roles.storage_client.gpu01, nil, "cpu.? leaves gpu01")
print("glob: ok")
