-- RUNBOOK R10: is the GPU -> NIC peer-to-peer path open?  PCIe ACS on
-- every bridge between a GPU or an RDMA NIC and its root port must not
-- redirect peer requests or completions (lspci's "ReqRedir- CmpltRedir-"),
-- and the kernel needs a GPUDirect RDMA provider (nvidia_peermem, or
-- dma-buf, which R4 exercises).
local core = require "strata.core"
local pcie = require "strata.lib.pcie"

local SYS = "/sys/bus/pci/devices"

local function readf(path, n)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read(n or "a")
  f:close()
  return s
end

test {
  id = "R10", layer = "gpu-rdma", title = "GPUDirect P2P path (PCIe ACS)",
  tags = { "gpudirect", "pcie" },
  headline = "redirecting_bridges",
  run = function(t)
    local gpus, nics = {}, {}
    -- sysfs hex carries its 0x prefix ("0x030200\n"): tonumber reads it as is
    local function hex(path)
      return tonumber(((readf(path) or ""):match("0[xX]%x+")) or "") or 0
    end
    for _, bdf in ipairs(core.listdir(SYS)) do
      local class = hex(SYS .. "/" .. bdf .. "/class")
      local vendor = hex(SYS .. "/" .. bdf .. "/vendor")
      if vendor == 0x10de and (class >> 16) == 0x03 then gpus[#gpus + 1] = bdf end
      if (class >> 8) == 0x0200 or (class >> 8) == 0x0207 then
        if core.stat(SYS .. "/" .. bdf .. "/infiniband") == "dir" then
          nics[#nics + 1] = bdf
        end
      end
    end
    if #gpus == 0 then t.skip("no NVIDIA GPU on the PCI bus: no GPUDirect path here") end
    -- every bridge above a GPU or an RDMA NIC, from the sysfs device path
    local path_of, bridges, order = {}, {}, {}
    for _, list in ipairs { gpus, nics } do
      for _, bdf in ipairs(list) do
        local real = core.realpath(SYS .. "/" .. bdf) or ""
        for up in real:gmatch("(%x%x%x%x:%x%x:%x%x%.%x)/") do
          if not bridges[up] then
            bridges[up] = true
            order[#order + 1] = up
          end
          path_of[up] = (path_of[up] and (path_of[up] .. ",") or "") .. bdf
        end
      end
    end
    local rows, with_acs, redirecting, unreadable = {}, 0, 0, 0
    for _, bdf in ipairs(order) do
      local cfg = readf(SYS .. "/" .. bdf .. "/config")
      if not cfg or #cfg <= 256 then
        unreadable = unreadable + 1
      else
        local a = pcie.acs(cfg)
        if a then
          with_acs = with_acs + 1
          local bad = a.ReqRedir or a.CmpltRedir
          if bad then redirecting = redirecting + 1 end
          rows[#rows + 1] = { bdf, path_of[bdf], pcie.acs_text(a), bad and "REDIRECT" or "ok" }
        end
      end
    end
    if #order > 0 and unreadable == #order then
      t.skip("PCIe extended config space unreadable (strata must run as root)")
    end
    t.table("ACS on the GPU/NIC paths", { "bridge", "below it", "ACSCtl", "P2P" }, rows)
    return {
      gpus = #gpus, rdma_nics = #nics, bridges = #order,
      bridges_with_acs = with_acs, redirecting_bridges = redirecting,
      nvidia_peermem = core.stat("/sys/module/nvidia_peermem") == "dir",
    }
  end,
}
