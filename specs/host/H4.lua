-- H4: the node against the golden configuration the site file records
-- (`strata site init --golden`, docs/site.md): kernel, OS, NVIDIA driver
-- and CUDA version, GPU ECC mode and max SM clock, each physical NIC's
-- MTU, driver and firmware, each RDMA device's firmware.  One metric per
-- setting, differs.<setting> = 1 where the node differs, so the criterion
-- `differs.*` names each difference; the table shows golden and now.
local discover = require "strata.site.discover"
local cuda = require "strata.cuda"

test {
  id = "H4", layer = "host", title = "Configuration matches the golden",
  tags = { "host", "golden" }, timeout = 60,
  headline = "differences",
  run = function(t)
    local golden = t.site.golden
    if type(golden) ~= "table" then
      t.skip("no golden configuration in the site file (strata site init "
             .. "--golden records this node's)")
    end
    local ok, nv = pcall(cuda.nvml)
    local facts = discover.golden { nvml = ok and nv or nil,
                                    root = (t.site.host or {}).root }
    local rows, m, n = {}, {}, 0
    for _, d in ipairs(discover.golden_diff(golden, facts)) do
      local same = d.now ~= nil and tostring(d.now) == tostring(d.golden)
      m["differs." .. d.key] = same and 0 or 1
      if not same then
        n = n + 1
        t.note(("%s: golden %s, this node %s"):format(d.key,
          tostring(d.golden), d.now == nil and "(absent)" or tostring(d.now)))
      end
      rows[#rows + 1] = { d.key, tostring(d.golden),
        d.now == nil and "(absent)" or tostring(d.now), same and "" or "DIFFERS" }
    end
    t.table("Golden configuration", { "setting", "golden", "this node",
      "" }, rows)
    m.differences, m.settings = n, #rows
    return m
  end,
}
