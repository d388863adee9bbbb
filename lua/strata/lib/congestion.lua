-- strata.lib.congestion: which NIC and RDMA counters say "dropped",
-- "pause (PFC / link flow control)", "ECN marked" or "CNP", across the
-- drivers the runbook meets (RUNBOOK R7 reads it).  The names are the
-- drivers' own (fixtures/roce, each file's source in README.md there):
--  - mlx5 ethtool -S (en_stats.c): rx_prio3_pause, tx_prio3_pause,
--    rx_pause_ctrl_phy, rx_prio3_buf_discard, rx_prio3_cong_discard,
--    rx_prio3_marked (ECN-marked), rx_discards_phy, rx_out_of_buffer,
--    rx_ecn_mark; and hw_counters (counters.c): np_ecn_marked_roce_packets,
--    np_cnp_sent, rp_cnp_handled, rp_cnp_ignored;
--  - ice (E810) ethtool -S (ice_ethtool.c): the port (PF) statistics end
--    in ".nic" (link_xoff_rx.nic, tx_priority_3_xoff.nic,
--    rx_dropped.nic, tx_dropped_link_down.nic), the VSI and per-queue
--    ones have no suffix (rx_dropped, rx_alloc_fail).  The "port."
--    prefix and rx_priority_%u_xon_2_xoff are i40e's (i40e_ethtool.c),
--    and ice's before it took ".nic" in 2019;
--  - irdma hw_counters (verbs.c): cnpHandled, cnpIgnored, cnpSent,
--    RxECNMrkd, ip4InDiscards;
--  - rxe: none of the congestion kinds (a software RoCE wire has no PFC
--    or ECN).
--
-- Names are matched case-insensitively on the counter's own name (the
-- part after "ethtool.<if>." or "rdma.<dev>.<port>.").
local M = {}

-- Ordered: the first kind whose rule matches wins.
local RULES = {
  -- pause storms are a fault, not flow control (mlx5
  -- tx_pause_storm_warning_events / _error_events): counted as drops
  { kind = "drop", any = { "pause_storm" } },
  -- an XDP program's verdicts (mlx5 rx_xdp_drop, virtio_net rx_xdp_drops,
  -- tx_xdp_tx_drops) are the program's choice, not congestion
  { kind = nil, any = { "xdp" } },
  -- time spent paused and xon<->xoff transitions are not frame counts
  { kind = nil, any = { "pause_duration", "pause_transition",
                        "xon_2_xoff" } },
  -- mlx5 rx_prio3_pause, tx_pause_ctrl_phy; ice link_xoff_rx.nic,
  -- tx_priority_3_xoff.nic; i40e port.tx_priority_3_xoff_tx; "pfc"
  { kind = "pause", any = { "pause", "xoff", "pfc" } },
  -- XON frames end a pause: reported, not counted as pauses
  { kind = "xon", any = { "xon" } },
  -- mlx5 np_cnp_sent, rp_cnp_handled, rp_cnp_ignored; irdma cnpSent,
  -- cnpHandled, cnpIgnored
  { kind = "cnp", any = { "cnp" } },
  -- mlx5 np_ecn_marked_roce_packets, rx_ecn_mark, rx_prio3_marked (the
  -- per-priority ECN-marked count of en_stats.c); irdma RxECNMrkd
  { kind = "ecn", any = { "ecn", "_marked" } },
  -- mlx5 rx_discards_phy, rx_prio3_buf_discard, rx_out_of_buffer,
  -- out_of_buffer; ice rx_dropped, rx_dropped.nic,
  -- tx_dropped_link_down.nic; virtio_net rx_drops; irdma ip4InDiscards
  { kind = "drop", any = { "drop", "discard", "out_of_buffer" } },
}

-- The kind of one counter name: "drop", "pause", "xon", "ecn", "cnp" or
-- nil (not a congestion counter).
function M.classify(name)
  local n = name:lower()
  for _, r in ipairs(RULES) do
    for _, pat in ipairs(r.any) do
      if n:find(pat, 1, true) then return r.kind end
    end
  end
  return nil
