-- The S3-over-RDMA preflights (layer s3rdma, before any data moves):
-- read-only checks of each known cause of "the transfer works, the RDMA
-- counters stay at zero" or of a crash (minio/rdma-training
-- docs/troubleshooting.md), judged one by one and listed with a fix hint.
--   E3P before the host-memory rows (E3, B02, B04, B11, B13, B15)
--   E4P before the GPU-memory rows (E4, B06-B09)
-- The DC transport check makes a cuObject site on irdma/rxe FAIL here,
-- the lowest failed rung, instead of "RDMA not proven" after the fact.
-- strata never rewrites the site's configuration (lib/s3preflight.lua).
local lib = require "strata.lib.s3rdma"
local pre = require "strata.lib.s3preflight"

local MiB, GiB = 1048576, 1073741824

local function preflight(id, title, memory, max_size, max_conc)
  test {
    id = id, layer = "s3rdma", title = title,
    tags = { "s3rdma", "rdma", "preflight" }, timeout = 60,
    headline = "rdma_device",
    units = { ulimit_l_bytes = "B", pinned_bytes = "B",
              largest_buffer_bytes = "B" },
    -- each check's fact is a metric; its criterion (what ok means) is in
    -- specs/thresholds.yaml (E3P, E4P)
    run = function(t)
      local s = lib.site(t)
      local size = max_size
      if s.max_object_mb then size = math.min(size, s.max_object_mb * MiB) end
      local conc = math.min(max_conc, s.max_concurrency or max_conc)
      local f = pre.gather(t, s, memory, { buffer = size, concurrency = conc })
      local facts = pre.facts(f)
      local rows, out = {}, {}
      for _, c in ipairs(facts) do
        rows[#rows + 1] = { c.name, c.metric or "(engine, shown)",
                            c.value == nil and "" or tostring(c.value),
                            c.detail, c.fix, c.source }
        if c.metric then out[c.metric] = c.value end
        -- "this site's NIC cannot carry AIStor's S3 over RDMA ..." on the
        -- Summary too, when the criterion fails (issue 27)
        if c.explain and c.metric then t.explain(c.metric, c.detail) end
      end
      t.table("Preflight checks", { "check", "metric", "fact", "detail",
                                    "fix (when its criterion fails)",
                                    "source" }, rows)
      -- absent a fact the path needs, the test SKIPs; the facts go with
      -- the skip, so the Summary counts the checks their criteria fail
      local a = facts.absent[1]
      if a then
        t.skip(("preflight: %s absent: %s"):format(a.name, a.detail), out)
      end
      return out
    end,
  }
end

preflight("E3P", "S3-over-RDMA preflight, host memory", "host", GiB, 64)
preflight("E4P", "S3-over-RDMA preflight, GPU memory", "cuda", GiB, 256)
