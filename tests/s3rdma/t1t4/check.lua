-- check.lua JOURNAL WANT - T1T4's record in a journal: status WANT, the
-- ratios computed from the fixture values, both tables present.
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
if want == "PASS" then
  if not near(m["host.throughput_ratio"], 20.9 / 20) then bad[#bad + 1] = "ratio" end
  if not near(m["host.cpu_reduction_pct"], 100 * (45 - 12) / 45) then bad[#bad + 1] = "cpu" end
  if m["host.benefit"] ~= true then bad[#bad + 1] = "benefit" end
  if m["wire.r2_gbps"] ~= 100 then bad[#bad + 1] = "raw wire (R2 best)" end
  if not names["Raw wire"] then bad[#bad + 1] = "raw wire table" end
  if m["gpu.benefit"] ~= nil then bad[#bad + 1] = "gpu pair judged without data" end
else
  if m["host.benefit"] ~= false then bad[#bad + 1] = "benefit should be false" end
end
if #bad > 0 then
  print("t1t4 check FAILED: " .. table.concat(bad, ", "))
  os.exit(1)
end
print("t1t4 check: " .. want .. " as expected")
