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
local EXPECT = {
  ["ethtool_mlx5.txt"] = {
    rx_out_of_buffer = "drop", rx_discards_phy = "drop",
    tx_discards_phy = "drop", rx_prio3_buf_discard = "drop",
    rx_prio3_cong_discard = "drop", tx_pause_storm_warning_events = "drop",
    tx_pause_storm_error_events = "drop", rx_pause_ctrl_phy = "pause",
    tx_pause_ctrl_phy = "pause", rx_prio3_pause = "pause",
    tx_prio3_pause = "pause", rx_ecn_mark = "ecn" },
  ["ethtool_ice.txt"] = {
    rx_dropped = "drop", ["port.rx_dropped"] = "drop",
    ["port.tx_dropped_link_down"] = "drop", ["port.link_xoff_rx"] = "pause",
    ["port.link_xoff_tx"] = "pause", ["port.rx_priority_3_xoff"] = "pause",
    ["port.tx_priority_3_xoff"] = "pause", ["port.link_xon_rx"] = "xon",
    ["port.link_xon_tx"] = "xon", ["port.rx_priority_3_xon"] = "xon",
    ["port.tx_priority_3_xon"] = "xon" },
  ["ethtool_virtio.txt"] = {
    rx_drops = "drop", rx_queue_0_drops = "drop",
    rx_queue_0_xdp_drops = "drop", tx_queue_0_xdp_tx_drops = "drop" },
  ["hw_counters_mlx5.txt"] = {
    out_of_buffer = "drop", roce_slow_restart_cnps = "cnp",
    rp_cnp_ignored = "cnp", rp_cnp_handled = "cnp",
    np_ecn_marked_roce_packets = "ecn", np_cnp_sent = "cnp" },
  ["hw_counters_irdma.txt"] = {
    ip4InDiscards = "drop", ip6InDiscards = "drop", cnpHandled = "cnp",
    cnpIgnored = "cnp", cnpSent = "cnp", RxECNMrkd = "ecn" },
  ["hw_counters_rxe.txt"] = {},
}

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
ok(s.drops == 7, "mlx5 drops %d, want 7 (ethtool only)", s.drops)
ok(s.pause_frames == 4, "mlx5 pauses %d, want 4", s.pause_frames)
ok(s.ecn_marks == 1 + 2, "mlx5 ECN %d, want 3", s.ecn_marks)
ok(s.cnp == 4 * 2, "mlx5 CNPs %d, want 8", s.cnp)
-- RDMA errors: out_of_buffer, out_of_sequence, duplicate_request,
-- rnr_nak_retry_err, packet_seq_err, implied_nak_seq_err,
-- local_ack_timeout_err, resp_local_length_error, req_cqe_error,
-- resp_cqe_error, req_remote_access_errors, roce_adp_retrans (retry? no)
local errs = {}
for _, r in ipairs(s.rows) do
  if r[2] == "rdma_error" then errs[#errs + 1] = r[1]:match("[^.]+$") end
end
table.sort(errs)
local want = { "duplicate_request", "implied_nak_seq_err",
  "local_ack_timeout_err", "out_of_buffer", "out_of_sequence",
  "packet_seq_err", "req_cqe_error", "req_remote_access_errors",
  "resp_cqe_error", "resp_local_length_error", "rnr_nak_retry_err" }
ok(table.concat(errs, ",") == table.concat(want, ","),
   "mlx5 RDMA errors: %s", table.concat(errs, ","))
ok(s.rdma_errors == 2 * #want, "rdma_errors %d", s.rdma_errors)
ok(s.present.pause == 4 and s.present.drop == 7, "present counts")

-- rxe: no congestion counters at all, the error ones are errors
d = {}
for _, n in ipairs(names("hw_counters_rxe.txt")) do d["rdma.rxe0.1." .. n] = 1 end
s = cg.summarize(d, vs.is_error_counter)
ok(not s.present.pause and not s.present.ecn and not s.present.cnp and
   not s.present.drop, "rxe: no congestion counters")
ok(s.rdma_errors >= 8, "rxe: %d error counters", s.rdma_errors)

-- split
local src, obj, stat = cg.split("ethtool.eth0.port.rx_dropped")
ok(src == "ethtool" and obj == "eth0" and stat == "port.rx_dropped",
   "split ethtool: %s %s %s", src, obj, stat)
src, obj, stat = cg.split("rdma.mlx5_0.1.np_cnp_sent")
ok(src == "rdma" and obj == "mlx5_0.1" and stat == "np_cnp_sent", "split rdma")

print(failed == 0 and "congestion: ALL PASSED" or
      ("congestion: %d FAILED"):format(failed))
os.exit(failed == 0 and 0 or 1)
