-- strata.lib.s3nic: the fourth witness of S3 over RDMA - the NIC's own
-- RDMA counters grow by about the bytes moved while the netdev's byte
-- counters stay nearly flat (RoCE bypasses the kernel network stack: in
-- minio/rdma-training results/b1-fetch-rdma-20260818-225646.json, 128 MiB
-- of RDMA GET moved 12 KB on the netdev, nic_rx_bytes_delta).  This
-- module reads and measures; the criterion "nic" of each s3rdma row in
-- specs/thresholds.yaml decides (issue 26: no rule outside the criteria).
--
-- Names per driver, from the kernel sources:
--   mlx5 (ethtool -S): rx_vport_rdma_unicast_bytes, tx_vport_rdma_unicast_bytes
--     torvalds/linux @01dd742 drivers/net/ethernet/mellanox/mlx5/core/
--     en_stats.c, vport_stats_desc
--   irdma (hw_counters): ip4InOctets, ip4OutOctets, ip6InOctets, ip6OutOctets
--     torvalds/linux @01798df drivers/infiniband/hw/irdma/verbs.c,
--     irdma_hw_stat_descs
--   rxe (hw_counters): sent_pkts, rcvd_pkts (packets only: bytes are at
--     most packets x path MTU)  torvalds/linux @0f2cb7c drivers/infiniband/
--     sw/rxe/rxe_hw_counters.c; rxe runs over the netdev, so the netdev
--     flatness half does not apply there
-- The netdev's bytes: /sys/class/net/<if>/statistics/{rx,tx}_bytes (the
-- counters family's "net" source).
local M = {}

local IRDMA = { "ip4InOctets", "ip4OutOctets", "ip6InOctets", "ip6OutOctets" }
local MLX5 = { "rx_vport_rdma_unicast_bytes", "tx_vport_rdma_unicast_bytes" }

-- The driver family of an RDMA device from the inventory's driver name.
function M.family(dev, driver)
  driver = tostring(driver or "")
  if driver:find("mlx5") or tostring(dev):find("^mlx5") then return "mlx5" end
  if driver:find("irdma") or tostring(dev):find("^irdma") then return "irdma" end
  if tostring(dev):find("^rxe") or driver:find("rxe") then return "rxe" end
  return "other"
end

-- One reading: {hw = verbs.counters, eth = ethtool stats of the netdev,
-- net = {rx, tx}}; missing parts stay nil.
function M.read(dev, port, netdev)
  local r = {}
  local okv, verbs = pcall(require, "strata.verbs")
  if okv and dev then
    local ok, c = pcall(verbs.counters, { device = dev, port = port or 1 })
    if ok then r.hw = c end
  end
  local okc, counters = pcall(require, "strata.counters")
  if okc and netdev then
    local ok, s = pcall(counters.snapshot, { sources = { "net" } })
    if ok then
      r.net = { rx = s["net." .. netdev .. ".rx_bytes"],
                tx = s["net." .. netdev .. ".tx_bytes"] }
    end
    local ok2, e = pcall(counters.snapshot, { sources = { "ethtool" },
                                              ethtool = { netdev } })
    if ok2 then
      r.eth = {}
      local pre = "ethtool." .. netdev .. "."
      for k, v in pairs(e) do
        if k:sub(1, #pre) == pre then r.eth[k:sub(#pre + 1)] = v end
      end
    end
  end
  return r
end

local function sum(t, names)
  if not t then return nil end
  local s, seen = 0, false
  for _, n in ipairs(names) do
    if t[n] then s, seen = s + t[n], true end
  end
  return seen and s or nil
end

local function sub(a, b) return a and b and a - b or nil end

-- What two readings around a run that moved `moved` bytes by RDMA show.
-- It measures and decides nothing: the criterion "nic" of each s3rdma row
-- (specs/thresholds.yaml) judges the figures.  Returns
--   witness       "read" (the RDMA byte counters were read) or "absent"
--   rdma_bytes    the RDMA counters' growth (rxe: packets x MTU)
--   rdma_ratio    rdma_bytes / moved
--   netdev        "read", "n/a" (rxe: it runs over the netdev, so the
--                 netdev carries the RDMA bytes too) or "absent"
--   netdev_bytes  the netdev's rx + tx growth; netdev_share: / moved
--   why           what was read, in words
-- mtu: the port's active MTU (rxe's packet counters).
function M.measure(family, r0, r1, moved, mtu)
  local rd, how
  if family == "mlx5" then
    rd, how = sub(sum(r1.eth, MLX5), sum(r0.eth, MLX5)),
              "rx/tx_vport_rdma_unicast_bytes"
  elseif family == "irdma" then
    rd, how = sub(sum(r1.hw, IRDMA), sum(r0.hw, IRDMA)),
              "ip4/ip6 In/OutOctets"
  elseif family == "rxe" then
    local p = sub(sum(r1.hw, { "sent_pkts", "rcvd_pkts" }),
                  sum(r0.hw, { "sent_pkts", "rcvd_pkts" }))
    rd, how = p and p * (mtu or 4096), ("sent_pkts+rcvd_pkts x MTU %d")
                                      :format(mtu or 4096)
  end
  local nd = r0.net and r1.net and r0.net.rx and r1.net.rx and
             (r1.net.rx - r0.net.rx) + (r1.net.tx - r0.net.tx) or nil
  local out = { rdma_bytes = rd, netdev_bytes = nd, witness = "absent",
                netdev = family == "rxe" and "n/a" or nd and "read"
                         or "absent" }
  if moved > 0 and nd then out.netdev_share = nd / moved end
  if not rd then
    out.why = ("no RDMA byte counters for driver family %s"):format(family)
    return out
  end
  if moved <= 0 then
    out.why = "nothing moved by RDMA"
    return out
  end
  out.witness, out.rdma_ratio = "read", rd / moved
  out.why = ("%s +%.0f for %.0f bytes moved (x%.3f); netdev +%s%s"):format(
    how, rd, moved, rd / moved, nd and ("%.0f"):format(nd) or "?",
    family == "rxe" and " (n/a: rxe runs over the netdev)" or
    nd and (" (%.4g of the bytes moved)"):format(nd / moved)
    or " (netdev counters not read)")
  return out
end

return M
