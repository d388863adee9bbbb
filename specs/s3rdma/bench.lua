-- RUNBOOK benchmark matrix (section 31), the RDMA rows: B02/B04 (host
-- RDMA), B06-B09 (GPU RDMA: a dma-buf MR of CUDA memory; SKIP with the
-- reason where no GPU + GPUDirect-capable NIC pair exists), B11 (RDMA GET 256 MiB x 64), B13 (RDMA PUT 256 MiB x 64), B15
-- (multipart over RDMA UploadPart, 4 GiB, part size x concurrency).
-- Every phase is proven (reply, landed bytes, server counters) and judged
-- by the S3-over-RDMA PASS policy (specs/thresholds.yaml).  Rows are scaled down
-- to site.s3rdma.max_object_mb / max_concurrency where a site sets them.
local lib = require "strata.lib.s3rdma"

local MiB, GiB = 1048576, 1073741824

local function row(id, title, size, conc, memory, tags)
  test {
    id = id, layer = "s3rdma", title = title, tags = tags, timeout = 900,
    needs = { memory == "cuda" and "E4P" or "E3P" },
    headline = "get.gbps", units = lib.UNITS,
    run = function(t) return lib.put_then_get(t, size, conc, memory) end,
  }
end

row("B02", "Host RDMA, 64 MiB objects, 1 stream", 64 * MiB, 1, "host",
    { "s3rdma", "rdma", "bench", "T2" })
row("B04", "Host RDMA, 256 MiB objects, 16 streams", 256 * MiB, 16, "host",
    { "s3rdma", "rdma", "bench", "T2" })
row("B06", "GPU RDMA, 256 MiB objects, 16 streams", 256 * MiB, 16, "cuda",
    { "s3rdma", "rdma", "bench", "gpu", "T4" })
row("B07", "GPU RDMA, 1 GiB objects, 16 streams", GiB, 16, "cuda",
    { "s3rdma", "rdma", "bench", "gpu", "T4" })
row("B08", "GPU RDMA, 1 GiB objects, 64 streams", GiB, 64, "cuda",
    { "s3rdma", "rdma", "bench", "gpu", "T4" })
row("B09", "GPU RDMA, 1 GiB objects, 256 streams", GiB, 256, "cuda",
    { "s3rdma", "rdma", "bench", "gpu", "T4" })

-- One-direction rows: objects for B11 are written over HTTP first.
test {
  id = "B11", layer = "s3rdma", needs = { "E3P" }, title = "S3 RDMA GET, 256 MiB x 64",
  tags = { "s3rdma", "rdma", "bench" }, timeout = 900,
  headline = "get.gbps", units = lib.UNITS,
  run = function(t)
    local cl <close>, s = lib.client(t)
    local sz, cc = lib.scale(t, s, 256 * MiB, 64)
    local out, prep = {}, {}
    lib.phase(t, cl, s, { mode = "tcp", op = "put", size = sz,
                          concurrency = math.min(cc, 8), objects = cc,
                          requests = cc, readback = false }, "prep.", prep)
    if prep["prep.failed"] ~= 0 then
      error("writing the objects over HTTP failed", 0)
    end
    lib.phase(t, cl, s, { mode = "rc", op = "get", size = sz,
                          concurrency = cc, objects = cc }, "get.", out)
    return out
  end,
}

test {
  id = "B13", layer = "s3rdma", needs = { "E3P" }, title = "S3 RDMA PUT, 256 MiB x 64",
  tags = { "s3rdma", "rdma", "bench" }, timeout = 900,
  headline = "put.gbps", units = lib.UNITS,
  run = function(t)
    local cl <close>, s = lib.client(t)
    local sz, cc = lib.scale(t, s, 256 * MiB, 64)
    local out = {}
    lib.phase(t, cl, s, { mode = "rc", op = "put", size = sz,
                          concurrency = cc, objects = cc, requests = cc,
                          readback = true }, "put.", out)
    return out
  end,
}

test {
  id = "B15", layer = "s3rdma", needs = { "E3P" }, title = "Multipart RDMA, 4 GiB objects",
  description = "4 GiB uploads whose parts go by RDMA UploadPart "
             .. "(hipobj-rc-v2 target ?partNumber=N&uploadId=ID), created "
             .. "and completed over HTTP, read back byte for byte.",
  tags = { "s3rdma", "rdma", "bench", "multipart" }, timeout = 1200,
  matrix = { part_size = { 64 * MiB, 128 * MiB, 256 * MiB, 512 * MiB },
             concurrency = { 1, 4, 16 },
             order = { "part_size", "concurrency" } },
  headline = "mp.gbps", units = lib.UNITS,
  run = function(t)
    local cl <close>, s = lib.client(t)
    local size, cc = lib.scale(t, s, 4 * GiB, t.cell.concurrency)
    local part = t.cell.part_size
    if size < 4 * GiB then        -- scaled: keep the part count of the row
      part = math.max(5 * MiB, size * part // (4 * GiB))
      if part > size then part = size end
    end
    local out = {}
    lib.phase(t, cl, s, { mode = "rc", op = "multipart", size = size,
                          part_size = part, concurrency = cc, objects = 1,
                          readback = true }, "mp.", out)
    out["mp.part_size"] = part
    return out
  end,
}
