-- In the guest: verbs.incast against `strata serve` agents.
-- usage: strata lua incast.lua TOKENFILE RECEIVER|- HOST:PORT [HOST:PORT ...]
-- RECEIVER "-": the receiving QPs live in this process; else HOST:PORT of
-- a receiver agent.  Checks: bytes moved and validated at the receiver,
-- per-sender figures, the receiving port's counters moved, bad input.
package.path = arg[0]:match("(.*/)") .. "?.lua;" .. package.path
local verbs = require "strata.verbs"
local core = require "strata.core"
local C = require "check"
local peer, token = C.peers(arg[1])

local receiver = arg[2] ~= "-" and peer(arg[2], "rx") or nil
local senders = {}
for i = 3, #arg do senders[#senders + 1] = peer(arg[i], "s" .. (i - 2)) end

-- wait for every agent
for _, s in ipairs(senders) do
  local e
  for _ = 1, 60 do
    e = C.raises(verbs.lat, { iters = 5, peer = { host = s.host,
                              port = s.port, token = s.token } })
    if not (e and e:find("cannot connect")) then break end
    core.sleep(0.5)
  end
  C.ok(e == nil, "agent %s reachable (%s)", s.host .. ":" .. s.port,
       tostring(e))
end

local n = #senders
for _, qps in ipairs { 1, 4 } do
  local r = verbs.incast { senders = senders, receiver = receiver,
                           size = 65536, qps = qps, iters = 16,
                           tx_depth = 16, validate = true, timeout = 10 }
  C.ok(r.validated == true and r.errors == 0 and
       r.bytes == n * qps * 16 * 65536 and #r.per_sender == n,
       "incast %d sender(s) x %d QPs: %.3f Gbit/s aggregate over %.3f s, "
       .. "%d bytes validated", n, qps, r.bw_gbps, r.window_s, r.bytes)
  C.ok(r.bw_gbps > 0 and r.min_gbps > 0 and r.fairness > 0 and
       r.fairness <= 1 and r.max_gbps >= r.min_gbps,
       "per sender %.3f .. %.3f Gbit/s, fairness %.2f, start skew %.2f ms, "
       .. "clock +-%.0f us", r.min_gbps, r.max_gbps, r.fairness,
       r.start_skew_ms, r.clock_err_us)
  for i, s in ipairs(r.per_sender) do
    C.ok(s.bytes == qps * 16 * 65536 and s.validated == true and
         s.name == "s" .. i and not s.error,
         "sender %s (%s): %.3f Gbit/s, %d bytes", s.name, s.agent, s.bw_gbps,
         s.bytes)
  end
  -- the aggregate window covers every sender's own window
  local sum = 0
  for _, s in ipairs(r.per_sender) do sum = sum + s.bytes end
  C.ok(sum == r.bytes, "aggregate bytes = sum of senders")
  if not receiver then
    local rx = (r.counters.rcvd_pkts or 0)
    C.ok(rx >= n * qps * 16, "receiving port counted %d packets", rx)
  end
end

-- duration mode
local r = verbs.incast { senders = senders, receiver = receiver,
                         size = 4096, qps = 2, duration = 0.5,
                         tx_depth = 16 }
C.ok(r.bytes > 0 and r.window_s > 0.3, "duration 0.5 s: %.3f s window, "
     .. "%d bytes", r.window_s, r.bytes)

-- bad input and a refusing sender, named with its step
local bad = { name = "wrong-token", host = senders[1].host,
              port = senders[1].port, token = "not-the-token", timeout = 5 }
local e = C.raises(verbs.incast, { senders = { senders[1], bad },
                                   receiver = receiver, iters = 4 })
C.ok(e and e:find("sender wrong%-token") and e:find("HELLO") and
     not e:find("not%-the%-token"),
     "a refusing sender is named with the step: %s", tostring(e))
local dead = { name = "nobody", host = senders[1].host, port = 1,
               token = token, timeout = 2 }
e = C.raises(verbs.incast, { senders = { dead }, receiver = receiver,
                             iters = 4 })
C.ok(e and e:find("sender nobody") and e:find("connect"),
     "an unreachable sender is named: %s", tostring(e))
e = C.raises(verbs.incast, { senders = senders, op = "read" })
C.ok(e and e:find("must be \"write\""), "op read refused: %s", tostring(e))
e = C.raises(verbs.incast, { senders = {} })
C.ok(e and e:find("senders"), "no senders refused: %s", tostring(e))
os.exit(C.finish())
