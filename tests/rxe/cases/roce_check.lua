-- Check the journal of `strata run specs/roce` in guest a (one sender,
-- guest b, QPs 1 and 4; tests/rxe/site-roce.yaml).  Under TCG figures
-- vary: the checks assert that bytes crossed the wire, that the counter
-- deltas reached the journal, and that every verdict agrees with its
-- figures, not that the figures pass.
-- usage: strata lua roce_check.lua JOURNAL RUN_EXIT
package.path = arg[0]:match("(.*/)") .. "?.lua;" .. package.path
local cjson = require "cjson"
local C = require "check"

local cells = {}
for line in io.lines(arg[1]) do
  local r = cjson.decode(line)
  if r.type == "result" and r.id == "R7" then cells[#cells + 1] = r end
end
C.ok(#cells == 20, "R7: 20 cells journaled (%d)", #cells)
local measured, dcb_seen = 0, false
for _, r in ipairs(cells) do
  local c, m = r.cell, r.metrics or {}
  if c.senders > 1 then
    C.ok(r.status == "SKIP" and tostring(r.reason):find(
           ("%d senders needed, site.roce.senders lists 1"):format(c.senders),
           1, true),
         "R7 senders=%d qps=%d SKIP: %s", c.senders, c.qps, tostring(r.reason))
  elseif c.qps ~= 1 and c.qps ~= 4 then
    C.ok(r.status == "SKIP" and tostring(r.reason):find("site.roce.qps", 1,
                                                          true),
         "R7 qps=%d SKIP (site.roce.qps): %s", c.qps, tostring(r.reason))
  else
    measured = measured + 1
    C.ok(r.status == "PASS" or r.status == "FAIL",
         "R7 senders=1 qps=%d measured: %s %s", c.qps, r.status,
         tostring(r.reason))
    C.ok(m.bytes == c.qps * 16 * 65536 and m.bw_gbps > 0 and
         m.sender_errors == 0 and m.fairness == 1,
         "R7 qps=%d: %d bytes, %.3f Gbit/s aggregate", c.qps, m.bytes or -1,
         m.bw_gbps or -1)
    -- the receiving port saw the packets: rxe counts them in rcvd_pkts
    local rx = m["delta.rdma.rxe0.1.rcvd_pkts"]
    C.ok(rx and rx >= c.qps * 16, "R7 qps=%d: delta.rdma.rxe0.1.rcvd_pkts "
         .. "= %s", c.qps, tostring(rx))
    local eth = 0
    for k in pairs(m) do
      if k:find("^delta%.ethtool%.eth0%.") then eth = eth + 1 end
    end
    C.ok(eth > 0 and m["delta.net.eth0.rx_bytes"] and
         m["delta.net.eth0.rx_bytes"] >= m.bytes,
         "R7 qps=%d: %d ethtool eth0 deltas, net rx %s bytes", c.qps, eth,
         tostring(m["delta.net.eth0.rx_bytes"]))
    for _, k in ipairs { "drops", "pfc_pause_frames", "ecn_marks", "cnp",
                         "rdma_errors", "pause_without_congestion" } do
      C.ok(type(m[k]) == "number", "R7 qps=%d: metric %s = %s", c.qps, k,
           tostring(m[k]))
    end
    local bad = {}
    for _, ck in ipairs(r.checks or {}) do
      if not ck.ok then bad[#bad + 1] = ck.metric end
    end
    C.ok((r.status == "PASS") == (#bad == 0), "R7 qps=%d verdict %s "
         .. "agrees with its checks (failing: %s)", c.qps, r.status,
         table.concat(bad, ","))
    local limit
    for _, ck in ipairs(r.checks or {}) do
      if ck.metric == "incast_ratio" then limit = ck.limit end
    end
    C.ok(limit == 0.8 and math.abs(m.incast_ratio - m.bw_gbps / 0.05) < 1e-6,
         "R7 qps=%d: incast_ratio %.2f judged against 0.8", c.qps,
         m.incast_ratio or -1)
    local notes = table.concat(r.notes or {}, " | ")
    C.ok(notes:find("no pause/ecn/cnp", 1, true),
         "R7 qps=%d: the note says PFC/ECN cannot be verified: %s", c.qps,
         notes)
    if notes:find("dcb") then dcb_seen = true end
    for _, tb in ipairs(r.tables or {}) do
      if tb.name == "DCB settings" then dcb_seen = true end
    end
  end
end
C.ok(measured == 2, "R7: 2 cells measured (%d)", measured)
C.ok(dcb_seen, "R7: dcb captured or its absence noted once")
C.ok(tonumber(arg[2]) == 0 or tonumber(arg[2]) == 1,
     "strata run exited %s", arg[2])
os.exit(C.finish())
