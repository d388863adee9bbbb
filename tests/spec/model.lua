-- strata.model: the one operator table, the one direction of "better"
-- (what verdict's headline, compare and the fleet model each decided
-- before), cell labels and the "(= v)" text; and thresholds.judge on
-- groups, WARN bands and cv() straight through the module, without a run.
local model = require "strata.model"
local th = require "strata.thresholds"

local function eq(got, want, what)
  if got ~= want then
    error(("%s: got %s, want %s"):format(what, tostring(got), tostring(want)), 2)
  end
end

-- operators: ASCII in texts, the sign on the sheet, the negation
eq(model.symbol("min"), ">=", "min text")
eq(model.symbol("min", "sheet"), "\u{2265}", "min sheet")
eq(model.symbol("max", "negated"), ">", "max negated")
eq(model.symbol("in", "negated"), "not in", "in negated")
eq(model.symbol("any_of"), "any_of", "unknown op as itself")

-- better: the first min/max criterion on the metric (ops resolve sorted,
-- so a band's max comes first), by test when asked, else the unit
local crits = {
  { id = "A", metric = "bw", op = "min" },
  { id = "B", metric = "lat", op = "max" },
  { id = "B", metric = "lat", op = "min" },
  { id = "C", metric = "bw", op = "max" },
}
eq(model.better(crits, "bw"), true, "bw: min first")
eq(model.better(crits, "bw", nil, "C"), false, "C's bw: max")
eq(model.better(crits, "lat"), false, "lat: band, max first")
eq(model.better(crits, "x"), nil, "no criterion, no unit")
eq(model.better(crits, "x", "Gbit/s"), true, "bandwidth unit")
eq(model.better(crits, "x", "us"), false, "time unit")
eq(model.better({}, "x", false), nil, "no unit (compare passes false)")

-- labels and the resolved text
eq(model.label({ "size", "qps" }, { size = 4096, qps = 1 }), "size=4096,qps=1", "label")
eq(model.label({ "size" }, { size = 1.0 }), "size=1", "integral float")
eq(model.label(nil, {}), "", "no params")
eq(model.resolved("site.x", 90), " (= 90)", "resolved")
eq(model.resolved("site.x", 8, 10), " (= 8 \u{2026} 10)", "resolved range")
eq(model.resolved(nil, 90), "", "a plain number says itself")

-- judging a group whose member has a WARN band: any_of holds through the
-- member that held cleanly, so no warning
local function crit(metric, op, v, w)
  local c = { id = "T", metric = metric, op = op, value = v, expr = v,
              limit = { kind = "value", value = v }, source = "t:1" }
  if w then
    c.warn = { id = "T", metric = metric, op = op, value = w, expr = w,
               limit = { kind = "value", value = w }, source = "t:2", band = "warn" }
  end
  th.set_text(c)
  return c
end
local group = { id = "T", metric = "g", op = "any_of", source = "t:0",
                members = { crit("a", "min", 10, 20), crit("b", "min", 5) } }
th.set_text(group)
eq(group.text, "g: any of (a >= 10; b >= 5)", "group text")
local ck = th.judge({ group }, { metrics = { a = 15, b = 6 } })[1]
eq(ck.ok, true, "any_of held")
eq(ck.warn, nil, "b held cleanly: no warning")
eq(ck.text, "g: a = 15 >= 10 (warn: < 20); b = 6 >= 5", "members reported")
ck = th.judge({ group }, { metrics = { a = 15, b = 4 } })[1]
eq(ck.warn, true, "only a held, past its warn limit")
eq(ck.warn_why, "g: held with a warning (a = 15 >= 10 (warn: < 20); b = 4 < 5)", "warn why")
group.op = "all_of"
ck = th.judge({ group }, { metrics = { a = 15, b = 6 } })[1]
eq(ck.warn, true, "all_of: any member's warning")
ck = th.judge({ group }, { metrics = { a = 15 } })[1]
eq(ck.ok, false, "all_of: b not measured")
eq(ck.why, "g: 1 of 2 held (a = 15 >= 10 (warn: < 20); b not measured)", "why")

-- cv(): population standard deviation over |mean|, in %
local v = th.derived("cv(x)", { ["x.1"] = 2, ["x.2"] = 4, ["x.3"] = 4, ["x.4"] = 4,
                                ["x.5"] = 5, ["x.6"] = 5, ["x.7"] = 7, ["x.8"] = 9 })
eq(v, 40, "cv of the textbook series (mean 5, sd 2)")
eq(th.derived("bw", {}), nil, "not derived")
local none, why = th.derived("cv(y)", { y = 3 })
eq(none, false, "one number")
eq(why, "cv(y): 1 number to compare, 2 or more needed", "why")
print("ok")
