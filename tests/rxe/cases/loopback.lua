-- In the guest: the verbs primitives on rxe0, loopback (both ends on the
-- same device, the far end in a second thread).
package.path = arg[0]:match("(.*/)") .. "?.lua;" .. package.path
local verbs = require "strata.verbs"
local C = require "check"

-- inventory
local inv = verbs.inventory()
local d = inv[1]
C.ok(#inv == 1 and d.name == "rxe0", "inventory lists rxe0")
local p = d.ports[1]
C.ok(p.state == "PORT_ACTIVE" and p.phys_state == "LinkUp",
     "port 1 PORT_ACTIVE / LinkUp (%s / %s)", p.state, p.phys_state)
C.ok(p.link_layer == "Ethernet" and p.active_mtu == 4096,
     "Ethernet, active MTU 4096 on a 9000-byte netdev (%s)", p.active_mtu)
C.ok(p.netdev == "dummy0", "netdev mapping dummy0 (%s)", tostring(p.netdev))
C.ok(p.gid_index_auto == 1, "auto GID = 1 (RoCEv2 IPv4-mapped)")
local g1
for _, g in ipairs(p.gids) do if g.index == 1 then g1 = g end end
C.ok(g1 and g1.type == "RoCE v2" and g1.ipv4 == os.getenv("STRATA_RXE_IP"),
     "GID 1 is RoCE v2 ::ffff:%s", tostring(g1 and g1.ipv4))
C.ok(p.rate_gbps > 0, "line rate from speed x width: %s Gbit/s (%s)",
     p.rate_gbps, p.rate)

-- bandwidth: every operation, data checked at the far end
for _, op in ipairs { "write", "read", "send" } do
  local r = verbs.bw { op = op, size = 65536, qps = 2, iters = 50,
                       validate = true, tx_depth = 16 }
  C.ok(r.validated == true and r.msgs == 100 and r.bytes == 100 * 65536,
       "bw %s: 100 x 64 KiB, data validated, %.3f Gbit/s, peak %.3f",
       op, r.bw_gbps, r.peak_gbps)
  C.ok(r.bw_gbps > 0 and r.peak_gbps >= r.bw_gbps * 0.5 and r.cpu_pct > 0,
       "bw %s: rates and CPU%% present (cpu %.0f%%)", op, r.cpu_pct)
  C.ok((r.counters.sent_pkts or 0) >= 100 * 16,
       "bw %s: sent_pkts moved by %s (>= 1600 for 100 x 16 MTU)", op,
       tostring(r.counters.sent_pkts))
end
local r = verbs.bw { op = "write", size = 4096, qps = 4, iters = 40,
                     bidir = true, validate = true }
C.ok(r.validated and r.bw_gbps_peer > 0 and r.bw_gbps > r.bw_gbps_peer,
     "bidirectional write: both directions, validated (%.3f total)", r.bw_gbps)
r = verbs.bw { op = "send", size = 1024, qps = 2, iters = 30, bidir = true }
C.ok(r.msgs == 60 and r.recvs == 60, "bidirectional send: 60 each way")
local t0 = os.time()
r = verbs.bw { op = "write", size = 4096, duration = 0.5, tx_depth = 8 }
C.ok(r.duration_s > 0.4 and r.duration_s < 2 and r.msgs > 0,
     "duration mode: %.2f s, %d messages", r.duration_s, r.msgs)
r = verbs.bw { op = "write", size = 1048576, qps = 8, iters = 4,
               max_buffer = 4 * 1048576, validate = true }
C.ok(r.validated and r.msgs == 32,
     "8 QPs share 2 slot pairs under max_buffer 4 MiB, validated")
C.ok(verbs.buffer_bytes { size = 1048576, qps = 8, max_buffer = 4194304 }
     == 4194304, "buffer_bytes accounts for shared slots")

-- the QPs' ACK timeout: perftest's 14 unless asked, as the device holds it
r = verbs.bw { op = "write", size = 4096, qps = 2, iters = 8 }
C.ok(r.qp_timeout == 14, "default qp_timeout 14 (queried: %s)",
     tostring(r.qp_timeout))
r = verbs.bw { op = "write", size = 4096, qps = 2, iters = 8, qp_timeout = 20 }
C.ok(r.qp_timeout == 20, "qp_timeout 20 reaches the QP (queried: %s)",
     tostring(r.qp_timeout))
local e = C.raises(verbs.bw, { qp_timeout = 32 })
C.ok(e and e:find("qp_timeout", 1, true) and e:find("1 .. 31", 1, true),
     "qp_timeout 32 refused: %s", tostring(e))

-- latency
for _, op in ipairs { "write", "send", "read" } do
  local l = verbs.lat { op = op, size = 2, iters = 100 }
  C.ok(l.iters == 100 and l.min_us > 0 and l.min_us <= l.median_us and
       l.median_us <= l.p99_us and l.p99_us <= l.max_us,
       "lat %s 2 B: min %.1f median %.1f p99 %.1f max %.1f us", op,
       l.min_us, l.median_us, l.p99_us, l.max_us)
end
local l = verbs.lat { op = "write", size = 4096, iters = 50 }
C.ok(l.iters == 50 and not l.inline, "lat write 4 KiB (not inline)")

-- bad input
local e = C.raises(verbs.bw, { device = "mlx5_7", iters = 1 })
C.ok(e and e:find("^SKIP: RDMA device 'mlx5_7' not found"), "absent device: SKIP (%s)", e)
e = C.raises(verbs.bw, { gid_index = 4000, iters = 1 })
C.ok(e and e:find("GID index 4000 out of range"), "GID index out of range: %s", e)
e = C.raises(verbs.bw, { gid_index = 7, iters = 1 })
C.ok(e and e:find("GID index 7 on port 1 is empty"), "empty GID index: %s", e)
e = C.raises(verbs.bw, { size = 1 << 30, iters = 1 })
C.ok(e and e:find("exceeds rxe0's maximum"), "oversized message: %s", e)
e = C.raises(verbs.bw, { hugepages = true, iters = 1 })
C.ok(e and e:find("huge pages") and e:find("ENOMEM"),
     "huge pages asked, none reserved: %s", e)
e = C.raises(verbs.bw, { memory = "cuda", iters = 1 })
C.ok(e and e:find("^SKIP: GPU memory"), "GPU memory: %s", e)
e = C.raises(verbs.bw, { port = 2, iters = 1 })
C.ok(e and e:find("has no port 2"), "port out of range: %s", e)
e = C.raises(verbs.bw, { op = "atomic" })
C.ok(e and e:find("option 'op'"), "bad op named: %s", e)
e = C.raises(verbs.bw, { sise = 4 })
C.ok(e and e:find("unknown option 'sise'"), "unknown option named: %s", e)
e = C.raises(verbs.lat, { qps = 2 })
C.ok(e and e:find("qps"), "latency with 2 QPs refused: %s", e)
return C.finish()
