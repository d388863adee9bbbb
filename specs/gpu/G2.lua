-- RUNBOOK G2: a real kernel runs on every GPU and computes the right
-- answer.  Each GPU computes a 64-bit splitmix chain per element (integer
-- arithmetic, exact); the output is poisoned first and every element is
-- compared with the host's computation.  A wrong element is a FAIL.
local cuda = require "strata.cuda"

test {
  id = "G2", layer = "gpu", title = "CUDA kernel correct on every GPU",
  tags = { "gpu", "cuda" },
  headline = "gpus_ok",
  timeout = 120,
  run = function(t)
    local devs = cuda.devices()      -- SKIP: no driver / GPU / CUDA build
    local rows, ok, bad, gops = {}, 0, 0, math.huge
    for _, d in ipairs(devs) do
      local r = cuda.kernel_check { device = d.index, n = 1 << 24, rounds = 32 }
      if r.ok then ok = ok + 1 end
      bad = bad + r.mismatches
      gops = math.min(gops, r.gops)
      rows[#rows + 1] = { d.index, d.name, d.cc, d.sms, r.n, r.mismatches,
                          r.first_bad or "", r.kernel_ms, r.gops }
      if not r.ok then
        t.note(("GPU %d: %d wrong elements, first at %d"):format(
          d.index, r.mismatches, r.first_bad))
      end
    end
    t.table("Check kernel per GPU", { "GPU", "name", "compute capability",
      "SMs", "elements", "mismatches", "first bad", "kernel ms",
      "mix rounds/ns" }, rows)
    return { gpus = #devs, gpus_ok = ok, mismatches = bad,
             min_gops = gops, runtime = devs[1].runtime_version,
             driver = devs[1].driver_version }
  end,
}
