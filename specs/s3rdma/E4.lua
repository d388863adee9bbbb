-- RUNBOOK E4 (rung 5, GPU memory, "the key test"): S3 over RDMA straight
-- into GPU memory (GPUDirect RDMA): each worker's buffer is a CUDA device
-- allocation exported as a dma-buf and registered with ibv_reg_dmabuf_mr;
-- PUT data is staged into it and GET data copied out of it to be checked,
-- outside the timed part.  No CUDA driver, no RDMA NIC, or a NIC that
-- cannot register dma-bufs: SKIP with the reason.  Same witnesses, same
-- criteria as E3 (T4: RDMA + GPU memory).
local lib = require "strata.lib.s3rdma"

local MiB, GiB = 1048576, 1073741824

test {
  id = "E4", layer = "s3rdma", title = "S3 over RDMA into GPU memory",
  needs = { "E3", "E4P" },
  tags = { "s3rdma", "rdma", "gpu", "T4" }, timeout = 900,
  matrix = {
    size = { 64 * MiB, 256 * MiB, 1 * GiB },
    concurrency = { 1, 16, 64 },
    order = { "size", "concurrency" },
  },
  headline = "get.gbps", units = lib.UNITS,
  run = function(t)
    return lib.put_then_get(t, t.cell.size, t.cell.concurrency, "cuda")
  end,
}
