-- H4: the node against the golden configuration the site file records
-- (`strata site init --golden`, docs/site.md): kernel, OS, NVIDIA driver,
-- CUDA and NCCL versions, rdma-core, GPU ECC and persistence mode and
-- clocks, each physical NIC's MTU, driver, firmware, PFC priorities and
-- trust order, each RDMA device's firmware.  One metric per setting,
-- differs.<setting> = 1 where the node differs, so the criterion
-- `differs.*` names each difference; the table shows golden and now.  A
-- setting the node cannot answer (no such library, tool or driver
-- support) is "not present": shown, never a difference by itself.  The
-- node's own settings are a table too, with or without a golden: a fleet
-- run compares them across nodes (docs/fleet.md, "Configuration").
local discover = require "strata.site.discover"
local cuda = require "strata.cuda"

local function text(v) return v == nil and "(absent)" or tostring(v) end

test {
  id = "H4", layer = "host", title = "Configuration matches the golden",
  tags = { "host", "golden" }, timeout = 60,
  headline = "differences",
  run = function(t)
    local ok, nv = pcall(cuda.nvml)
    local facts = discover.golden { nvml = ok and nv or nil,
                                    root = (t.site.host or {}).root }
    local mine = {}
    for _, s in ipairs(discover.settings(facts)) do
      mine[#mine + 1] = { s.key, tostring(s.value) }
    end
    t.table("Node configuration", { "setting", "this node" }, mine)
    local golden = t.site.golden
    if type(golden) ~= "table" then
      t.skip("no golden configuration in the site file (strata site init "
             .. "--golden records this node's)")
    end
    local rows, m, n, absent = {}, {}, 0, 0
    for _, d in ipairs(discover.golden_diff(golden, facts)) do
      if d.state == "not present" then
        absent = absent + 1
        t.note(("%s: golden %s, not present on this node (not judged)")
          :format(d.key, tostring(d.golden)))
      else
        m["differs." .. d.key] = d.state == "differs" and 1 or 0
      end
      if d.state == "differs" then
        n = n + 1
        t.note(("%s: golden %s, this node %s"):format(d.key,
          tostring(d.golden), text(d.now)))
      end
      rows[#rows + 1] = { d.key, tostring(d.golden),
        d.state == "not present" and "not present" or text(d.now),
        d.state == "same" and "" or d.state:upper() }
    end
    t.table("Golden configuration", { "setting", "golden", "this node",
      "" }, rows)
    if absent == #rows then
      t.skip(("none of the golden's %d settings is present on this node "
        .. "(no such library, tool or driver support)"):format(#rows))
    end
    m.differences, m.settings, m.not_present = n, #rows, absent
    return m
  end,
}