end

-- Split a sampler series name into source, object and counter:
-- "ethtool.eth0.rx_dropped" -> "ethtool", "eth0", "rx_dropped";
-- "rdma.mlx5_0.1.np_cnp_sent" -> "rdma", "mlx5_0.1", "np_cnp_sent".
function M.split(series)
  local src, rest = series:match("^(%a+)%.(.+)$")
  if src == "ethtool" then
    local ifname, stat = rest:match("^([^.]+)%.(.+)$")
    return src, ifname, stat
  elseif src == "rdma" then
    local dev, port, stat = rest:match("^([^.]+)%.(%d+)%.(.+)$")
    return src, dev and (dev .. "." .. port), stat
  end
  return src
end

-- The same statistic counted at a wider scope on the same interface,
-- whose presence makes this one a part of it (summing both would count
-- twice): ice's VSI "rx_dropped" inside the port's "rx_dropped.nic",
-- i40e's netdev "rx_dropped" inside "port.rx_dropped", per-queue counters
-- (virtio_net "rx0_drops", older "rx_queue_0_drops", mlx5 "rx0_...")
-- inside the interface total "rx_drops".
local function wider(stat)
  local w = { stat .. ".nic", "port." .. stat }
  local d, rest = stat:match("^([rt]x)%d+_(.+)$")
  if not d then d, rest = stat:match("^([rt]x)_queue_%d+_(.+)$") end
  if d then w[#w + 1] = d .. "_" .. rest end
  return w
end

-- Sum counter deltas ({ series = delta }, as counters.delta gives) by
-- kind.  Drops count from ethtool only (RDMA receive-queue shortage
-- counters such as mlx5's out_of_buffer are RDMA errors); pauses, ECN
-- marks and CNPs count from both sources.  rdma_errors: the RDMA
-- counters is_error (strata.lib.rdma_errors.is_error) calls errors,
-- less the congestion kinds.  Returns
-- { drops, pause_frames, xon_frames, ecn_marks, cnp, rdma_errors,
--   present = { drop = n, pause = n, ... },   -- counters of each kind seen
--   rows = { { series, kind, delta }, ... } } -- every classified counter;
-- kind "part": a per-queue or VSI counter whose interface or port total
-- is present too, shown but not added.
function M.summarize(deltas, is_error)
  local s = { drops = 0, pause_frames = 0, xon_frames = 0, ecn_marks = 0,
              cnp = 0, rdma_errors = 0, present = {}, rows = {} }
  local names = {}
  for k in pairs(deltas) do names[#names + 1] = k end
  table.sort(names)
  local function covered(src, obj, stat)
    for _, w in ipairs(wider(stat)) do
      if deltas[src .. "." .. obj .. "." .. w] ~= nil then return true end
    end
    return false
  end
  for _, series in ipairs(names) do
    local v = deltas[series]
    local src, obj, stat = M.split(series)
    if stat and type(v) == "number" then
      local kind = M.classify(stat)
      if kind == "drop" and src ~= "ethtool" then kind = nil end
      if kind and src == "ethtool" and covered(src, obj, stat) then
        kind = "part"
      end
      if kind then
        s.present[kind] = (s.present[kind] or 0) + 1
        s.rows[#s.rows + 1] = { series, kind, v }
        if kind == "part" then -- shown, counted by its wider total
        elseif kind == "drop" then s.drops = s.drops + v
        elseif kind == "pause" then s.pause_frames = s.pause_frames + v
        elseif kind == "xon" then s.xon_frames = s.xon_frames + v
        elseif kind == "ecn" then s.ecn_marks = s.ecn_marks + v
        elseif kind == "cnp" then s.cnp = s.cnp + v end
      elseif src == "rdma" and is_error and is_error(stat) then
        s.present.rdma_error = (s.present.rdma_error or 0) + 1
        s.rows[#s.rows + 1] = { series, "rdma_error", v }
        s.rdma_errors = s.rdma_errors + v
      end
    end
  end
  return s
end

return M
