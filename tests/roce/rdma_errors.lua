-- Unit test of strata.lib.rdma_errors, the one list of what an RDMA
-- error counter is, on the drivers' names (fixtures/roce).
-- usage: strata lua rdma_errors.lua FIXTURE_DIR SOURCE_ROOT
local re = require "strata.lib.rdma_errors"
local vs = require "strata.lib.verbsite"
local dir, root = arg[1], arg[2]
local failed = 0
local function ok(c, fmt, ...)
  if not c then
    failed = failed + 1
    print("FAIL " .. fmt:format(...))
  end
end
local function lines(file)
  local out = {}
  for l in io.lines(dir .. "/" .. file) do
    if l ~= "" then out[#out + 1] = l end
  end
  return out
end
local function errors_of(file)
  local out = {}
  for _, n in ipairs(lines(file)) do
    if re.is_error(n) then out[#out + 1] = n end
  end
  table.sort(out)
  return table.concat(out, ",")
end

-- irdma (verbs.c irdma_hw_stat_descs): camel case, matched whatever the
-- case (the old lower-case matching missed every one of these)
ok(errors_of("hw_counters_irdma.txt") ==
   "ip4InDiscards,ip6InDiscards,rxVlanErrors,tcpInOptErrors,tcpInProtoErrors",
   "irdma errors: %s", errors_of("hw_counters_irdma.txt"))
-- irdma GEN3 names hold spaces
ok(errors_of("hw_counters_irdma_gen3.txt") == table.concat({
   "CRC errors", "InOptErrors", "InProtoErrors", "Nak Sequence Error",
   "Nak Sequence Error Implied", "RTO", "Rcvd Out of order packets" }, ","),
   "irdma gen3 errors: %s", errors_of("hw_counters_irdma_gen3.txt"))
ok(re.normalise("Nak Sequence  Error") == "nak_sequence_error", "normalise")
-- rxe (rxe_hw_counters.c): link_downed is an error (the old s3rdma list
-- had no link_downed); ack_deferred is not
ok(errors_of("hw_counters_rxe.txt") == table.concat({
   "completer_retry_err", "duplicate_request", "link_downed",
   "out_of_seq_request", "rcvd_rnr_err", "rcvd_seq_err",
   "retry_exceeded_err", "retry_rnr_exceeded_err", "send_err",
   "send_rnr_err" }, ","), "rxe errors: %s", errors_of("hw_counters_rxe.txt"))
-- mlx5 (counters.c): the congestion counters are not errors
for _, n in ipairs { "np_ecn_marked_roce_packets", "np_cnp_sent",
                     "rp_cnp_handled", "rp_cnp_ignored",
                     "roce_slow_restart_cnps", "cnpSent", "RxECNMrkd" } do
  ok(not re.is_error(n), "%s is not an error", n)
end
for _, n in ipairs { "out_of_sequence", "packet_seq_err", "local_ack_timeout_err",
                     "rnr_nak_retry_err", "req_cqe_error", "resp_cqe_error",
                     "out_of_buffer", "req_transport_retries_exceeded",
                     "rx_icrc_encapsulated", "rx_symbol_err_phy",
                     "rx_pci_signal_integrity" } do
  ok(re.is_error(n), "%s is an error", n)
end
ok(not re.is_error(nil) and not re.is_error(5), "non-names")
-- the readers share it
ok(vs.is_error_counter == re.is_error and vs.error_deltas == re.deltas,
   "verbsite re-exports rdma_errors")
local dl = re.deltas({ link_downed = 1, rcvd_pkts = 9, ["CRC errors"] = 2 }, "e.")
ok(dl["e.link_downed"] == 1 and dl["e.CRC errors"] == 2 and dl["e.rcvd_pkts"] == nil,
   "deltas")

-- One list: no other module keeps its own error-substring list
local p = io.popen("find '" .. root .. "/lua' '" .. root .. "/specs' -name '*.lua'")
for f in p:lines() do
  if not f:match("rdma_errors%.lua$") then
    local fh = io.open(f)
    local t = fh:read("a")
    fh:close()
    ok(not (t:find('"timeout"', 1, true) and t:find('"duplicate"', 1, true)),
       "%s keeps its own error-counter list (use strata.lib.rdma_errors)", f)
  end
end
p:close()
local fh = io.open(root .. "/lua/strata/lib/s3rdma.lua")
local src = fh:read("a")
fh:close()
ok(src:find('require("strata.lib.rdma_errors")', 1, true) ~= nil,
   "s3rdma uses strata.lib.rdma_errors")

print(failed == 0 and "rdma_errors: ALL PASSED" or
      ("rdma_errors: %d FAILED"):format(failed))
os.exit(failed == 0 and 0 or 1)
