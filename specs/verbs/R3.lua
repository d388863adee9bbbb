-- RUNBOOK R3: host-memory RDMA WRITE latency (ping-pong as ib_write_lat:
-- half the round trip, samples kept whole).  PASS: median within the
-- site's target and a stable tail (p99 / median within
-- site.rdma.max_tail_ratio).
local verbs = require "strata.verbs"
local vs = require "strata.lib.verbsite"

test {
  id = "R3", layer = "verbs", title = "Host RDMA WRITE latency",
  needs = { "R1" },
  tags = { "rdma", "latency" },
  timeout = 120,
  matrix = { size = { 2, 64, 4096 } },
  headline = "median_us",
  units = { min_us = "us", median_us = "us", mean_us = "us", stdev_us = "us",
            p99_us = "us", p999_us = "us", max_us = "us" },
  run = function(t)
    local r = t.site.rdma or {}
    local o = vs.local_opts(t.site)
    o.op, o.size = "write", t.cell.size
    o.iters = t.scale.count(r.lat_iters or 1000, "iterations")
    o.timeout = r.timeout_s          -- no completion this long: an error
    o.peer = vs.peer(t.site)
    local res = verbs.lat(o)
    t.note(("%s, GID %d, MTU %d, inline %s, far end %s, %d samples")
           :format(res.device, res.gid_index, res.mtu, tostring(res.inline),
                   res.peer, res.iters))
    return {
      min_us = res.min_us, median_us = res.median_us, mean_us = res.mean_us,
      stdev_us = res.stdev_us, p99_us = res.p99_us, p999_us = res.p999_us,
      max_us = res.max_us, tail_ratio = res.p99_us / res.median_us,
      iters = res.iters, peer = res.peer, counters = res.counters,
    }
  end,
}
