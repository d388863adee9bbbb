-- Run on a GPU host (strata lua tests/gpu/dmabuf_sizes.lua): export
-- cuda.alloc buffers of 1 B .. 64 MiB + 1 as dma-buf (issue 9 section 5;
-- before the fix every size that is not a whole number of pages failed
-- with CUDA_ERROR_INVALID_VALUE).  For each size: the export succeeds, the
-- range is whole host pages and covers the buffer, the kernel's own
-- /proc/self/fdinfo/<fd> names a dma-buf of that length, and the last
-- byte of the buffer round-trips.  Prints one line per size, exits 1 on
-- any failure.
local cuda = require "strata.cuda"
local PAGE = 4096
local sizes = { 1, 2, 128, 4095, 4096, 4097, 65535, 65536, 65537,
                (1 << 20) + 1, 64 << 20, (64 << 20) + 1 }
local dev = tonumber(arg[1]) or 0
local bad = 0

local function fdinfo(fd)
  local f = io.open(("/proc/self/fdinfo/%d"):format(fd))
  if not f then return nil end
  local t = f:read("a")
  f:close()
  return tonumber(t:match("\nsize:%s*(%d+)")), t:match("\nexp_name:%s*(%S+)")
end

print(("%-10s %-4s %7s %10s %10s %-10s %s"):format("size", "ok", "offset",
      "length", "fd_size", "exporter", "error"))
for _, n in ipairs(sizes) do
  local ok, r = pcall(function()
    local b <close> = cuda.alloc { device = dev, size = n }
    local d = b:dmabuf()
    assert(d.length % PAGE == 0, "length not whole pages")
    assert(d.offset + n <= d.length, "range does not cover the buffer")
    d.fd_size, d.exp = fdinfo(d.fd)
    assert(d.fd_size == nil or d.fd_size == d.length,
           "fdinfo size " .. tostring(d.fd_size) .. " ~= length")
    b:write(n - 1, "\x5a")
    assert(b:read(n - 1, 1) == "\x5a", "last byte did not round-trip")
    return d
  end)
  if not ok then bad = bad + 1 end
  print(("%-10d %-4s %7s %10s %10s %-10s %s"):format(n, ok and "ok" or "FAIL",
        ok and r.offset or "-", ok and r.length or "-",
        ok and tostring(r.fd_size) or "-", ok and tostring(r.exp) or "-",
        ok and "" or tostring(r)))
end
print(bad == 0 and "dmabuf_sizes: all sizes exported" or
      ("dmabuf_sizes: %d size(s) failed"):format(bad))
os.exit(bad == 0 and 0 or 1)
