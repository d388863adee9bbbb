-- GPU memory copy bandwidth: device-to-device on each GPU and
-- peer-to-peer between every ordered pair of GPUs (direct peer access
-- over NVLink/PCIe when the driver allows it, else staged by the driver).
-- Sizes swept; the headline is the slowest GPU or pair at 1 GiB.
local cuda = require "strata.cuda"

local SIZES = { 1 << 20, 16 << 20, 256 << 20, 1 << 30 }

test {
  id = "G5", layer = "gpu", title = "GPU memory and peer-to-peer copy bandwidth",
  tags = { "gpu", "bandwidth", "nvlink" },
  needs = { "G2" },
  matrix = { dir = { "d2d", "p2p" } },
  headline = "gbps", units = { gbps = "GB/s" },
  timeout = 600,
  run = function(t)
    local devs = cuda.devices()      -- SKIP: no driver / GPU / CUDA build
    local jobs = {}
    if t.cell.dir == "d2d" then
      for _, d in ipairs(devs) do jobs[#jobs + 1] = { d.index, d.index } end
    else
      if #devs < 2 then t.skip(("peer-to-peer needs 2 GPUs, this host has %d"):format(#devs)) end
      for _, a in ipairs(devs) do
        for _, b in ipairs(devs) do
          if a.index ~= b.index then jobs[#jobs + 1] = { a.index, b.index } end
        end
      end
    end
    local rows, worst, best, verified, nop2p = {}, nil, nil, true, 0
    for _, j in ipairs(jobs) do
      local direct
      for _, size in ipairs(SIZES) do
        local r = cuda.copy_bw { dir = t.cell.dir, device = j[1],
                                 peer = t.cell.dir == "p2p" and j[2] or nil,
                                 size = size, warmup = 3, repeats = 20 }
        verified = verified and r.verified
        direct = r.peer_access
        rows[#rows + 1] = { j[1], j[2], size, r.gbps, r.gbps_best, r.median_ms,
                            r.peer_access == nil and "" or tostring(r.peer_access),
                            r.verified }
        if size == SIZES[#SIZES] then
          worst = math.min(worst or r.gbps, r.gbps)
          best = math.max(best or r.gbps, r.gbps)
        end
      end
      if direct == false then nop2p = nop2p + 1 end
    end
    t.table("Copy bandwidth by size", { "from GPU", "to GPU", "bytes",
      "GB/s (median)", "GB/s (best)", "ms (median)", "peer access", "verified" },
      rows, { x = 3, y = { 4 }, title = t.cell.dir .. " bandwidth",
              x_title = "bytes", y_title = "GB/s" })
    return { gbps = worst, gbps_max = best, pairs = #jobs, verified = verified,
             pairs_without_p2p = nop2p, size = SIZES[#SIZES] }
  end,
}
