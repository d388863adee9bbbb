-- In the guest: a sender agent killed mid-run is named with the step.
-- usage: strata lua incast_kill.lua TOKENFILE HOST:PORT VICTIM_HOST:PORT
-- (the case kills VICTIM's session process ~2 s after start)
package.path = arg[0]:match("(.*/)") .. "?.lua;" .. package.path
local verbs = require "strata.verbs"
local C = require "check"
local peer, token = C.peers(arg[1])
local t0 = os.time()
local e = C.raises(verbs.incast, { senders = { peer(arg[2], "alive"),
                                               peer(arg[3], "victim") },
                                   size = 65536, qps = 2, duration = 6,
                                   tx_depth = 16, deadline = 30 })
C.ok(e and e:find("sender victim", 1, true) and e:find("DONE", 1, true) and
     not e:find(token, 1, true),
     "a sender killed mid-run is named with the step: %s", tostring(e))
C.ok(os.time() - t0 < 20, "and the call returned within %d s",
     os.time() - t0)
os.exit(C.finish())
