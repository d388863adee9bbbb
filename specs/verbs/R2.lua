-- RUNBOOK R2: host-memory RDMA WRITE bandwidth over RC, message size x QP
-- count, measured in C as perftest's ib_write_bw does (bytes completed /
-- (last completion - first post)).  PASS: >= 90% of the line rate (the
-- site's, else the port's from inventory) in the cells of 64 KiB and up
-- over 4 QPs and more (specs/thresholds.yaml's where); smaller cells are
-- measured and reported, not judged.  The far end is the agent
-- named by site.rdma.peer (`strata serve` there), else loopback on this
-- device.  The run's port counter deltas become metrics (counters.*) that
-- R6 judges.
local verbs = require "strata.verbs"
local vs = require "strata.lib.verbsite"

local KiB, MiB, GiB = 1024, 1048576, 1073741824

test {
  id = "R2", layer = "verbs", title = "Host RDMA WRITE bandwidth",
  needs = { "R1" },
  tags = { "rdma", "bandwidth" },
  timeout = 300,
  matrix = {
    size = { 4 * KiB, 64 * KiB, MiB, 8 * MiB, 64 * MiB, 256 * MiB, GiB },
    qps = { 1, 2, 4, 8, 16, 32 },
    order = { "size", "qps" },
  },
  headline = "bw_gbps",
  units = { bw_gbps = "Gbit/s", peak_gbps = "Gbit/s", line_rate_gbps = "Gbit/s",
            msg_rate_mpps = "Mpps", cpu_pct = "%" },
  run = function(t)
    local o = vs.bw_cell(t)
    local size = o.size
    local rate, src = vs.line_rate(t.site, verbs)
    if not rate then
      error("no line rate: the port reports none; set site.rdma.line_rate_gbps", 0)
    end
    for _, d in ipairs(verbs.inventory(o.device)) do
      local p = d.ports and d.ports[o.port or 1]
      if p and p.max_msg_sz and size > p.max_msg_sz then
        t.skip(("%s cannot send %d-byte messages (max_msg_sz %d)")
               :format(d.name, size, p.max_msg_sz))
      end
      break
    end
    o.peer = vs.peer(t.site)
    o.iters = t.scale.count(o.iters, "iterations")
    o.timeout = (t.site.rdma or {}).timeout_s   -- no completion this long: an error
    o.duration = t.scale.seconds(o.duration, "duration (s)")
    local res = verbs.bw(o)
    t.note(("line rate %.1f Gbit/s (%s); %s, GID %d, MTU %d, far end %s")
           :format(rate, src, res.device, res.gid_index, res.mtu, res.peer))
    return {
      bw_gbps = res.bw_gbps, peak_gbps = res.peak_gbps,
      msg_rate_mpps = res.msg_rate_mpps, cpu_pct = res.cpu_pct,
      line_rate_gbps = rate, pct_of_line = 100 * res.bw_gbps / rate,
      iters = res.iters, duration_s = res.duration_s, mtu = res.mtu,
      gid_index = res.gid_index, peer = res.peer,
      counters = res.counters,
    }
  end,
}
