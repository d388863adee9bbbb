-- A fleet test fixture (tests/fleet only, not the runbook): the fault
-- switch for FLAKY.  On the node named by site.fleet_test.flaky_node its
-- first try fails (it leaves a mark file there, under flaky_dir, named by
-- flaky_tag: one per fleet run), every later try passes; on any other
-- node every try passes.  It measures what it did: whether this try was
-- the one that failed on purpose.
local core = require "strata.core"

test {
  id = "FT3", layer = "host", title = "fleet fixture: a cell that fails its first try on one node",
  timeout = 10, headline = "failed_on_purpose",
  criteria = { failed_on_purpose = { max = 0 } },
  run = function(t)
    local ft = t.site.fleet_test or {}
    local node = core.hostname()
    if ft.flaky_node ~= node then return { failed_on_purpose = 0 } end
    local mark = ("%s/strata-ft3-%s"):format(ft.flaky_dir or "/tmp", ft.flaky_tag or "run")
    if core.stat(mark) then return { failed_on_purpose = 0 } end
    local f = assert(io.open(mark, "w"))
    f:write(node, "\n")
    f:close()
    return { failed_on_purpose = 1 }
  end,
}
