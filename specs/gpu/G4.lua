-- GPU copy bandwidth between pinned host memory and each GPU, judged
-- against the PCIe link NVML reports (its maximum generation and width:
-- an idle link trains down, so the current one reads low).  Each cell
-- sweeps the sizes on every GPU; the headline is the slowest GPU at the
-- largest size.  Method (CUDA events around each copy, median of the
-- repeats): docs/gpu.md.
local cuda = require "strata.cuda"

local SIZES = { 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30 }

test {
  id = "G4", layer = "gpu", title = "Host<->GPU copy bandwidth vs the PCIe link",
  tags = { "gpu", "bandwidth", "pcie" },
  needs = { "G2" },
  matrix = { dir = { "h2d", "d2h" } },
  headline = "gbps", units = { gbps = "GB/s", link_gbps = "GB/s" },
  timeout = 300,
  run = function(t)
    local devs = cuda.devices()      -- SKIP: no driver / GPU / CUDA build
    local inv = cuda.nvml()
    local rows, worst, best, link, linktext, verified = {}, nil, nil, nil, nil, true
    for _, d in ipairs(devs) do
      -- CUDA and NVML agree on the bus id, not always on the order.
      local g
      for _, x in ipairs(inv.gpus) do if x.bus_id == d.bus_id then g = x end end
      local lg = g and g.pcie_max_gbps
      if not lg then
        t.skip(("NVML reports no PCIe link for GPU %d (%s)"):format(d.index, d.bus_id))
      end
      if not link or lg < link then
        link = lg
        linktext = ("Gen%d x%d"):format(g.pcie_gen_max, g.pcie_width_max)
      end
      for _, size in ipairs(SIZES) do
        local r = cuda.copy_bw { dir = t.cell.dir, device = d.index, size = size,
                                 warmup = 3, repeats = 20 }
        verified = verified and r.verified
        rows[#rows + 1] = { d.index, size, r.gbps, r.gbps_best, r.median_ms,
                            lg, r.gbps / lg, r.verified }
        if size == SIZES[#SIZES] then
          worst = math.min(worst or r.gbps, r.gbps)
          best = math.max(best or r.gbps, r.gbps)
        end
      end
    end
    t.table("Copy bandwidth by size", { "GPU", "bytes", "GB/s (median)",
      "GB/s (best)", "ms (median)", "link GB/s", "of link", "verified" }, rows,
      { x = 2, y = { 3 }, title = t.cell.dir .. " bandwidth",
        x_title = "bytes", y_title = "GB/s" })
    return { gbps = worst, gbps_max = best, link_gbps = link, link = linktext,
             link_ratio = worst / link, gpus = #devs, verified = verified,
             size = SIZES[#SIZES] }
  end,
}
