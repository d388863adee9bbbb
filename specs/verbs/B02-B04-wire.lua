-- RUNBOOK B02 / B04, their RDMA part: the raw-wire baseline beside the S3
-- transfers of the benchmark matrix.  B02 is host RDMA with 64 MiB
-- objects, one at a time; B04 256 MiB objects, 16 at a time.  The wire
-- figure is RDMA WRITE bandwidth at that message size and that many QPs
-- (one QP per concurrent transfer), against the same far end as R2.
-- Messages larger than the port's max_msg_sz are split into max_msg_sz
-- writes (an S3 object crosses the wire in many messages too).  Each
-- stream moves site.rdma.wire_objects objects (default 4).
local verbs = require "strata.verbs"
local vs = require "strata.lib.verbsite"

local MiB = 1048576

local function wire(t, object, conc)
  object = t.scale.bytes(object, "object size")
  conc = t.scale.streams(conc, "streams")
  local r = t.site.rdma or {}
  if r.wire_tests == false then
    t.skip("site.rdma.wire_tests is false")
  end
  local o = vs.local_opts(t.site)
  local size = object
  for _, d in ipairs(verbs.inventory(o.device)) do
    local p = d.ports and d.ports[o.port or 1]
    if p and p.max_msg_sz and size > p.max_msg_sz then size = p.max_msg_sz end
    break
  end
  o.op, o.size, o.qps = "write", size, conc
  o.tx_depth = r.tx_depth
  o.max_buffer = vs.max_buffer(t.site)
  o.peer = vs.peer(t.site)
  o.timeout = r.timeout_s          -- no completion this long: an error
  vs.set_qp_timeout(t.site, o)
  o.iters = t.scale.count(math.max(1, (r.wire_objects or 4) * object // size),
                          "iterations")
  local res = verbs.bw(o)
  local rate = vs.line_rate(t.site, verbs)
  t.note(("%d x %d MiB objects as %d-byte RDMA WRITEs on %d QPs, far end %s")
         :format(r.wire_objects or 4, object // MiB, size, conc, res.peer))
  return { wire_gbps = res.bw_gbps, msg_size = size, qps = conc,
           cpu_pct = res.cpu_pct, line_rate_gbps = rate,
           pct_of_line = rate and 100 * res.bw_gbps / rate or nil,
           counters = res.counters }
end

test {
  id = "B02-wire", layer = "verbs", title = "B02 raw wire: RDMA WRITE, 64 MiB, 1 stream",
  needs = { "R1" }, tags = { "bench", "rdma" }, timeout = 300,
  headline = "wire_gbps", units = { wire_gbps = "Gbit/s" },
  run = function(t) return wire(t, 64 * MiB, 1) end,
}

test {
  id = "B04-wire", layer = "verbs", title = "B04 raw wire: RDMA WRITE, 256 MiB, 16 streams",
  needs = { "R1" }, tags = { "bench", "rdma" }, timeout = 300,
  headline = "wire_gbps", units = { wire_gbps = "Gbit/s" },
  run = function(t) return wire(t, 256 * MiB, 16) end,
}
