-- Unit test of strata.lib.verbsite's ACK timeout choice (docs/verbs.md,
-- "ACK timeout"): as the site sets it, or "auto" from the packets in
-- flight and the line rate.  usage: strata lua qp_timeout.lua
local vs = require "strata.lib.verbsite"
local failed = 0
local function ok(c, fmt, ...)
  if not c then
    failed = failed + 1
    print("FAIL " .. fmt:format(...))
  end
end
local function auto(rate, o, n)
  return vs.set_qp_timeout({ rdma = { qp_timeout = "auto",
                                      line_rate_gbps = rate } }, o, n).qp_timeout
end
-- the lab's wire, 0.02 Gbit/s: 8 x 64 KiB = 512 KiB in flight take
-- 0.21 s, twice that is under 2^17 x 4.096 us = 0.54 s
ok(auto(0.02, { size = 65536, tx_depth = 8, qps = 1 }) == 17, "64 KiB x 8 x 1 QP")
-- 32 QPs: 16 MiB, 13.4 s doubled: 2^22 x 4.096 us = 17.2 s
ok(auto(0.02, { size = 65536, tx_depth = 8, qps = 32 }) == 22, "32 QPs")
-- one 64 MiB WRITE: rxe holds at most 128 packets of 4 KiB in flight
ok(auto(0.02, { size = 64 << 20, tx_depth = 8, qps = 1 }) == 17, "128-packet window")
-- an incast counts every sender's QPs
ok(auto(0.02, { size = 65536, tx_depth = 8, qps = 4 }, 8) == 20, "incast, 8 QPs")
-- a real NIC drains any window in well under 67 ms: perftest's 14 stays
ok(auto(100, { size = 1 << 20, tx_depth = 128, qps = 32 }) == 14, "100 Gbit/s")
ok(auto(nil, { qps = 4 }) == nil, "no line rate: the engine's default")
-- a number is kept as set; "auto" never reaches the engine as a string
ok(vs.local_opts({ rdma = { qp_timeout = 18 } }).qp_timeout == 18, "set: kept")
ok(vs.local_opts({ rdma = { qp_timeout = "auto" } }).qp_timeout == nil,
   "auto: not passed to verbs.lat")
if failed > 0 then os.exit(1) end
print("ok")
