-- nic.lua - the fourth witness (lua/strata/lib/s3nic.lua) measured on
-- readings fed by hand, one per driver family, with the counter names of
-- the kernel sources the library cites; its figures folded per row as
-- lib/s3rdma.lua folds them and judged by the shipped criterion "nic"
-- (specs/thresholds.yaml): a NIC that did not carry the bytes FAILs the
-- row, an absent witness and rxe's netdev do not; s3rdma.prove no longer
-- takes the NIC into its verdict.
local nic = require "strata.lib.s3nic"
local r = require "strata.s3rdma"
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()
local lib = require "strata.lib.s3rdma"
local setup = require "strata.setup"
local thresholds = require "strata.thresholds"
local MiB = 1048576
local moved = 128 * MiB

-- The shipped criterion "nic" of a row, judged on folded metrics.
local s = setup.load { paths = { STRATA_HOME .. "/specs" },
                       thresholds = STRATA_HOME .. "/specs/thresholds.yaml" }
local function judge(id, m)
  for _, c in ipairs(s.criteria) do
    if c.id == id and c.metric == "nic" then
      local ck = thresholds.judge({ c }, { metrics = m })[1]
      return ck.ok and not ck.not_judged, ck.text or ck.why
    end
  end
  error("no shipped criterion " .. id .. ".nic")
end
-- one phase's figures folded as a row's (lib/s3rdma.lua nic_metrics)
local function row(w, out)
  out = out or {}
  lib.nic_metrics(out, "get.", w)
  return out
end

-- the MinIO b1-fetch shape: 128 MiB by RDMA, ~12 KB on the netdev
local m0 = { eth = { rx_vport_rdma_unicast_bytes = 1000,
                     tx_vport_rdma_unicast_bytes = 50 },
             net = { rx = 5000, tx = 7000 } }
local m1 = { eth = { rx_vport_rdma_unicast_bytes = 1000 + moved + 65536,
                     tx_vport_rdma_unicast_bytes = 50 + 4096 },
             net = { rx = 5000 + 12265, tx = 7000 + 300 } }
local w = nic.measure("mlx5", m0, m1, moved, 4096)
check(w.witness == "read" and w.netdev == "read" and
      w.rdma_bytes == moved + 65536 + 4096 and w.netdev_bytes == 12565 and
      math.abs(w.netdev_share - 12565 / moved) < 1e-12,
      "mlx5: vport RDMA bytes and netdev bytes measured: " .. w.why)
check(w.state == nil and w.verdict == nil, "mlx5: measure decides nothing")
local ok, text = judge("B04", row(w))
check(ok, "B04.nic holds on the b1-fetch shape: " .. text)
local tcp = { eth = m0.eth, net = { rx = 5000 + moved, tx = 7000 } }
w = nic.measure("mlx5", m0, tcp, moved, 4096)
check(w.rdma_ratio == 0 and w.netdev_share == 1, "mlx5, the bytes over TCP: "
      .. w.why)
ok, text = judge("B04", row(w))
check(not ok and text:find("nic_rdma_ratio_min = 0 < 0.9", 1, true),
      "B04.nic FAILs when the netdev carried the bytes: " .. text)
-- RDMA counters right, but 20 MiB also went through the kernel stack
local leak = { eth = m1.eth, net = { rx = 5000 + 20 * MiB, tx = 7000 } }
ok, text = judge("E3", row(nic.measure("mlx5", m0, leak, moved, 4096)))
check(not ok and text:find("nic_netdev_share_max", 1, true),
      "E3.nic FAILs on a netdev carrying 15 % of the bytes: " .. text)
-- a small move: 40 KB of control traffic is > 5 % of 512 KiB, < 1 MiB
local small = { eth = { rx_vport_rdma_unicast_bytes = 1000 + 524288 },
                net = { rx = 5000 + 40000, tx = 7000 } }
ok, text = judge("E3", row(nic.measure("mlx5", m0, small, 524288, 4096)))
check(ok, "E3.nic holds on 40 KB of netdev for 512 KiB moved: " .. text)

w = nic.measure("irdma", { hw = { ip4InOctets = 10, ip4OutOctets = 5 } },
                { hw = { ip4InOctets = 10 + moved, ip4OutOctets = 9 } },
                moved, 4096)
check(w.witness == "read" and w.netdev == "absent" and
      w.rdma_bytes == moved + 4, "irdma: ip4InOctets measured: " .. w.why)
ok, text = judge("B15", row(w))
check(ok, "B15.nic holds with no netdev counters: " .. text)
w = nic.measure("irdma", { hw = { ip4InOctets = 10 } },
                { hw = { ip4InOctets = 10 } }, moved, 4096)
