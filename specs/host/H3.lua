-- H3: the counter sampler works on this host.  Every counter-based
-- criterion of the runbook (RDMA error deltas, PFC/ECN, CPU utilisation
-- next to bandwidth) trusts it, so prove it first: spin one thread for a
-- known CPU time (spin_s: the CPU it really had, which on a busy host takes
-- longer on the wall clock) and push a known number of bytes through a loopback TCP
-- connection (checked byte for byte), with the runner's sampler around the
-- cell; the CPU and lo counters must have moved at least that much.
local sys = require "strata.sys"

local BYTES = 64 << 20
local SPIN_S = 1.0

test {
  id = "H3", layer = "host", title = "Counter sampler sees known load",
  tags = { "host", "counters" }, timeout = 60,
  sample = { interval = 0.1, sources = { "cpu", "net", "ctxt", "softirq" } },
  headline = "loopback_gbps", units = { loopback_gbps = "Gbit/s" },
  run = function(t)
    local spun, cpu_s = sys.spin(SPIN_S)
    local lo = sys.tcp_loopback { bytes = BYTES, timeout = 30 }
    t.note(("spin: %d iterations, %.2f s of CPU; loopback: %d MiB in %.3f s")
           :format(spun, cpu_s, lo.bytes >> 20, lo.duration_s))
    return {
      spin_s = cpu_s,
      loopback_bytes = lo.bytes,
      loopback_corrupt = lo.corrupt,
      loopback_gbps = lo.gbps,
    }
  end,
}
