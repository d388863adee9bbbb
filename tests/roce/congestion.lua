-- Unit test of strata.lib.congestion on recorded counter names
-- (fixtures/roce).  usage: strata lua congestion.lua FIXTURE_DIR
local cg = require "strata.lib.congestion"
local vs = require "strata.lib.verbsite"
local dir = arg[1]
local failed = 0
local function ok(c, fmt, ...)
  if not c then
    failed = failed + 1
    print("FAIL " .. fmt:format(...))
  end
end

local function names(file)
  local out = {}
  for l in io.lines(dir .. "/" .. file) do
    local n = l:match("^%s+(%S+):%s") or l:match("^(%S+)$")
    if n and n ~= "NIC" then out[#out + 1] = n end
  end
  assert(#out > 5, file .. ": too few names")
  return out
end

-- Expected kinds (every other name of a file: nil).
local function prios(fmt, kind, t, list)
  for p = 0, 7 do
    if not list or list[p] then t[fmt:format(p)] = kind end
  end
  return t
end
local ice = { rx_dropped = "drop", ["rx_dropped.nic"] = "drop",
  ["tx_dropped_link_down.nic"] = "drop", ["link_xoff_rx.nic"] = "pause",
  ["link_xoff_tx.nic"] = "pause", ["link_xon_rx.nic"] = "xon",
  ["link_xon_tx.nic"] = "xon" }
prios("tx_priority_%d_xoff.nic", "pause", ice)
prios("rx_priority_%d_xoff.nic", "pause", ice)
prios("tx_priority_%d_xon.nic", "xon", ice)
prios("rx_priority_%d_xon.nic", "xon", ice)
local mlx5 = {
  rx_out_of_buffer = "drop", rx_discards_phy = "drop",
  tx_discards_phy = "drop", tx_queue_dropped = "drop",
  rx_oversize_pkts_sw_drop = "drop",
  tx_pause_storm_warning_events = "drop",
  tx_pause_storm_error_events = "drop", rx_pause_ctrl_phy = "pause",
  tx_pause_ctrl_phy = "pause", rx_prio3_pause = "pause",
  tx_prio3_pause = "pause", rx_ecn_mark = "ecn" }
prios("rx_prio%d_buf_discard", "drop", mlx5)
prios("rx_prio%d_cong_discard", "drop", mlx5)
prios("rx_prio%d_discards", "drop", mlx5)
-- en_stats.c: rx_prio%d_marked counts ECN-marked packets (ecn_marked_tc)
prios("rx_prio%d_marked", "ecn", mlx5)
local EXPECT = {
  ["ethtool_mlx5.txt"] = mlx5,
  ["ethtool_ice.txt"] = ice,
  -- XDP verdicts are not congestion
  ["ethtool_virtio.txt"] = { rx_drops = "drop", rx0_drops = "drop" },
  ["hw_counters_mlx5.txt"] = {
    out_of_buffer = "drop", roce_slow_restart_cnps = "cnp",
    rp_cnp_ignored = "cnp", rp_cnp_handled = "cnp",
    np_ecn_marked_roce_packets = "ecn", np_cnp_sent = "cnp" },
  ["hw_counters_irdma.txt"] = {
    ip4InDiscards = "drop", ip6InDiscards = "drop", cnpHandled = "cnp",
    cnpIgnored = "cnp", cnpSent = "cnp", RxECNMrkd = "ecn" },
  ["hw_counters_rxe.txt"] = {},
}

-- no ice driver prints a "port." name or xon_2_xoff (those are i40e's)
for _, n in ipairs(names("ethtool_ice.txt")) do
  ok(not n:find("port.", 1, true) and not n:find("xon_2_xoff", 1, true),
     "ethtool_ice.txt holds an i40e name: %s", n)
end
-- i40e's PFC names (i40e_ethtool.c i40e_gstrings_pfc_stats, "port."
-- prefix): pauses and XONs; the xon->xoff transition count is neither
local i40e = { ["port.tx_priority_3_xoff_tx"] = "pause",
  ["port.rx_priority_3_xoff_rx"] = "pause",
  ["port.tx_priority_3_xon_tx"] = "xon", ["port.rx_priority_3_xon_rx"] = "xon" }
for n, want in pairs(i40e) do
  ok(cg.classify(n) == want, "i40e %s: %s", n, tostring(cg.classify(n)))
end
ok(cg.classify("port.rx_priority_3_xon_2_xoff") == nil, "i40e xon_2_xoff")

for file, want in pairs(EXPECT) do
  for _, n in ipairs(names(file)) do
    local got = cg.classify(n)
    ok(got == want[n], "%s: %s classified %s, want %s", file, n,
       tostring(got), tostring(want[n]))
  end
end

-- summarize: deltas as the sampler names them
local d = {}
for _, n in ipairs(names("ethtool_mlx5.txt")) do d["ethtool.ens1f0np0." .. n] = 1 end
for _, n in ipairs(names("hw_counters_mlx5.txt")) do d["rdma.mlx5_0.1." .. n] = 2 end
d["net.ens1f0np0.rx_drop"] = 7      -- not an ethtool counter: ignored
local s = cg.summarize(d, vs.is_error_counter)
-- ethtool drops: out_of_buffer, discards_phy x2, queue_dropped,
-- oversize_pkts_sw_drop, 2 pause storms, 8 prios x 3 discards
ok(s.drops == 7 + 24, "mlx5 drops %d, want 31 (ethtool only)", s.drops)
ok(s.pause_frames == 4, "mlx5 pauses %d, want 4", s.pause_frames)
-- rx_ecn_mark + 8 rx_prio%d_marked (ethtool, 1 each) + np_ecn_marked (2)
ok(s.ecn_marks == 1 + 8 + 2, "mlx5 ECN %d, want 11", s.ecn_marks)
ok(s.cnp == 4 * 2, "mlx5 CNPs %d, want 8", s.cnp)
-- RDMA errors: what strata.lib.rdma_errors calls an error, from
-- counters.c's tables (the congestion kinds are not errors)
local errs = {}
for _, r in ipairs(s.rows) do
  if r[2] == "rdma_error" then errs[#errs + 1] = r[1]:match("[^.]+$") end
end
table.sort(errs)
local want = { "duplicate_request", "implied_nak_seq_err",
  "local_ack_timeout_err", "out_of_buffer", "out_of_sequence",
  "packet_seq_err", "req_cqe_error", "req_cqe_flush_error",
  "req_remote_access_errors", "req_rnr_retries_exceeded",
  "req_transport_retries_exceeded", "resp_cqe_error",
  "resp_cqe_flush_error", "resp_local_length_error",
  "resp_remote_access_errors", "rnr_nak_retry_err", "rx_icrc_encapsulated" }
ok(table.concat(errs, ",") == table.concat(want, ","),
   "mlx5 RDMA errors: %s", table.concat(errs, ","))
ok(s.rdma_errors == 2 * #want, "rdma_errors %d", s.rdma_errors)
ok(s.present.pause == 4 and s.present.drop == 31, "present counts")

-- ice: the VSI rx_dropped lies inside the port's rx_dropped.nic, counted
-- once; the port's link and priority pauses all count
d = {}
for _, n in ipairs(names("ethtool_ice.txt")) do d["ethtool.ens2f0." .. n] = 0 end
d["ethtool.ens2f0.rx_dropped"] = 5
d["ethtool.ens2f0.rx_dropped.nic"] = 9
d["ethtool.ens2f0.tx_priority_3_xoff.nic"] = 40
d["ethtool.ens2f0.link_xoff_rx.nic"] = 2
d["ethtool.ens2f0.rx_priority_3_xon.nic"] = 6
s = cg.summarize(d, vs.is_error_counter)
ok(s.drops == 9, "ice drops %d, want 9 (rx_dropped.nic, not + VSI 5)", s.drops)
ok(s.pause_frames == 42 and s.xon_frames == 6, "ice pauses %d xon %d",
   s.pause_frames, s.xon_frames)
local part
for _, r in ipairs(s.rows) do
  if r[1] == "ethtool.ens2f0.rx_dropped" then part = r[2] end
end
ok(part == "part", "ice VSI rx_dropped shown as part: %s", tostring(part))
-- virtio_net (captured on a 6.18 kernel): the per-queue rx0_drops lies
-- inside rx_drops; without the total, the queue counts
s = cg.summarize({ ["ethtool.eth0.rx0_drops"] = 3, ["ethtool.eth0.rx_drops"] = 3,
                   ["ethtool.eth0.rx_xdp_drops"] = 50 }, vs.is_error_counter)
ok(s.drops == 3, "virtio drops %d, want 3", s.drops)
s = cg.summarize({ ["ethtool.eth0.rx_queue_0_drops"] = 3 }, vs.is_error_counter)
ok(s.drops == 3, "per-queue drops alone %d", s.drops)

-- rxe: no congestion counters at all, the error ones are errors
d = {}
for _, n in ipairs(names("hw_counters_rxe.txt")) do d["rdma.rxe0.1." .. n] = 1 end
s = cg.summarize(d, vs.is_error_counter)
ok(not s.present.pause and not s.present.ecn and not s.present.cnp and
   not s.present.drop, "rxe: no congestion counters")
-- rxe_counter_name: all but sent/rcvd_pkts, ack_deferred (a completer
-- reschedule: "deferred" holds "err", not an error), rdma_sends/recvs
ok(s.rdma_errors == 10, "rxe: %d error counters, want 10", s.rdma_errors)

-- split
local src, obj, stat = cg.split("ethtool.eth0.rx_dropped.nic")
ok(src == "ethtool" and obj == "eth0" and stat == "rx_dropped.nic",
   "split ethtool: %s %s %s", src, obj, stat)
src, obj, stat = cg.split("rdma.mlx5_0.1.np_cnp_sent")
ok(src == "rdma" and obj == "mlx5_0.1" and stat == "np_cnp_sent", "split rdma")

print(failed == 0 and "congestion: ALL PASSED" or
      ("congestion: %d FAILED"):format(failed))
os.exit(failed == 0 and 0 or 1)
