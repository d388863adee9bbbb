-- strata.lib.pcie: PCIe capabilities read from a device's config space
-- (/sys/bus/pci/devices/<bdf>/config).  RUNBOOK R10 asks what
-- `lspci -vvv` shows as ACSCtl: with ReqRedir+ or CmpltRedir+ on a bridge,
-- peer-to-peer DMA (GPU -> NIC, GPUDirect RDMA) is forced up to the root
-- complex, or fails.  Reading the bytes directly needs no pciutils.
local M = {}

local ACS_ID = 0x000D
-- ACS control register bits, in lspci's order and spelling
M.ACS_BITS = { "SrcValid", "TransBlk", "ReqRedir", "CmpltRedir",
               "UpstreamFwd", "EgressCtrl", "DirectTrans" }

local function u16(b, off) return string.unpack("<I2", b, off + 1) end
local function u32(b, off) return string.unpack("<I4", b, off + 1) end

-- Walk the extended capability list (from 0x100).  Returns a list of
-- { id = n, offset = n }; empty when only the 256-byte legacy space is
-- readable (conventional PCI, or not root).
function M.ext_caps(cfg)
  local caps, off, seen = {}, 0x100, {}
  while off >= 0x100 and off + 4 <= #cfg and not seen[off] do
    seen[off] = true
    local h = u32(cfg, off)
    if h == 0 or h == 0xffffffff then break end
    caps[#caps + 1] = { id = h & 0xffff, version = (h >> 16) & 0xf, offset = off }
    off = (h >> 20) & 0xffc
    if off == 0 then break end
  end
  return caps
end

-- The ACS control of a config space blob: nil when the device has no ACS
-- capability, else { raw = n, SrcValid = bool, ReqRedir = bool, ... }.
function M.acs(cfg)
  for _, c in ipairs(M.ext_caps(cfg)) do
    if c.id == ACS_ID and c.offset + 8 <= #cfg then
      local ctl = u16(cfg, c.offset + 6)
      local r = { raw = ctl, cap = u16(cfg, c.offset + 4) }
      for i, name in ipairs(M.ACS_BITS) do r[name] = (ctl >> (i - 1)) & 1 == 1 end
      return r
    end
  end
end

-- "SrcValid+ TransBlk- ReqRedir- ..." as lspci prints ACSCtl
function M.acs_text(a)
  local parts = {}
  for _, name in ipairs(M.ACS_BITS) do
    parts[#parts + 1] = name .. (a[name] and "+" or "-")
  end
  return table.concat(parts, " ")
end

return M
