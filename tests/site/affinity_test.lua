-- affinity_test.lua (strata lua): the GPU each RDMA rail uses in R4/R5
-- (lib/affinity.lua, lib/verbsite.lua gpu) on the constructed 8-GPU,
-- 4-rail tree fixtures/host/two-rail (tests/host/make_two_rail.sh) and the
-- two-socket one: nearest by NUMA node and PCI path, one GPU per rail,
-- the site file's choice first, a GPU CUDA does not see refused by name.
-- CUDA's device list is given here as cuda.devices() returns it (index,
-- bus_id "%04x:%02x:%02x.0" from cudaDeviceProp, engine/cuda/cuda.c).
local here = arg[0]:match("^(.*)/")
local check = dofile(here .. "/../lib/check.lua")()
local aff = require "strata.lib.affinity"
local vs = require "strata.lib.verbsite"
local sys = require "strata.sys"

local rail = sys.locality { root = here .. "/../../fixtures/host/two-rail" }
local two = sys.locality { root = here .. "/../../fixtures/host/two-socket" }

-- the tree's own PCI paths: each NIC shares a PEX890xx switch with two
-- GPUs, a host bridge with two more, and nothing below the socket with four
local by = {}
for _, d in ipairs(rail.devices) do by[d.name] = d end
check(aff.link(by.irdma0, by["0000:03:00.0"]) == "PXB", "irdma0 - GPU on its switch: PXB")
check(aff.link(by.irdma0, by["0000:08:00.0"]) == "PHB", "irdma0 - GPU on its node's other root port: PHB")
check(aff.link(by.irdma0, by["0000:83:00.0"]) == "SYS", "irdma0 - GPU on the other socket: SYS")
check(aff.link({ path = { "pci0000:00", "0000:00:01.0", "0000:01:00.0" }, numa_node = 0 },
               { path = { "pci0000:00", "0000:00:01.0", "0000:01:00.1" }, numa_node = 0 })
      == "PIX", "two functions below one port: PIX")
check(aff.link({ path = { "pci0000:00", "0000:00:01.0" }, numa_node = 0 },
               { path = { "pci0000:40", "0000:40:01.0" }, numa_node = 0 })
      == "NODE", "two host bridges of one node: NODE")

-- one GPU per rail, each on its NIC's switch
local names = { "irdma0", "irdma1", "irdma2", "irdma3" }
local pick = aff.pair_gpus(rail, names)
local want = { irdma0 = "0000:03:00.0", irdma1 = "0000:08:00.0",
               irdma2 = "0000:83:00.0", irdma3 = "0000:88:00.0" }
for _, n in ipairs(names) do
  check(pick[n] and pick[n].pci == want[n] and pick[n].link == "PXB",
        "%s -> %s PXB (got %s)", n, want[n], pick[n] and pick[n].pci or "none")
end
check(pick.irdma2.why == "PXB: both below 0000:81:00.0, NUMA node 1",
      "why names the shared bridge and the node: %s", pick.irdma2.why)

-- two NICs nearest one GPU: the second gets the next nearest, not the same
local mini = { devices = {
  { kind = "gpu", name = "g0", pci = "g0", numa_node = 0, path = { "r0", "p1", "g0" } },
  { kind = "gpu", name = "g1", pci = "g1", numa_node = 0, path = { "r0", "p2", "g1" } },
  { kind = "rdma", name = "n0", pci = "n0", numa_node = 0, path = { "r0", "p1", "n0" } },
  { kind = "rdma", name = "n1", pci = "n1", numa_node = 0, path = { "r0", "p1", "n1" } },
  { kind = "rdma", name = "n2", pci = "n2", numa_node = 0, path = { "r0", "p1", "n2" } },
} }
local m = aff.pair_gpus(mini, { "n0", "n1", "n2" })
check(m.n0.pci == "g0" and m.n1.pci == "g1", "second rail takes the free GPU")
check(m.n2.pci == "g0" and m.n2.why:find("shared with n0", 1, true),
      "more rails than GPUs: the nearest, said shared (%s)", m.n2.why)