ok, text = judge("B15", row(w))
check(w.rdma_ratio == 0 and not ok, "irdma: octets flat FAILs: " .. text)

w = nic.measure("rxe", { hw = { sent_pkts = 0, rcvd_pkts = 0 }, net = { rx = 0, tx = 0 } },
                { hw = { sent_pkts = 40, rcvd_pkts = 300 },
                  net = { rx = 2 * MiB, tx = 0 } }, MiB, 4096)
check(w.witness == "read" and w.netdev == "n/a" and w.rdma_bytes == 340 * 4096
      and w.netdev_bytes == 2 * MiB, "rxe: packets x MTU, netdev n/a: " .. w.why)
ok, text = judge("E3", row(w))
check(ok, "E3.nic holds on rxe, its netdev not judged: " .. text)

w = nic.measure("other", {}, {}, moved, 4096)
check(w.witness == "absent" and w.why:find("no RDMA byte counters", 1, true),
      "an unknown driver: absent (" .. w.why .. ")")
ok, text = judge("E3", row(w))
check(ok, "E3.nic holds when the witness is absent: " .. text)
w = nic.measure("mlx5", m0, m1, 0, 4096)
check(w.witness == "absent" and w.why == "nothing moved by RDMA",
      "nothing moved: absent")
check(nic.family("mlx5_0", "mlx5_core") == "mlx5" and
      nic.family("rocep1s0", "irdma") == "irdma" and
      nic.family("rxe0", "software") == "rxe", "driver families")

-- two phases fold into one row: the lowest ratio, the largest netdev
local two = row(nic.measure("mlx5", m0, small, 524288, 4096))
row(nic.measure("mlx5", m0, m1, moved, 4096), two)
check(two.nic_witness == "read" and two["get.witness.nic"] == "read" and
      math.abs(two.nic_rdma_ratio_min - (524288 - 50) / 524288) < 1e-12 and
      two.nic_netdev_bytes_max == 40000 and
      math.abs(two.nic_netdev_share_max - 40000 / 524288) < 1e-12,
      "two phases folded: lowest ratio, largest netdev share and bytes")
local half = row(nic.measure("other", {}, {}, moved, 4096))
row(nic.measure("mlx5", m0, tcp, moved, 4096), half)
ok, text = judge("E4", half)
check(half.nic_witness == "read" and not ok,
      "one phase absent, one read over TCP: the read one is judged: " .. text)

-- every s3rdma row that judges proof judges the NIC witness too
for _, id in ipairs { "E3", "E4", "B02", "B04", "B06", "B07", "B08", "B09",
                      "B11", "B13", "B15" } do
  ok = judge(id, { nic_witness = "read", nic_rdma_ratio_min = 0.5,
                   nic_netdev = "read", nic_netdev_share_max = 0 })
  check(not ok, id .. ".nic FAILs a ratio of 0.5")
end

-- written once (&nic), set per row: --set on E4 leaves E3 as shipped,
-- and a site that holds an absent witness against the row removes its
-- member (a KPI switched off)
do
  local s2 = setup.load { paths = { STRATA_HOME .. "/specs" },
    thresholds = STRATA_HOME .. "/specs/thresholds.yaml",
    set = { "E4.nic.counted.nic_rdma_ratio_min.min=0.4",
            "B11.nic.nic_witness.in=none" } }
  local function judged(id, m)
    for _, c in ipairs(s2.criteria) do
      if c.id == id and c.metric == "nic" then
        return thresholds.judge({ c }, { metrics = m })[1].ok
      end
    end
  end
  local half = { nic_witness = "read", nic_rdma_ratio_min = 0.5, nic_netdev = "n/a" }
  check(judged("E4", half) and not judged("E3", half),
        "--set E4.nic.counted.nic_rdma_ratio_min.min=0.4: E4 alone changed")
  check(not judged("B11", { nic_witness = "absent" }) and
        judged("B02", { nic_witness = "absent" }),
        "--set B11.nic.nic_witness.in=none: an absent witness FAILs B11 only")
end

-- prove: three witnesses, the NIC is not among them any more
local run = { ok = 1, requests = 1, reply_ok = 1, landed_ok = 1,
              rdma_get_bytes = 100, rdma_put_bytes = 0 }
local z, c = { read_bytes = 0, write_bytes = 0 }, { read_bytes = 100,
                                                    write_bytes = 0 }
local p = r.prove(run, z, c)
check(p.verdict == "PROVEN" and p.nic == nil and
      not p.witnesses:find("NIC", 1, true), "prove: " .. p.witnesses)
print(check.n == 0 and "nic: all checks passed" or "nic: FAILED")
os.exit(check.n == 0 and 0 or 1)
