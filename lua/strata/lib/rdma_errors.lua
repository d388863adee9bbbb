-- strata.lib.rdma_errors: the one answer to "is this RDMA port counter
-- an error counter?" for every reader (R6's totals, R7's rdma_errors,
-- verbsite.error_deltas, the s3rdma cells' rdma_err.*).
--
-- Names come from the drivers (fixtures/roce, README.md there): mlx5
-- hw_counters (out_of_sequence, packet_seq_err, local_ack_timeout_err,
-- rnr_nak_retry_err, req_cqe_error, resp_cqe_error, out_of_buffer,
-- req_transport_retries_exceeded, rx_icrc_encapsulated, ...), irdma's
-- camel case (ip4InDiscards, rxVlanErrors, tcpInOptErrors) and its GEN3
-- names with spaces ("Nak Sequence Error", "Rcvd Out of order packets",
-- "CRC errors", "RTO"), rxe (rcvd_seq_err, retry_exceeded_err,
-- link_downed, ...).  So names are compared lower-case with spaces and
-- dashes read as "_".  Congestion signals (CNP, ECN) are never errors:
-- R7 reads them through strata.lib.congestion.
local M = {}

-- Substrings that make a counter an error counter.
local ERROR = { "err", "seq", "timeout", "out_of", "duplicate", "discard",
                "drop", "link_downed", "nak", "retry", "retries",
                "exceeded", "integrity", "symbol", "icrc" }
-- Whole (normalised) names that are errors without such a substring:
-- irdma GEN3 "RTO" (retransmission time-outs).
local EXACT = { rto = true }
-- Substrings that make a counter a congestion signal, never an error.
local NOT_ERROR = { "cnp", "ecn" }
-- Whole names that hold an error substring but count no error: rxe's
-- ack_deferred ("deferred" holds "err") counts completer reschedules.
local NOT_EXACT = { ack_deferred = true }

-- The name as compared: lower case, runs of spaces/dashes -> "_".
function M.normalise(name)
  return (name:lower():gsub("[%s%-]+", "_"))
end

function M.is_error(name)
  if type(name) ~= "string" then return false end
  local n = M.normalise(name)
  for _, p in ipairs(NOT_ERROR) do
    if n:find(p, 1, true) then return false end
  end
  if NOT_EXACT[n] then return false end
  if EXACT[n] then return true end
  for _, p in ipairs(ERROR) do
    if n:find(p, 1, true) then return true end
  end
  return false
end

-- Only the error counters of a {name = delta} table, keys prefixed.
function M.deltas(counters, prefix)
  local out = {}
  for k, v in pairs(counters or {}) do
    if M.is_error(k) then out[(prefix or "") .. k] = v end
  end
  return out
end

return M
