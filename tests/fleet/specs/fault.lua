-- A fleet test fixture (tests/fleet only, not the runbook): a node health
-- probe the act and health tests break on purpose.  The node is faulty
-- while a file named after it (its short host name: the bed's nodes each
-- have their own UTS namespace; under --fleet k8s the pod's STRATA_NODE) exists in site.fleet_test.fault_dir; the
-- probe measures whether that file is absent.  What a real fault would
-- be (an Xid, a port down) is the runbook's own rungs; this one only
-- drives the verdict from outside, so that drain and resume can be seen.
local core = require "strata.core"

test {
  id = "FT2", layer = "host", title = "fleet fixture: a node fault a test can set",
  timeout = 10, headline = "healthy",
  criteria = { healthy = { eq = 1 } },
  run = function(t)
    local dir = (t.site.fleet_test or {}).fault_dir
    if not dir then core.skip("site.fleet_test.fault_dir is not set") end
    -- a pod's node (--fleet k8s) is STRATA_NODE, not the pod's host name
    local node = os.getenv("STRATA_NODE") or core.hostname():gsub("%..*$", "")
    return { healthy = core.stat(dir .. "/" .. node) == nil and 1 or 0 }
  end,
}
