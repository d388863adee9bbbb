-- A fleet test fixture (tests/fleet only, not the runbook): one host-layer
-- cell that takes a few seconds, so that the fault tests can kill or stop
-- a node's `strata node` while it runs.  It measures what it did: the
-- seconds it slept on CLOCK_MONOTONIC.
local core = require "strata.core"

test {
  id = "FT1", layer = "host", title = "fleet fixture: a cell that takes a while",
  timeout = 10, headline = "slept_s",
  criteria = { slept_s = { min = 0.9 * 1 } },
  run = function(t)
    local want = (t.site.fleet_test or {}).sleep_s or 3
    local t0 = core.now()
    core.sleep(want)
    return { slept_s = core.now() - t0 }
  end,
}
