-- In the guest: verbs tests against a `strata serve` agent.
-- usage: strata lua peer.lua HOST PORT TOKENFILE [quick]
package.path = arg[0]:match("(.*/)") .. "?.lua;" .. package.path
local verbs = require "strata.verbs"
local core = require "strata.core"
local C = require "check"
local host, port, tokfile, quick = arg[1], tonumber(arg[2]), arg[3], arg[4]
local f = assert(io.open(tokfile))
local token = f:read("l")
f:close()
local peer = { host = host, port = port, token = token, timeout = 10 }
-- the two-guest wire (~50 Mbit/s) is slower than 67 ms a window: with
-- the default ACK timeout the QPs resend over and over (docs/verbs.md,
-- "ACK timeout"); 4.3 s, as tests/rxe/site-two.yaml has it
local QPT = 20

-- wait for the agent (it may still be starting)
local e
for _ = 1, 60 do
  e = C.raises(verbs.lat, { iters = 5, peer = peer })
  if not (e and e:find("cannot connect")) then break end
  core.sleep(0.5)
end
C.ok(e == nil, "agent reachable at %s:%d (%s)", host, port, tostring(e))

for _, op in ipairs { "write", "read", "send" } do
  for _, qps in ipairs { 1, 4 } do
    local r = verbs.bw { op = op, size = 65536, qps = qps, iters = 32,
                         validate = true, tx_depth = 16, peer = peer,
                         qp_timeout = QPT }
    C.ok(r.validated == true and r.msgs == 32 * qps and
         r.peer == host .. ":" .. port,
         "peer bw %s x%d QPs: %.3f Gbit/s, far end %s, validated", op, qps,
         r.bw_gbps, r.peer)
  end
end
-- R2's lab cell that failed under load (issue 19): 4 QPs x 1 MiB, 32
-- each, 32 in flight.  With the default 67 ms ACK timeout the 4 x 128
-- packets in flight take longer than that to cross this ~50 Mbit/s wire:
-- the requesters resent their windows again and again (2.6 x the packets,
-- ~400 ACK timeouts a run) and rxe failed completions on resent messages
-- (REM_INV_REQ_ERR, REM_OP_ERR / LOC_QP_OP_ERR) or none came for 10 s.
-- With an ACK timeout longer than the crossing, no ACK times out.
for _, op in ipairs { "write", "send" } do
  local size = op == "write" and 1048576 or 65536
  local r = verbs.bw { op = op, size = size, qps = 4, iters = 32,
                       tx_depth = op == "write" and 32 or 16, qp_timeout = QPT,
                       validate = true, timeout = 60, peer = peer }
  local c = r.counters
  C.ok(r.validated == true and r.msgs == 128 and r.qp_timeout == QPT,
       "peer bw %s %d x 4 QPs: %.3f Gbit/s, validated, qp_timeout %s",
       op, size, r.bw_gbps, tostring(r.qp_timeout))
  -- WRITE: sent_pkts = the data's packets, plus the far end's ACKs where
  -- both ends are one device (1 per 64 packets): < 1.1 x.  The resending
  -- QPs sent 2-2.6 x; one late ACK on a stalled guest resends <= 4 x 128.
  local data = 128 * size // 4096
  C.ok(op ~= "write" or (c.sent_pkts >= data and c.sent_pkts < 1.1 * data),
       "peer bw %s x 4 QPs: sent_pkts %s for the data's %d packets "
       .. "(ACK timeouts: completer_retry_err %s)", op, tostring(c.sent_pkts),
       data, tostring(c.completer_retry_err))
end
local r = verbs.bw { op = "write", size = 4096, qps = 2, iters = 32,
                     bidir = true, validate = true, peer = peer,
                     qp_timeout = QPT }
C.ok(r.validated and r.bw_gbps_peer > 0, "peer bidirectional write validated")
for _, op in ipairs { "write", "send", "read" } do
  local l = verbs.lat { op = op, size = 2, iters = 100, peer = peer,
                        qp_timeout = QPT }
  C.ok(l.iters == 100 and l.median_us > 0,
       "peer lat %s 2 B: median %.1f us, p99 %.1f us", op, l.median_us,
       l.p99_us)
end

-- refused and unreachable
e = C.raises(verbs.bw, { iters = 1, peer = { host = host, port = port,
                                            token = "not-the-token" } })
C.ok(e and e:find("authentication failed"), "wrong token refused: %s", e)
C.ok(e and not e:find(token, 1, true), "the token never appears in the error")
e = C.raises(verbs.bw, { iters = 1, peer = { host = host, port = port } })
C.ok(e and e:find("peer.token is required"), "no token: %s", e)
e = C.raises(verbs.bw, { iters = 1, peer = { host = host, port = port + 1,
                                            token = token, timeout = 2 } })
C.ok(e and e:find("cannot connect") and e:find(tostring(port + 1)),
     "unreachable peer: %s", e)
e = C.raises(verbs.bw, { iters = 1, peer = { host = host, port = port,
                                            token = token, device = "mlx5_3" } })
C.ok(e and e:find("SETUP") and e:find("mlx5_3"), "peer lacks the device: %s", e)
e = C.raises(verbs.bw, { iters = 1, peer = { host = host, port = port,
                                            token = token, gid_index = 900 } })
C.ok(e and e:find("GID index 900"), "peer GID index out of range: %s", e)
return C.finish()
