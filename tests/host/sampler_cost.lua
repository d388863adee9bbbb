-- The sampler's own CPU cost (not a ctest): ./build/strata lua tests/host/sampler_cost.lua
-- Samples every local source (per CPU too) for 3 s at two intervals and
-- reads this process's CPU time from /proc/self/stat around it.
local c = require "strata.counters"
local sys = require "strata.sys"
local function cpu()
  local f = sys.read("/proc/self/stat"):match("%) (.*)")
  local i, ut, st = 0
  for x in f:gmatch("%S+") do i = i + 1; if i == 12 then ut = tonumber(x) elseif i == 13 then st = tonumber(x) end end
  return (ut + st) / 100
end
for _, iv in ipairs{0.01, 0.1} do
  local a = cpu()
  local s = c.start{ interval = iv, per_cpu = true }
  local t0 = require("strata.core").now()
  os.execute("sleep 3")
  local r = s:stop()
  local n = 0; for _ in pairs(r.deltas) do n = n + 1 end
  print(("interval %.2f s: %d ticks, %d series, CPU %.3f s over %.1f s = %.2f%% of one core, %.0f us/tick")
    :format(iv, r.samples, n, cpu() - a, r.duration_s, 100 * (cpu() - a) / r.duration_s, 1e6 * (cpu() - a) / r.samples))
end
