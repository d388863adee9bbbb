-- RUNBOOK R4: RDMA WRITE bandwidth from GPU memory (ib_write_bw
-- --use_cuda), same sizes and QP counts as R2, judged against R2's host
-- figure for the same cell; the sheet's table is size | QPs | host | GPU |
-- diff %.  GPU memory is exported by the cuda family as a dma-buf and
-- registered with ibv_reg_dmabuf_mr; where CUDA, a GPU or dma-buf
-- registration is absent the cell is SKIP with the exact reason.  The
-- GPU is the one on site.rdma.device's rail (lib/verbsite.lua gpu: named
-- in the site file, else the nearest by PCI path and NUMA node).
local verbs = require "strata.verbs"
local vs = require "strata.lib.verbsite"

local KiB, MiB, GiB = 1024, 1048576, 1073741824

test {
  id = "R4", layer = "gpu-rdma", title = "GPU-memory RDMA WRITE bandwidth vs host (R2)",
  needs = { "R1" },
  tags = { "rdma", "bandwidth", "gpudirect" },
  timeout = 300,
  matrix = {
    size = { 4 * KiB, 64 * KiB, MiB, 8 * MiB, 64 * MiB, 256 * MiB, GiB },
    qps = { 1, 2, 4, 8, 16, 32 },
    order = { "size", "qps" },
  },
  headline = "bw_gbps",
  units = { bw_gbps = "Gbit/s", host_bw_gbps = "Gbit/s", diff_pct = "%" },
  run = function(t)
    local o = vs.bw_cell(t)
    local size, qps = o.size, o.qps
    local buf <close>, gpu = vs.gpu_memory(t, verbs.buffer_bytes {
      size = size, qps = qps, max_buffer = o.max_buffer })
    o.peer = vs.peer(t.site)
    o.memory, o.dmabuf = "cuda", buf:dmabuf()
    local res = verbs.bw(o)
    local host = t.result("R2")
    local hb = host and host.bw_gbps
    local diff = hb and hb > 0 and 100 * (res.bw_gbps - hb) / hb or nil
    t.table("Host vs GPU", { "size", "QPs", "host Gbit/s", "GPU Gbit/s",
      "diff %" }, { { size, qps, hb or "", res.bw_gbps, diff or "" } })
    return {
      bw_gbps = res.bw_gbps, peak_gbps = res.peak_gbps, host_bw_gbps = hb,
      diff_pct = diff, cpu_pct = res.cpu_pct, msg_rate_mpps = res.msg_rate_mpps,
      counters = res.counters, gpu = gpu.gpu, gpu_bus_id = gpu.gpu_bus_id,
      gpu_pairing = gpu.gpu_pairing,
      gpu_link = gpu.gpu_link,
    }
  end,
}
