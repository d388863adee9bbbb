-- The sampler's own CPU cost (ctest host_sampler_cost, label spec; also
-- run by hand: ./build/strata lua tests/host/sampler_cost.lua [SECONDS]).
-- The cost is the CPU time of the sampler's threads (CLOCK_THREAD_CPUTIME_ID,
-- r.cpu_s), not the process's: Lua and the sleep around it do not count.
-- Configurations:
--   live:  every local source of this host, per CPU, at 10 and 100 Hz;
--   +prom: the same plus a Prometheus source (a recorded Ceph mgr
--          exposition of 581 samples served by fixtures/host/http_fixture.py,
--          scraped every second): >= 500 series, the size the target
--          names: <= 0.5 % of one core at 10 Hz (docs/counters.md).
-- As a test it fails above 1 % (twice the target: CI machines are shared,
-- and a loaded host inflates CPU time through cache misses), and does not
-- bound sanitizer or Debug builds (STRATA_COST_UNBOUND=1, set by CMake).
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local h = require "helpers"
local c = require "strata.counters"
local core = require "strata.core"

local SECONDS = tonumber(arg[1]) or 3
local base, stop_server = h.http_fixture()
local worst
local ok, err = xpcall(function()
  local configs = {
    { "live", 0.1 }, { "live", 0.01 }, { "live+prom", 0.1 },
    { "live+prom", 0.01 },
  }
  for _, cfg in ipairs(configs) do
    local name, iv = cfg[1], cfg[2]
    local opts = { interval = iv, per_cpu = true }
    if name == "live+prom" then
      opts.prometheus = { { name = "ceph", url = base .. "/metrics",
                            timeout = 5 } }
    end
    local s = c.start(opts)
    core.sleep(SECONDS)
    local r = s:stop()
    local n = 0
    for _ in pairs(r.deltas) do n = n + 1 end
    local pct = 100 * r.cpu_s / r.duration_s
    print(("%-9s %5.0f Hz: %4d ticks, %3d series, %.4f CPU-s over %.2f s = "
           .. "%.3f %% of one core, %.0f us a tick"):format(name, 1 / iv,
           r.samples, n, r.cpu_s, r.duration_s, pct, 1e6 * r.cpu_s / r.samples))
    if name == "live+prom" then
      h.check(n >= 500, "series with the Prometheus source: %d", n)
      if iv == 0.1 then worst = pct end
    end
  end
  print(("10 Hz with >= 500 series: %.3f %% of one core (target <= 0.5: %s)")
        :format(worst, worst <= 0.5 and "met" or "missed"))
  if os.getenv("STRATA_COST_UNBOUND") ~= "1" then
    h.check(worst <= 1.0, "sampler cost at 10 Hz with >= 500 series: %.3f "
            .. "%% of one core (regression bound 1 %%)", worst)
  end
end, debug.traceback)
stop_server()
if not ok then error(err, 0) end
return h.finish("sampler_cost")
