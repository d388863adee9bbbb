-- A spec for verbs.sh "a peer killed mid-transfer, in a run": PK1 runs a
-- long bandwidth test against the agent (killed a few seconds in), PK2
-- runs after it and must PASS.  The peer comes from the environment
-- (PEER_HOST, PEER_PORT, PEER_TOKEN_FILE).
local verbs = require "strata.verbs"

test {
  id = "PK1", layer = "verbs", title = "bandwidth to a peer that is killed",
  timeout = 60,
  run = function()
    local f = assert(io.open(os.getenv("PEER_TOKEN_FILE")))
    local token = f:read("l")
    f:close()
    return verbs.bw { op = "write", size = 65536, duration = 40, tx_depth = 8,
                      timeout = 5,
                      peer = { host = os.getenv("PEER_HOST"),
                               port = tonumber(os.getenv("PEER_PORT")),
                               token = token } }
  end,
}

test {
  id = "PK2", layer = "verbs", title = "runs after it, unharmed",
  run = function() return { ok = 1 } end,
}
