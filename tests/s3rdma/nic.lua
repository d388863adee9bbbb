-- nic.lua - the fourth witness (lua/strata/lib/s3nic.lua) judged on
-- readings fed by hand, one per driver family, with the counter names of
-- the kernel sources the library cites; and s3rdma.prove holding a NIC
-- mismatch against the verdict while an absent NIC witness is only shown.
local nic = require "strata.lib.s3nic"
local r = require "strata.s3rdma"
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()
local MiB = 1048576
local moved = 128 * MiB
-- the MinIO b1-fetch shape: 128 MiB by RDMA, ~12 KB on the netdev
local m0 = { eth = { rx_vport_rdma_unicast_bytes = 1000,
                     tx_vport_rdma_unicast_bytes = 50 },
             net = { rx = 5000, tx = 7000 } }
local m1 = { eth = { rx_vport_rdma_unicast_bytes = 1000 + moved + 65536,
                     tx_vport_rdma_unicast_bytes = 50 + 4096 },
             net = { rx = 5000 + 12265, tx = 7000 + 300 } }
local j = nic.judge("mlx5", m0, m1, moved, 4096)
check(j.state == "agree", "mlx5: vport RDMA bytes grew, netdev flat: " .. j.why)
local tcp = { eth = m0.eth, net = { rx = 5000 + moved, tx = 7000 } }
j = nic.judge("mlx5", m0, tcp, moved, 4096)
check(j.state == "mismatch", "mlx5: netdev grew instead (TCP): " .. j.why)
j = nic.judge("irdma", { hw = { ip4InOctets = 10, ip4OutOctets = 5 } },
              { hw = { ip4InOctets = 10 + moved, ip4OutOctets = 9 } },
              moved, 4096)
check(j.state == "agree", "irdma: ip4InOctets grew: " .. j.why)
j = nic.judge("irdma", { hw = { ip4InOctets = 10 } }, { hw = { ip4InOctets = 10 } },
              moved, 4096)
check(j.state == "mismatch", "irdma: octets flat: " .. j.why)
j = nic.judge("rxe", { hw = { sent_pkts = 0, rcvd_pkts = 0 } },
              { hw = { sent_pkts = 40, rcvd_pkts = 300 } }, MiB, 4096)
check(j.state == "agree", "rxe: packets x MTU cover the bytes: " .. j.why)
j = nic.judge("other", {}, {}, moved, 4096)
check(j.state == "absent", "an unknown driver: absent")
check(nic.family("mlx5_0", "mlx5_core") == "mlx5" and
      nic.family("rocep1s0", "irdma") == "irdma" and
      nic.family("rxe0", "software") == "rxe", "driver families")

local run = { ok = 1, requests = 1, reply_ok = 1, landed_ok = 1,
              rdma_get_bytes = 100, rdma_put_bytes = 0 }
local z, c = { read_bytes = 0, write_bytes = 0 }, { read_bytes = 100,
                                                    write_bytes = 0 }
local p = r.prove(run, z, c, { nic = { state = "agree", why = "x" } })
check(p.verdict == "PROVEN" and p.witnesses:find("NIC counters agree", 1,
      true), "all four agree: " .. p.witnesses)
p = r.prove(run, z, c, { nic = { state = "mismatch", why = "netdev grew" } })
check(p.verdict == "NOT PROVEN" and p.reason:find("netdev grew", 1, true),
      "NIC mismatch: NOT PROVEN")
p = r.prove(run, z, c, { nic = { state = "absent", why = "no counters" } })
check(p.verdict == "PROVEN" and p.nic == "absent", "NIC absent: shown only")
print(check.n == 0 and "nic: all checks passed" or "nic: FAILED")
os.exit(check.n == 0 and 0 or 1)
