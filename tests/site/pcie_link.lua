-- pcie_link.lua (strata lua): the PCIe link rates R1 measures for the
-- hardware packs (lib/pcie.lua), on the trees of fixtures/host/packs and
-- on links written here: Linux's encodings (PCIE_SPEED2MBS_ENC), a link
-- trained below its capability, a 400 Gb/s port behind Gen4 x16.
local pcie = require "strata.lib.pcie"
local sys = require "strata.sys"
local bad = 0
local function check(c, what)
  print((c and "ok   " or "FAIL ") .. what)
  if not c then bad = bad + 1 end
end
local function near(a, b) return a and math.abs(a - b) < 0.01 end

check(pcie.gts("16.0 GT/s PCIe") == 16 and pcie.gts("Unknown") == nil,
      "pci_speed_string texts parsed")
check(pcie.lane_gbps(2.5) == 2 and pcie.lane_gbps(5) == 4
      and near(pcie.lane_gbps(32), 31.508) and pcie.lane_gbps(64) == 64
      and pcie.lane_gbps(12) == nil, "8b/10b, 128b/130b, 1b/1b; no other rate")
local down = pcie.link { current_speed = "8.0 GT/s PCIe", current_width = 16,
                         max_speed = "16.0 GT/s PCIe", max_width = 16 }
check(near(down.gbps, 126.03) and near(down.max_gbps, 252.06),
      "Gen3 x16 of a Gen4 x16 capability: 126.03 of 252.06 Gb/s")
check(pcie.link { current_speed = "Unknown", current_width = 0 } == nil,
      "no PCIe link (a virtual device): nil")

local function tree(name, dev, rate)
  local inv = sys.inventory { root = STRATA_HOME .. "/fixtures/host/packs/" .. name }
  local m = {}
  local rows = pcie.rdma_link_metrics(inv, { { device = dev, port = 1 } },
                                      { [dev .. ".1"] = rate }, m)
  return m, rows
end
local m, rows = tree("e810", "irdma0", 100)
check(#rows == 1 and rows[1][3] == "8086:1592" and m["pcie.irdma0.gts"] == 16
      and m.pcie_width_min == 16 and near(m["pcie.irdma0.gbps"], 252.06),
      "E810 tree: irdma0 behind 8086:1592 at Gen4 x16, 252.06 Gb/s")
check(m.pcie_link_ratio == 1 and near(m.pcie_line_ratio, 2.52),
      "E810 tree: link at its capability, 2.52 x the 100 Gb/s port")
m = tree("e810", "irdma0", 400)
check(near(m.pcie_line_ratio, 0.63), "a 400 Gb/s port behind Gen4 x16: 0.63 (< 1)")
m = tree("connectx7", "mlx5_0", 400)
check(m.pcie_gts_min == 32 and near(m.pcie_line_ratio, 1.26),
      "ConnectX-7 tree: Gen5 x16 carries 1.26 x 400 Gb/s")
m, rows = tree("b300", "rxe0", 2)
check(next(m) == nil and #rows == 0, "no expected RDMA device with a link: no metric")

print(bad == 0 and "pcie_link: all checks passed" or "pcie_link: FAILED")
os.exit(bad == 0 and 0 or 1)
