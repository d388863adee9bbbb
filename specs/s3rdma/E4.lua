-- RUNBOOK E4 (rung 5, GPU memory, "the key test"): S3 over RDMA straight
-- into GPU memory (GPUDirect RDMA: a dma-buf MR of a CUDA allocation).
-- The engine registers host memory only so far: with memory = "cuda" it
-- SKIPs with the reason (and no GPU + RDMA NIC pair exists on the machines
-- this was built on).  The spec is complete otherwise: same witnesses,
-- same criteria as E3 (T4: RDMA + GPU memory).
local lib = require "strata.lib.s3rdma"

local MiB, GiB = 1048576, 1073741824

test {
  id = "E4", layer = "s3rdma", title = "S3 over RDMA into GPU memory",
  needs = { "E3" },
  tags = { "s3rdma", "rdma", "gpu", "T4" }, timeout = 900,
  matrix = {
    size = { 64 * MiB, 256 * MiB, 1 * GiB },
    concurrency = { 1, 16, 64 },
    order = { "size", "concurrency" },
  },
  headline = "get.gbps", units = lib.UNITS,
  criteria = lib.criteria { "put.", "get." },
  run = function(t)
    return lib.put_then_get(t, t.cell.size, t.cell.concurrency, "cuda")
  end,
}
