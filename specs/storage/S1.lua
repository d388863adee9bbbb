-- S1: the scratch layout (RUNBOOK "Second seed"): read-only.  The scratch
-- mounts (site.storage.scratch, else every mount on an md array) must be
-- XFS mounted noatime on md RAID0, laid out as the document advises: one
-- RAID0 of all NVMe when GPUs and NVMe share one NUMA node, NUMA-local
-- arrays (4+4) when they split across sockets, no member on the far
-- socket.  Drives are named by serial / WWN (lua/strata/lib/storage.lua).
local lib = require "strata.lib.storage"
local core = require "strata.core"

test {
  id = "S1", layer = "storage", title = "Scratch layout: XFS on NUMA-local RAID0",
  tags = { "storage", "layout" }, timeout = 30,
  headline = "layout_matches",
  run = function(t)
    local st = type(t.site.storage) == "table" and t.site.storage or {}
    local mounts
    if type(st.scratch) == "table" then
      mounts = {}
      for i, sc in ipairs(st.scratch) do mounts[i] = sc.path end
    end
    local r = lib.layout { root = st.sysfs_root, mounts = mounts }
    if #r.mounts == 0 and mounts then
      -- named, yet none found: say what became of each path
      local why = {}
      for _, f in ipairs(r.findings) do
        for _, m in ipairs(mounts) do
          if f.text:sub(1, #m + 1) == m .. ":" then why[#why + 1] = f.text end
        end
      end
      core.skip("no scratch mount: " .. table.concat(why, "; "))
    elseif #r.mounts == 0 then
      core.skip("no scratch mount: none named (site storage.scratch) and "
                .. "no mounted md array")
    end
    local not_xfs, noatime = 0, 0
    for _, m in ipairs(r.mounts) do
      if not m.xfs then not_xfs = not_xfs + 1 end
      if not m.noatime then noatime = noatime + 1 end
    end
    local rows = {}
    for _, a in ipairs(r.arrays) do
      for _, d in ipairs(a.members) do
        rows[#rows + 1] = { a.name, a.mountpoint, a.level,
                            a.chunk_bytes and a.chunk_bytes // 1024,
                            d.serial or "", d.wwid or "", d.model or "",
                            d.controller or "", d.numa_node,
                            d.far and "far socket" or "", d.name }
      end
    end
    t.table("Arrays and members", { "array", "mount", "level", "chunk KiB",
            "serial", "WWN", "model", "controller", "NUMA node", "flag",
            "kernel name" }, rows)
    local topo = {}
    for n = 0, math.max(0, r.nodes - 1) do
      topo[#topo + 1] = { n, r.nvme_by_node[n] or 0, r.gpus_by_node[n] or 0,
                          r.nics_by_node[n] or 0 }
    end
    t.table("Devices per NUMA node", { "node", "NVMe", "GPUs", "NICs" }, topo)
    t.note("advice: " .. r.advice_text)
    for _, f in ipairs(r.findings) do t.note(f.severity .. ": " .. f.text) end
    return {
      layout_matches = r.matches, advice = r.advice, arrays = #r.arrays,
      far_members = r.far_members, not_xfs = not_xfs,
      without_noatime = noatime, nvme = #r.drives, numa_nodes = r.nodes,
    }
  end,
}
