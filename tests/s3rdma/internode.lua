-- internode.lua - the helper of tests/s3rdma/internode.sh (in guest a):
--   internode.lua wait URL            until URL answers 200 (60 s)
--   internode.lua fault ENDPOINT MODE POST /.strata/fault?mode=MODE
--   internode.lua check JOURNAL WANT  E2's result in a run's journal, as
--     WANT says: pass | lie | fallback | die | absent (below)
local s3 = require "strata.s3"
local cjson = require "cjson"
local cmd = arg[1]

if cmd == "wait" then
  local cl = s3.client { endpoint = arg[2]:match("^(https?://[^/]+)"), timeout = 5 }
  local path = arg[2]:match("^https?://[^/]+(/.*)$") or "/"
  for _ = 1, 600 do
    local ok, x = pcall(cl.request, cl, { method = "GET", path = path })
    if ok and x.status == 200 then os.exit(0) end
    os.execute("sleep 0.1")
  end
  print("FAIL " .. arg[2] .. " did not answer within 60 s")
  os.exit(1)
elseif cmd == "fault" then
  local cl = s3.client { endpoint = arg[2], timeout = 10 }
  local x = cl:request { method = "POST", path = "/.strata/fault", query = "mode=" .. arg[3] }
  if x.status ~= 204 then
    print(("FAIL cannot set fault %s on %s (HTTP %d)"):format(arg[3], arg[2], x.status))
    os.exit(1)
  end
  os.exit(0)
end

assert(cmd == "check", "usage: internode.lua wait|fault|check ...")
local want = arg[3]
local r
for line in assert(io.lines(assert(arg[2]))) do
  local ok, x = pcall(cjson.decode, line)
  if ok and type(x) == "table" and x.type == "result" and x.id == "E2" then r = x end
end
local bad = 0
local function check(cond, what)
  print((cond and "ok   " or "FAIL ") .. want .. ": " .. what)
  if not cond then bad = bad + 1 end
end
check(r ~= nil, "E2 has a result")
r = r or { metrics = {} }
local m = r.metrics or {}
local function n(k) return tonumber(m[k]) or -1 end
print(("     E2 %s: rdma_write_bytes %s, witness %s, errors %s, fallbacks %s, "
       .. "credit_waits %s, throttled %s, put_ops %s -- %s"):format(
  tostring(r.status), tostring(m.rdma_write_bytes), tostring(m.witness_recv_bytes),
  tostring(m.rdma_errors), tostring(m.pool_fallbacks), tostring(m.nic_credit_waits),
  tostring(m.nic_writes_throttled), tostring(m.put_ops), tostring(r.reason)))
local reason = r.reason or ""
if want == "pass" then
  -- a healthy pair: PASS on real traffic, and the peer vouches for every byte
  check(r.status == "PASS", "PASS")
  check(n("rdma_write_bytes") > 0, "bytes went over RDMA")
  check(n("witness_recv_bytes") == n("rdma_write_bytes"),
        "the peer received and verified exactly the RDMA-written bytes")
  check(n("rdma_errors") == 0 and n("pool_fallbacks") == 0, "no errors, no fallbacks")
elseif want == "lie" then
  -- the server doubles its count: only the witness can tell
  check(r.status == "FAIL", "FAIL")
  -- judged by the criterion E2.witness_received (specs/thresholds.yaml)
  check(n("witness_shortfall_bytes") > 0 and
        reason:find("witness_shortfall_bytes", 1, true),
        "the witness caught the inflated count (criterion witness_received)")
  check(n("rdma_errors") == 0, "no error counted: the lie is in the bytes")
elseif want == "fallback" then
  -- shards larger than a slab: every one over TCP, counted, still verified
  check(r.status == "FAIL", "FAIL")
  check(n("pool_fallbacks") > 0 and reason:find("pool_fallbacks", 1, true),
        "FAIL names the pool fallbacks")
  check(n("rdma_write_bytes") == 0, "nothing went over RDMA")
  check(n("witness_recv_bytes") > 0, "the peer verified the TCP shards")
elseif want == "die" then
  -- the peer dies mid-load: shards lost, counted as errors
  check(r.status == "FAIL", "FAIL")
  check(n("rdma_errors") > 0, "the lost shards counted as RDMA errors")
  check(n("rdma_write_bytes") > 0, "some bytes went over RDMA before the death")
elseif want == "absent" then
  -- no peer at all: nothing over RDMA, every shard an error
  check(r.status == "FAIL", "FAIL")
  check(n("rdma_errors") > 0, "errors counted")
  check(n("rdma_write_bytes") == 0, "no RDMA bytes")
  check(m.witness == "unreadable" and reason:find("witness = unreadable", 1, true),
        "the unreadable witness is named")
else
  error("unknown WANT " .. tostring(want))
end
os.exit(bad == 0 and 0 or 1)
