-- Run on a GPU host (strata lua tests/gpu/device_probe.lua OUTDIR): every
-- cuda primitive once, printing a summary and writing the NVML inventory
-- to OUTDIR/strata-nvml.json (the recorded fixture of tests/gpu).
local cuda = require "strata.cuda"
local cjson = require "cjson"
local out = arg[1] or "."

local function show(name, f)
  local ok, r = pcall(f)
  print(string.format("%-14s %s %s", name, ok and "ok " or "ERR",
        ok and cjson.encode(r) or tostring(r)))
  return ok and r or nil
end

print("built", cuda.built(), "available", cuda.available())
local inv = show("nvml", cuda.nvml)
if inv then
  local f = assert(io.open(out .. "/strata-nvml.json", "w"))
  f:write(cjson.encode(inv), "\n")
  f:close()
end
local devs = show("devices", cuda.devices) or {}
show("sample", cuda.nvml_sample)
show("xids", function() return cuda.xids { wait_ms = 100 } end)
for i = 0, #devs - 1 do
  show("kernel" .. i, function()
    return cuda.kernel_check { device = i, n = 1 << 24, rounds = 32 }
  end)
  for _, d in ipairs { "h2d", "d2h", "d2d" } do
    show(d .. i, function()
      return cuda.copy_bw { dir = d, device = i, size = 256 << 20 }
    end)
  end
  show("dmabuf" .. i, function()
    local b <close> = cuda.alloc { device = i, size = 64 << 20 }
    local r = b:dmabuf()
    r.ptr = b:ptr()
    return r
  end)
  show("buffer" .. i, function()
    local b <close> = cuda.alloc { device = i, size = 1 << 20 }
    b:write(12345, "strata-round-trip")
    local got = b:read(12345, 17)
    assert(got == "strata-round-trip", "read back " .. got)
    return { roundtrip = got }
  end)
end
if #devs >= 2 then
  show("p2p01", function()
    return cuda.copy_bw { dir = "p2p", device = 0, peer = 1, size = 256 << 20 }
  end)
end
