-- check_specs.lua JOURNAL.jsonl - what the s3rdma specs must have given in
-- the Soft-RoCE guest: host-memory rows PASS with every phase proven and
-- the NIC witness read and judged by its criterion,
-- GPU-memory rows SKIP with a reason, nothing ERROR.
local cjson = require "cjson"
local recs = {}
for line in assert(io.lines(assert(arg[1]))) do
  local ok, r = pcall(cjson.decode, line)
  if ok and type(r) == "table" and r.type == "result" then
    recs[#recs + 1] = r
  end
end
local by = {}
for _, r in ipairs(recs) do
  if type(r) == "table" and r.id then
    by[r.id] = by[r.id] or {}
    table.insert(by[r.id], r)
  end
end
local bad = 0
local function expect(id, want, pred, what)
  local rs = by[id] or {}
  local seen = 0
  for _, r in ipairs(rs) do
    if r.status == want then
      seen = seen + 1
      if pred and not pred(r) then
        bad = bad + 1
        print(("FAIL %s: %s"):format(id, what))
      end
    end
  end
  if seen == 0 then
    bad = bad + 1
    local st = {}
    for _, r in ipairs(rs) do st[#st + 1] = r.status .. ":" .. tostring(r.reason) end
    print(("FAIL %s: no %s cell (%s)"):format(id, want, table.concat(st, "; ")))
  else
    print(("ok   %s: %d %s cell(s)"):format(id, seen, want))
  end
end
-- The NIC witness on rxe0 (lib/s3nic.lua): read, its packet counters
-- covering the bytes, the netdev "n/a" (rxe runs over it), and the
-- shipped criterion "nic" on the record, held, from specs/thresholds.yaml.
local function nic_held(r, ps)
  local m = r.metrics
  if m.nic_witness ~= "read" or m.nic_netdev ~= "n/a" or
     type(m.nic_rdma_ratio_min) ~= "number" then return false end
  for _, p in ipairs(ps) do
    if m[p .. "witness.nic"] ~= "read" then return false end
  end
  for _, c in ipairs(r.checks or {}) do
    if c.criterion == "nic" and c.op == "any_of" then
      return c.ok == true and tostring(c.source):find("thresholds.yaml:", 1, true)
             ~= nil and #(c.held or {}) == 1 and c.held[1] == "counted"
    end
  end
  return false
end
local function proven(...)
  local ps = { ... }
  return function(r)
    for _, p in ipairs(ps) do
      if r.metrics[p .. "proven"] ~= true then return false end
      if r.metrics[p .. "verdict"] ~= "PROVEN" then return false end
    end
    return nic_held(r, ps)
  end
end
expect("E3", "PASS", proven("put.", "get.", "range."), "phases proven, NIC witness held")
for _, id in ipairs { "B02", "B04" } do
  expect(id, "PASS", proven("put.", "get."), "phases proven")
end
expect("B11", "PASS", proven("get."), "GET proven")
expect("B13", "PASS", proven("put."), "PUT proven")
expect("B15", "PASS", proven("mp."), "multipart proven")
for _, id in ipairs { "B06", "B07", "B08", "B09", "E4" } do
  expect(id, "SKIP", function(r) return (r.reason or "") ~= "" end,
         "a reason")
end
for id, rs in pairs(by) do
  for _, r in ipairs(rs) do
    if r.status == "ERROR" or r.status == "FAIL" then
      bad = bad + 1
      print(("FAIL %s: %s %s"):format(id, r.status, tostring(r.reason)))
    end
  end
end
print(bad == 0 and "check_specs: all checks passed"
      or ("check_specs: %d problem(s)"):format(bad))
os.exit(bad == 0 and 0 or 1)
