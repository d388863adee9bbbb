-- RUNBOOK R5: RDMA latency with GPU memory.  WRITE ping-pong spins on the
-- receive buffer, which the CPU cannot do on GPU memory, so R5 measures
-- RDMA READ into GPU memory (a full READ per sample) and SEND/RECV; PASS:
-- a stable tail (p99 / median within site.rdma.max_tail_ratio).
local verbs = require "strata.verbs"
local vs = require "strata.lib.verbsite"

test {
  id = "R5", layer = "gpu-rdma", title = "GPU-memory RDMA READ latency",
  needs = { "R1" },
  tags = { "rdma", "latency", "gpudirect" },
  timeout = 120,
  matrix = { size = { 2, 4096 } },
  headline = "median_us",
  run = function(t)
    local r = t.site.rdma or {}
    local buf <close>, gpu = vs.gpu_memory(t, verbs.buffer_bytes {
      size = t.cell.size, qps = 1 })
    local o = vs.local_opts(t.site)
    o.op, o.size, o.iters = "read", t.cell.size, r.lat_iters or 1000
    o.peer = vs.peer(t.site)
    o.memory, o.dmabuf = "cuda", buf:dmabuf()
    local res = verbs.lat(o)
    return {
      min_us = res.min_us, median_us = res.median_us, mean_us = res.mean_us,
      p99_us = res.p99_us, p999_us = res.p999_us, max_us = res.max_us,
      tail_ratio = res.p99_us / res.median_us, counters = res.counters,
      gpu = gpu.gpu, gpu_bus_id = gpu.gpu_bus_id, gpu_pairing = gpu.gpu_pairing,
      gpu_link = gpu.gpu_link,
    }
  end,
}
