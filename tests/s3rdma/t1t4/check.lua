-- check.lua JOURNAL WANT - T1T4's record in a journal: status WANT, the
-- ratios computed from the fixture values, both tables present, and the
-- verdict given by the shipped criterion T1T4.benefit (any_of, from
-- specs/thresholds.yaml) with the members that held.
local cjson = require "cjson"
local want = assert(arg[2])
local rec
for line in assert(io.lines(assert(arg[1]))) do
  local ok, r = pcall(cjson.decode, line)
  if ok and type(r) == "table" and r.type == "result" and r.id == "T1T4" then
    rec = r
  end
end
assert(rec, "no T1T4 result in " .. arg[1])
local m = rec.metrics or {}
local function near(a, b) return type(a) == "number" and math.abs(a - b) < 1e-6 end
local bad = {}
if rec.status ~= want then bad[#bad + 1] = "status " .. tostring(rec.status) end
local names = {}
for _, tb in ipairs(rec.tables or {}) do names[tb.name] = tb end
if not names["T1-T4"] or #names["T1-T4"].rows ~= 6 then bad[#bad + 1] = "T1-T4 table" end
if not names["RDMA benefit"] then bad[#bad + 1] = "benefit table" end
local benefit
for _, c in ipairs(rec.checks or {}) do
  if c.criterion == "benefit" and c.op == "any_of" then benefit = c end
end
if not benefit or not tostring(benefit.source):find("specs/thresholds.yaml:", 1, true)
   or #(benefit.members or {}) ~= 3 then
  bad[#bad + 1] = "no T1T4.benefit any_of check of 3 members from specs/thresholds.yaml"
end
benefit = benefit or {}
if want == "PASS" then
  if not near(m["host.throughput_ratio"], 20.9 / 20) then bad[#bad + 1] = "ratio" end
  if not near(m["host.cpu_reduction_pct"], 100 * (45 - 12) / 45) then bad[#bad + 1] = "cpu" end
  if not (benefit.ok == true and #(benefit.held or {}) == 1 and
          benefit.held[1] == "host.cpu_reduction_pct") then
    bad[#bad + 1] = "benefit by CPU alone: " .. tostring(benefit.text)
  end
  if m["wire.r2_gbps"] ~= 100 then bad[#bad + 1] = "raw wire (R2 best)" end
  if not names["Raw wire"] then bad[#bad + 1] = "raw wire table" end
  if m["gpu.throughput_ratio"] ~= nil then bad[#bad + 1] = "gpu pair measured without data" end
else
  if benefit.ok ~= false or #(benefit.held or {}) ~= 0 then
    bad[#bad + 1] = "benefit should not hold: " .. tostring(benefit.text)
  end
end
if #bad > 0 then
  print("t1t4 check FAILED: " .. table.concat(bad, ", "))
  os.exit(1)
end
print("t1t4 check: " .. want .. " as expected")
