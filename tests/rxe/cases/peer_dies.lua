-- A long bandwidth run whose agent is killed mid-test: it must end with a
-- clear error naming the peer, well before the cell's deadline.
local verbs = require "strata.verbs"
local core = require "strata.core"
local f = assert(io.open(arg[3]))
local token = f:read("l")
f:close()
local t0 = core.now()
local ok, e = pcall(verbs.bw, { op = "write", size = 65536, duration = 60,
  tx_depth = 8, timeout = 5,
  peer = { host = arg[1], port = tonumber(arg[2]), token = token } })
print(("peer_dies: ok=%s after %.1f s: %s"):format(tostring(ok),
      core.now() - t0, tostring(e)))
return (not ok and core.now() - t0 < 30) and 0 or 1
