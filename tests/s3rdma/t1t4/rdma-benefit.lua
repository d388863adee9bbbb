-- Each phase is a proven one: its counter witness read, counter_gap 0,
-- and the NIC witness's folded figures in the b1-fetch shape (128 MiB
-- moved, 12565 netdev bytes: tests/s3rdma/nic.lua); lib/s3rdma.lua writes
-- them all, the shipped criteria judge them all.
-- T2 with the RUNBOOK's example: throughput +4.5% only, CPU 45% -> 12%:
-- a benefit by CPU (>= 20% lower), so T1T4 PASSes.
test {
  id = "B04", layer = "s3rdma", title = "fixture T2",
  run = function()
    return { ["put.proven"] = true, ["put.counter_gap"] = 0, ["put.failed"] = 0, ["put.fallback_requests"] = 0,
             ["get.proven"] = true, ["get.counter_gap"] = 0, ["get.failed"] = 0, ["get.fallback_requests"] = 0,
             ["rdma_err.local_ack_timeout_err"] = 0,
             nic_witness = "read", nic_rdma_ratio_min = 1.0, nic_netdev = "read",
             nic_netdev_share_max = 0.0001, nic_netdev_bytes_max = 12565, ["get.gbps"] = 20.9, ["put.gbps"] = 11,
             ["get.cpu_util_pct"] = 12, ["put.cpu_util_pct"] = 10,
             ["get.lat_p50_ms"] = 58, ["get.lat_p99_ms"] = 97 }
  end,
}
test {
  id = "B02", layer = "s3rdma", title = "fixture T2 64 MiB x 1",
  run = function()
    return { ["put.proven"] = true, ["put.counter_gap"] = 0, ["put.failed"] = 0, ["put.fallback_requests"] = 0,
             ["get.proven"] = true, ["get.counter_gap"] = 0, ["get.failed"] = 0, ["get.fallback_requests"] = 0,
             ["rdma_err.local_ack_timeout_err"] = 0,
             nic_witness = "read", nic_rdma_ratio_min = 1.0, nic_netdev = "read",
             nic_netdev_share_max = 0.0001, nic_netdev_bytes_max = 12565, ["get.gbps"] = 6, ["get.cpu_util_pct"] = 9,
             ["get.lat_p99_ms"] = 39 }
  end,
}
test {
  id = "B06", layer = "s3rdma", title = "fixture T4",
  run = function(t) t.skip("no GPU (fixture)") end,
}
