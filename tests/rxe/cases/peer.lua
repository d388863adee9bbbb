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
                         validate = true, tx_depth = 16, peer = peer }
    C.ok(r.validated == true and r.msgs == 32 * qps and
         r.peer == host .. ":" .. port,
         "peer bw %s x%d QPs: %.3f Gbit/s, far end %s, validated", op, qps,
         r.bw_gbps, r.peer)
  end
end
local r = verbs.bw { op = "write", size = 4096, qps = 2, iters = 32,
                     bidir = true, validate = true, peer = peer }
C.ok(r.validated and r.bw_gbps_peer > 0, "peer bidirectional write validated")
for _, op in ipairs { "write", "send", "read" } do
  local l = verbs.lat { op = op, size = 2, iters = 100, peer = peer }
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
