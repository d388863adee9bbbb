-- RUNBOOK G1: GPU detection.  NVML's inventory: count (against the site
-- file's gpu.count), names and UUIDs (as nvidia-smi -L), memory, ECC
-- errors, retired and remapped pages, PCIe link, and Xid events (the
-- kernel log, plus NVML's event stream for a short window).
local cuda = require "strata.cuda"

local function sum(gpus, key)
  local s, seen = 0, false
  for _, g in ipairs(gpus) do
    if g[key] then s, seen = s + g[key], true end
  end
  return seen and s or nil
end

test {
  id = "G1", layer = "gpu", title = "GPU detection: count, names, Xid/ECC errors",
  tags = { "gpu", "inventory" },
  headline = "gpus",
  timeout = 60,
  run = function(t)
    local inv = cuda.nvml()          -- SKIP: no driver / no NVML
    local want = t.site.gpu and t.site.gpu.model
    local rows, mismatches = {}, 0
    for _, g in ipairs(inv.gpus) do
      if want and not g.name:find(want, 1, true) then
        mismatches = mismatches + 1
      end
      rows[#rows + 1] = {
        g.index, g.name, g.uuid, g.bus_id,
        g.mem_total and (g.mem_total / 2^30) or "",
        g.ecc_enabled == nil and "n/a" or tostring(g.ecc_enabled),
        g.ecc_uncorrected_volatile or "", g.ecc_uncorrected_aggregate or "",
        g.ecc_corrected_volatile or "",
        (g.retired_sbe or 0) + (g.retired_dbe or 0),
        g.remapped_unc or "", g.remap_pending or "",
        ("Gen%s x%s (max Gen%s x%s)"):format(g.pcie_gen or "?",
          g.pcie_width or "?", g.pcie_gen_max or "?", g.pcie_width_max or "?"),
        g.pcie_replay or "", g.temp_c or "", g.power_w or "",
      }
    end
    t.table("GPUs (NVML)", { "GPU", "name", "UUID", "bus id", "memory GiB",
      "ECC on", "ECC uncorr. (volatile)", "ECC uncorr. (aggregate)",
      "ECC corr. (volatile)", "retired pages", "remapped rows (uncorr.)",
      "remap pending", "PCIe link", "PCIe replays", "temp C", "power W" }, rows)
    if not want then
      t.note("site file has no gpu.model: names recorded, not compared")
    end
    -- Xid: the kernel log holds past events; NVML only new ones.
    local x = cuda.xids { wait_ms = 200 }
    local xids
    if x.kmsg_xids or x.nvml_xids then
      xids = (x.kmsg_xids or 0) + (x.nvml_xids or 0)
    end
    if x.kmsg_error then t.note("kernel log not read: " .. x.kmsg_error) end
    if x.nvml_error then t.note("NVML Xid events: " .. x.nvml_error) end
    if x.kmsg_last then t.note("last Xid in the kernel log: " .. x.kmsg_last) end
    local names = {}
    for _, g in ipairs(inv.gpus) do names[g.name] = (names[g.name] or 0) + 1 end
    local parts = {}
    for n, c in pairs(names) do parts[#parts + 1] = ("%d x %s"):format(c, n) end
    table.sort(parts)
    return {
      gpus = inv.count, models = table.concat(parts, ", "),
      driver = inv.driver, cuda_driver = inv.cuda_driver,
      model_mismatches = mismatches,
      ecc_uncorrected = sum(inv.gpus, "ecc_uncorrected_volatile") or 0,
      ecc_uncorrected_aggregate = sum(inv.gpus, "ecc_uncorrected_aggregate"),
      ecc_corrected = sum(inv.gpus, "ecc_corrected_volatile"),
      retired_pages = (sum(inv.gpus, "retired_sbe") or 0)
                      + (sum(inv.gpus, "retired_dbe") or 0),
      retired_pages_pending = sum(inv.gpus, "retired_pending") or 0,
      remapped_rows = sum(inv.gpus, "remapped_unc"),
      remap_failures = sum(inv.gpus, "remap_failure") or 0,
      pcie_replays = sum(inv.gpus, "pcie_replay"),
      xids = xids,
    }
  end,
}
