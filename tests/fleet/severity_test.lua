-- severity_test.lua SRCDIR OUTDIR: the severity model (strata.severity)
-- and the act plan (strata.fleet.act) without Slurm: the shipped
-- specs/severity.yaml, a site's own rules, WARN as a plain status string,
-- bad rules naming file:line, and what --act plans for each Slurm state
-- (strata's drain resumed, an operator's never; an existing reason kept).
local sev = require "strata.severity"
local act = require "strata.fleet.act"

local fails = 0
local function check(c, what)
  print((c and "ok   " or "FAIL ") .. what)
  if not c then fails = fails + 1 end
end
local src, out = assert(arg[1]), assert(arg[2])
local function write(name, text)
  local p = out .. "/" .. name
  local f = assert(io.open(p, "w"))
  f:write(text)
  f:close()
  return p
end

local m = sev.load(nil, nil, src .. "/specs/thresholds.yaml")
check(m.source:match("specs/severity.yaml$") and #m.rules == 3, "the shipped model: " .. m.source)
local function d(tests, st, why) return sev.decide(m, tests, st, why) end
local r = d({ { id = "H1", layer = "host", status = "PASS" }, { id = "R2", layer = "verbs", status = "FAIL" },
              { id = "B01", layer = "s3", status = "FAIL" } })
check(r.action == "drain" and r.id == "R2" and r.source:match("severity.yaml:%d+$"),
      "a failed verbs rung drains, naming R2 and the rule's line")
check(d({ { id = "B01", layer = "s3", status = "FAIL" } }).action == "warn", "an S3 FAIL only warns")
check(d({ { id = "H1", layer = "host", status = "WARN" } }).action == "warn", "WARN (a string) warns")
check(d({ { id = "H1", layer = "host", status = "PASS" } }, "ERROR", "agent died").action == "drain",
      "a node ERROR (its agent) drains")
check(d({ { id = "H1", layer = "host", status = "PASS" }, { id = "G1", layer = "gpu", status = "SKIP" } })
      .action == "none", "PASS and SKIP: none")

local site = write("site-sev.yaml", [[
site: { name: t }
severity:
  rules:
    - { status: [FAIL], tests: [G1], action: drain }
    - { status: [FAIL, WARN], at_or_below: gpu, action: warn }
]])
local sm = sev.load(site, { severity = true }, nil)
check(sm.source == site and sm.rules[2].source == site .. ":5", "a site's own rules, with lines")
check(sev.decide(sm, { { id = "H1", layer = "host", status = "FAIL" } }).action == "warn"
      and sev.decide(sm, { { id = "G1", layer = "gpu", status = "FAIL" } }).action == "drain"
      and sev.decide(sm, { { id = "R2", layer = "verbs", status = "FAIL" } }).action == "none",
      "tests: and at_or_below: limit the rules")
local bad = write("site-bad.yaml", "severity:\n  rules:\n    - { status: [FAIL], at_or_below: roof, action: drain }\n")
local ok, e = pcall(sev.load, bad, { severity = true }, nil)
check(not ok and tostring(e):find("site-bad.yaml:3: severity.rules[1].at_or_below: 'roof'", 1, true),
      "a bad rung names file:line: " .. tostring(e))

local bad2 = write("site-bad2.yaml", "severity:\n  rules:\n    - { status: [FIAL], action: drain }\n")
ok, e = pcall(sev.load, bad2, { severity = true }, nil)
check(not ok and tostring(e):find("site-bad2.yaml:3: severity.rules[1].status: 'FIAL' is not a status", 1, true),
      "an unknown status names file:line: " .. tostring(e))

-- the act plan per Slurm state
local modes = act.modes("drain,resume")
local drain = { action = "drain", id = "R2", status = "FAIL" }
local none = { action = "none" }
local p = act.plan_node("n1", drain, { state = "IDLE" }, modes, "RUN")
check(p.op == "drain" and p.argv[5] == "Reason=strata R2 FAIL RUN", "IDLE + drain: scontrol drain")
p = act.plan_node("n1", drain, { state = "IDLE+DRAIN", drain = true, reason = "operator: x" }, modes, "RUN")
check(not p.op and p.why:find("another reason"), "an operator's drain is not overwritten")
p = act.plan_node("n1", none, { state = "IDLE+DRAIN", drain = true, reason = "strata R2 FAIL old" }, modes, "RUN")
check(p.op == "resume", "strata's drain, passing now: resume")
p = act.plan_node("n1", none, { state = "IDLE+DRAIN", drain = true, reason = "operator: x" }, modes, "RUN")
check(not p.op and p.why:find("never resumed"), "an operator's drain is never resumed")
p = act.plan_node("n1", none, { state = "IDLE+DRAIN", drain = true, reason = "strata R2 FAIL old" },
                  act.modes("drain"), "RUN")
check(not p.op, "no resume unless asked")
check(act.modes(nil, true)["dry-run"] and act.modes(nil, true).drain, "--dry-run alone: both, printed")
ok, e = pcall(act.modes, "evict")
check(not ok and tostring(e):find("'evict' is not drain, resume or dry-run", 1, true), "a bad --act")
local states = act.parse_states and act.parse_states(
  "NodeName=n2 Arch=x86_64 State=IDLE+DRAIN ThreadsPerCore=1 Reason=strata R2 FAIL 2026 job 3 [root@2026-12-06T05:00:00]\n")
check(states == nil or (states.n2.reason == "strata R2 FAIL 2026 job 3" and states.n2.drain),
      "scontrol show node -o: the reason without [user@time]")
-- Kubernetes labels: a PASS node whose decision came from a WARN is WARN
local kact = require "strata.k8s.act"
local lp = kact.label_patch("strata", { status = "PASS" }, { action = "warn", id = "H1", status = "WARN" }, "RUN")
check(lp.metadata.labels["strata/verdict"] == "WARN" and lp.metadata.labels["strata/lowest-failed-rung"] == "none",
      "k8s label: PASS with a WARN test -> WARN, no failed rung")
lp = kact.label_patch("strata", { status = "FAIL", lowest_failed = { layer = "verbs", id = "R2", status = "FAIL" } },
                      { action = "drain", id = "R2", status = "FAIL" }, "RUN")
check(lp.metadata.labels["strata/verdict"] == "FAIL" and lp.metadata.annotations["strata/lowest-failed-rung"] == "verbs R2 FAIL",
      "k8s label: FAIL, annotation names the test")
check(kact.label_value("NOT RUN") == "NOT-RUN" and kact.label_value("-x-") == "x", "label values made legal")
local nt = kact.taints({ spec = { taints = { { key = "other", effect = "NoSchedule" } } } }, "strata", true)
check(#nt == 2 and nt[2].key == "strata/verdict" and nt[1].key == "other", "taint added beside another")
check(kact.taints({ spec = { taints = { { key = "other" } } } }, "strata", false) == nil, "no taint, none wanted: no PATCH")
print(fails == 0 and "all ok" or (fails .. " failed"))
os.exit(fails == 0 and 0 or 1)
