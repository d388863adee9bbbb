-- On a GPU node: the counter sampler's NVML 'gpu' source around a timed
-- 1 GiB host-to-device copy (strata lua bench/gpu/sampler.lua).  Prints
-- min/mean/max of every gpu.* series; exit 1 when none was sampled.
local counters = require "strata.counters"
local cuda = require "strata.cuda"
local s = counters.start { interval = 0.2, sources = { "cpu", "gpu" } }
local r = cuda.copy_bw { dir = "h2d", device = 0, size = 1 << 30, warmup = 3, repeats = 20 }
local c = s:stop()
print("copy GB/s", r.gbps)
local names = {}
for k in pairs(c.stats) do if k:match("^gpu%.") then names[#names + 1] = k end end
table.sort(names)
for _, k in ipairs(names) do
  local st = c.stats[k]
  print(("%-28s min %12.1f mean %12.1f max %12.1f"):format(k, st.min, st.mean, st.max))
end
print("samples", c.samples, "errors", #(c.errors or {}))
return #names > 0 and 0 or 1