check(next(aff.pair_gpus({ devices = { mini.devices[3] } }, { "n0" })) == nil,
      "no GPU: no pairing")

-- R4/R5's choice (verbsite.gpu): CUDA numbers the GPUs its own way
local cdevs = {}
for i, bus in ipairs { "0000:83:00.0", "0000:84:00.0", "0000:88:00.0", "0000:89:00.0",
                       "0000:03:00.0", "0000:04:00.0", "0000:08:00.0", "0000:09:00.0" } do
  cdevs[i] = { index = i - 1, bus_id = bus }
end
local devs = {}
for _, n in ipairs(names) do devs[#devs + 1] = { device = n, port = 1 } end
local site = { rdma = { device = "irdma2", devices = devs } }
local idx, bus, why = vs.gpu(site, cdevs, rail)
check(idx == 0 and bus == "0000:83:00.0" and why:find("nearest to irdma2", 1, true),
      "irdma2's rail: CUDA 0 = 0000:83:00.0 (%s %s %s)", idx, bus, why)
site.rdma.device = "irdma1"
idx, bus = vs.gpu(site, cdevs, rail)
check(idx == 6 and bus == "0000:08:00.0", "irdma1's rail: CUDA 6 = 0000:08:00.0 (%s)", idx)

-- CUDA_VISIBLE_DEVICES hides the nearest: the nearest CUDA sees
local visible = { { index = 0, bus_id = "0000:04:00.0" }, { index = 1, bus_id = "0000:89:00.0" } }
idx, bus = vs.gpu({ rdma = { device = "irdma2", devices = devs } }, visible, rail)
check(idx == 1 and bus == "0000:89:00.0", "hidden GPUs skipped: irdma2 -> %s", bus)

-- the site file's choice first: the device's entry, then rdma.gpu;
-- NVML's 8-digit domain reads the same
devs[2].gpu = "00000000:89:00.0"
site = { rdma = { device = "irdma1", devices = devs, gpu = 5 } }
idx, bus, why = vs.gpu(site, cdevs, rail)
check(idx == 3 and bus == "0000:89:00.0" and why == "site.rdma.devices[2].gpu",
      "devices[2].gpu wins (%s %s)", idx, why)
site.rdma.device = "irdma3"
idx, bus, why = vs.gpu(site, cdevs, rail)
check(idx == 5 and why == "site.rdma.gpu", "rdma.gpu for a device without one (%s)", idx)
devs[2].gpu = "0000:c1:00.0"
site.rdma.device = "irdma1"
local ok, err = pcall(vs.gpu, site, cdevs, rail)
check(not ok and err:find("site.rdma.devices[2].gpu: 0000:c1:00.0 is no GPU CUDA sees", 1, true),
      "an absent GPU is named: %s", tostring(err))
ok, err = pcall(vs.gpu, { rdma = { gpu = 8 } }, cdevs, rail)
check(not ok and err:find("site.rdma.gpu: 8, but CUDA sees 8 device(s)", 1, true),
      "an index past CUDA's: %s", tostring(err))

-- one NIC, two GPUs (two-socket): the GPU of the NIC's node; no locality:
-- CUDA device 0, said why
idx, bus = vs.gpu({ rdma = { device = "irdma0" } },
  { { index = 0, bus_id = "0000:81:00.0" }, { index = 1, bus_id = "0000:01:00.0" } }, two)
check(idx == 1 and bus == "0000:01:00.0", "two-socket: irdma0 -> its node's GPU (%s)", bus)
idx, bus, why = vs.gpu({ rdma = { device = "irdma0" } }, { { index = 0, bus_id = "0000:81:00.0" } })
check(idx == 0 and why:find("no PCI path from irdma0", 1, true), "no locality: 0 (%s)", why)

check.done("affinity_test")
