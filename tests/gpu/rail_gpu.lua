-- Run on a GPU host (strata lua tests/gpu/rail_gpu.lua): the GPU each
-- NIC's rail would use in R4/R5 (lib/verbsite.lua gpu), on the real
-- machine.  Checks that every GPU CUDA numbers (cuda.devices() bus_id,
-- from cudaDeviceProp) is one sys.locality finds in sysfs, and that for
-- each RDMA device (else each NIC) the choice is a GPU CUDA sees, found
-- by affinity and not by the CUDA-device-0 fallback.  Prints one line per
-- GPU and device, exits 1 on any failure.
local cuda = require "strata.cuda"
local sys = require "strata.sys"
local aff = require "strata.lib.affinity"
local vs = require "strata.lib.verbsite"
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()

local cdevs = cuda.devices()
local loc = sys.locality()
local sysfs, rdma, nic = {}, {}, {}
for _, d in ipairs(loc.devices) do
  if d.kind == "gpu" then sysfs[d.pci] = d end
  if d.kind == "rdma" then rdma[#rdma + 1] = d.name end
  if d.kind == "nic" then nic[#nic + 1] = d.name end
end
check(#cdevs > 0, "CUDA sees %d GPU(s)", #cdevs)
for _, c in ipairs(cdevs) do
  local bus = aff.bus_id(c.bus_id)
  local s = sysfs[bus or "?"]
  check(s ~= nil, "CUDA %d %s bus_id %s is sysfs GPU %s (NUMA node %s)", c.index,
        c.name, tostring(c.bus_id), s and s.pci or "-", s and tostring(s.numa_node) or "-")
end
local devs = #rdma > 0 and rdma or nic
for _, name in ipairs(devs) do
  local list = {}
  for _, n in ipairs(devs) do list[#list + 1] = { device = n } end
  local idx, bus, why = vs.gpu({ rdma = { device = name, devices = list } }, cdevs, loc)
  check(bus ~= nil and why:find("nearest to " .. name, 1, true) ~= nil,
        "%s -> CUDA %d %s: %s", name, idx, tostring(bus), why)
end
check.done("rail_gpu")
