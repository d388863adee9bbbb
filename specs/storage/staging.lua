-- S5-S7: the staging paths of the second source document, each leg
-- measured on its own and the path end to end (RUNBOOK "Second seed"):
--   S5 model staging   S3 GET at concurrency -> NVMe write -> read back
--                      into host memory (verified)
--   S6 NVMe -> GPU     O_DIRECT read into host memory, then the pinned
--                      host -> GPU copy (cuda.copy_bw h2d)
--   S7 checkpoint      GPU -> host (d2h), NVMe write, then multipart PUT
--                      at concurrency
-- How the legs join: strata's S3 engine GETs into and PUTs from memory,
-- not files, and the GPU copy is a separate call, so "end to end" here is
-- the serial path: bytes / (sum of the legs' times).  A real loader that
-- overlaps the legs can only be faster; a pipelined figure is not claimed.
-- cuFile (GPUDirect Storage) is a different layer (the document keeps it
-- apart from S3 over RDMA): S6 measures it beside the pinned path where
-- libcufile is present (cuda.cufile), naming GDS or compatibility mode.
local lib = require "strata.lib.storage"
local s3site = require "strata.lib.s3site"
local core = require "strata.core"

local MiB = 1024 * 1024

local function size_of(v, def)
  if type(v) == "number" then return v end
  local n, u = tostring(v or def):match("^(%d+)([KMGkmg]?)")
  local sh = ({ k = 10, m = 20, g = 30 })[(u or ""):lower()] or 0
  return math.tointeger(tonumber(n) * (1 << sh))
end

-- The staging figures (site.storage.staging, else the defaults below),
-- each through the site's scale: limits, which name every cut in the
-- result (docs/specs.md, "Scaling a run down").
local function staging(t, multipart)
  local st = t.site.storage
  local sg = type(st) == "table" and type(st.staging) == "table" and st.staging or {}
  local sc = lib.targets(t)[1]
  return {
    size = t.scale.bytes(size_of(sg.object_size, "1G"), "object size"),
    objects = t.scale.count(sg.objects or 8, "objects"),
    concurrency = t.scale.streams(sg.concurrency or 8, "concurrency"),
    part_size = multipart
      and t.scale.bytes(size_of(sg.part_size, "128M"), "part size") or nil,
  }, sc
end


test {
  id = "S5", layer = "storage", title = "Model staging: S3 -> NVMe -> host",
  tags = { "storage", "s3", "staging" }, timeout = 900, needs = { "S2", "S3" },
  sample = { interval = 0.5, sources = { "cpu", "disk", "net" } },
  headline = "staged_mibps",
  units = { staged_mibps = "MiB/s", get_mibps = "MiB/s",
            nvme_write_mibps = "MiB/s", nvme_read_mibps = "MiB/s" },
  run = function(t)
    if type(t.site.s3) ~= "table" then
      core.skip("no S3 endpoint in the site file (s3)")
    end
    local sg, sc = staging(t)
    local size, n = sg.size, sg.objects
    local cl = s3site.client(t, t.site.s3)
    local g = cl:run { op = "get", bucket = t.site.s3.bucket, size = size,
                       concurrency = sg.concurrency, count = n,
                       prepare = true, verify = true, warmup = 0,
                       prefix = "strata/S5/" }
    local total = g.bytes
    local w = lib.job(t, sc, { name = "S5", rw = "write", bs = "1M",
                               iodepth = 32, size = total, runtime = 0,
                               end_fsync = true })
    local r = lib.job(t, sc, { name = "S5", rw = "read", bs = "1M",
                               iodepth = 32, size = total, runtime = 0,
                               verify = true })
    local secs = g.elapsed_s + w.runtime_s + r.runtime_s
    t.table("Legs", { "leg", "bytes", "seconds", "MiB/s" }, {
      { "S3 GET (concurrency " .. sg.concurrency .. ")", g.bytes,
        g.elapsed_s, g.mibps },
      { "NVMe write 1M QD32", w.io_bytes, w.runtime_s, w.bw_mibps },
      { "NVMe read-back 1M QD32", r.io_bytes, r.runtime_s, r.bw_mibps },
      { "end to end (serial)", total, secs, total / secs / MiB } })
    return { get_mibps = g.mibps, nvme_write_mibps = w.bw_mibps,
             nvme_read_mibps = r.bw_mibps, staged_mibps = total / secs / MiB,
             get_errors = g.errors, verify_errors = r.verify_errors
                 + (g.verify_failures or 0) }
  end,
}

test {
  id = "S6", layer = "storage", title = "NVMe -> GPU load (pinned copy)",
  tags = { "storage", "gpu", "staging" }, timeout = 600, needs = { "S2" },
  headline = "gpu_load_mibps",
  units = { gpu_load_mibps = "MiB/s", nvme_read_mibps = "MiB/s",
            h2d_mibps = "MiB/s", cufile_mibps = "MiB/s" },
  run = function(t)
    local ok, cuda = pcall(require, "strata.cuda")
    if not ok or not cuda.available() then
      core.skip("no CUDA GPU on this host")
    end
    local sg, sc = staging(t)
    local size = sg.size
    local r = lib.job(t, sc, { name = "S6", rw = "read", bs = "1M",
                               iodepth = 32, size = size, runtime = 0,
                               verify = true })
    local c = cuda.copy_bw { dir = "h2d", size = math.min(size, 1 << 30),
                             verify = true }
    local h2d = c.gbps * 1e9 / MiB
    local e2e = 1 / (1 / r.bw_mibps + 1 / h2d)
    local m = { nvme_read_mibps = r.bw_mibps, h2d_mibps = h2d,
                gpu_load_mibps = e2e, verify_errors = r.verify_errors,
                copy_verified = c.verified }
    -- cuFile (GPUDirect Storage) on the same file, beside the pinned path:
    -- "gds" with the nvidia-fs module, else cuFile's compatibility mode
    local okf, f = pcall(cuda.cufile, { path = sc.path .. "/strata-S6.dat", size = size, verify = true })
    if okf then
      m.cufile_mibps, m.cufile_mode = f.mibps, f.mode
      m.cufile_version = f.version
      m.verify_errors = m.verify_errors + f.verify_errors
      t.note(("cuFile %s mode (libcufile %s, buffer %sregistered): %.0f MiB/s"
              .. " NVMe -> GPU, bytes compared with the file"):format(
              f.mode, f.version, f.buf_registered and "" or "not ",
              f.mibps))
    else
      t.note("cuFile (GPUDirect Storage) not measured: " .. tostring(
             type(f) == "table" and f.skip or f))
    end
    return m
  end,
}

test {
  id = "S7", layer = "storage", title = "Checkpoint: GPU -> NVMe -> S3 multipart",
  tags = { "storage", "s3", "checkpoint" }, timeout = 900,
  needs = { "S3" },
  sample = { interval = 0.5, sources = { "cpu", "disk", "net" } },
  headline = "checkpoint_mibps",
  units = { checkpoint_mibps = "MiB/s", put_mibps = "MiB/s",
            nvme_write_mibps = "MiB/s", d2h_mibps = "MiB/s",
            cufile_write_mibps = "MiB/s" },
  run = function(t)
    if type(t.site.s3) ~= "table" then
      core.skip("no S3 endpoint in the site file (s3)")
    end
    local sg, sc = staging(t, true)
    local size, n = sg.size, sg.objects
    local total = size * n
    local secs, rows, m = 0, {}, {}
    local ok, cuda = pcall(require, "strata.cuda")
    if ok and cuda.available() then
      local c = cuda.copy_bw { dir = "d2h", size = math.min(size, 1 << 30) }
      m.d2h_mibps = c.gbps * 1e9 / MiB
      secs = secs + total / (m.d2h_mibps * MiB)
      rows[#rows + 1] = { "GPU -> host (d2h, pinned)", total,
                          total / (m.d2h_mibps * MiB), m.d2h_mibps }
    else
      t.note("no CUDA GPU: the checkpoint starts in host memory")
    end
    if ok and cuda.available() then
      -- GPU -> file through cuFile (GDS or its compatibility mode), one
      -- object's worth, beside the D2H + O_DIRECT path (not in the sum)
      local okf, f = pcall(cuda.cufile, { path = sc.path .. "/strata-S7c.dat",
                                          dir = "write", size = size })
      if okf then
        m.cufile_write_mibps, m.cufile_mode = f.mibps, f.mode
        m.cufile_verify_errors = f.verify_errors
        rows[#rows + 1] = { "GPU -> file, cuFile " .. f.mode .. " (not in the sum)",
                            f.bytes, f.seconds, f.mibps }
      else
        t.note("cuFile write not measured: " .. tostring(
               type(f) == "table" and f.skip or f))
      end
      os.remove(sc.path .. "/strata-S7c.dat")
    end
    local w = lib.job(t, sc, { name = "S7", rw = "write", bs = "1M",
                               iodepth = 32, size = total, runtime = 0,
                               end_fsync = true })
    secs = secs + w.runtime_s
    rows[#rows + 1] = { "NVMe write 1M QD32", w.io_bytes, w.runtime_s,
                        w.bw_mibps }
    local cl = s3site.client(t, t.site.s3)
    local p = cl:run { op = "multipart", bucket = t.site.s3.bucket,
                       size = size, count = n,
                       part_size = sg.part_size,
                       concurrency = sg.concurrency, warmup = 0,
                       prefix = "strata/S7/" }
    secs = secs + p.elapsed_s
    rows[#rows + 1] = { "multipart PUT (concurrency "
                        .. sg.concurrency .. ")", p.bytes,
                        p.elapsed_s, p.mibps }
    rows[#rows + 1] = { "end to end (serial)", total, secs,
                        total / secs / MiB }
    t.table("Legs", { "leg", "bytes", "seconds", "MiB/s" }, rows)
    m.nvme_write_mibps = w.bw_mibps
    m.put_mibps = p.mibps
    m.put_errors = p.errors
    m.checkpoint_mibps = total / secs / MiB
    return m
  end,
}
