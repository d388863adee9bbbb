-- Each phase is a proven one: its counter witness read, counter_gap 0,
-- and the NIC witness's folded figures in the b1-fetch shape (128 MiB
-- moved, 12565 netdev bytes: tests/s3rdma/nic.lua); lib/s3rdma.lua writes
-- them all, the shipped criteria judge them all.
-- T2 no better than T1 on any count: T1T4 FAILs (no member of
-- T1T4.benefit holds).
test {
  id = "B04", layer = "s3rdma", title = "fixture T2",
  run = function()
    return { ["put.proven"] = true, ["put.counter_gap"] = 0, ["put.failed"] = 0, ["put.fallback_requests"] = 0,
             ["get.proven"] = true, ["get.counter_gap"] = 0, ["get.failed"] = 0, ["get.fallback_requests"] = 0,
             ["rdma_err.local_ack_timeout_err"] = 0,
             nic_witness = "read", nic_rdma_ratio_min = 1.0, nic_netdev = "read",
             nic_netdev_share_max = 0.0001, nic_netdev_bytes_max = 12565, ["get.gbps"] = 21, ["put.gbps"] = 10,
             ["get.cpu_util_pct"] = 40, ["put.cpu_util_pct"] = 30,
             ["get.lat_p50_ms"] = 60, ["get.lat_p99_ms"] = 95 }
  end,
}
test {
  id = "B02", layer = "s3rdma", title = "fixture T2 64 MiB x 1",
  run = function()
    return { ["put.proven"] = true, ["put.counter_gap"] = 0, ["put.failed"] = 0, ["put.fallback_requests"] = 0,
             ["get.proven"] = true, ["get.counter_gap"] = 0, ["get.failed"] = 0, ["get.fallback_requests"] = 0,
             ["rdma_err.local_ack_timeout_err"] = 0,
             nic_witness = "read", nic_rdma_ratio_min = 1.0, nic_netdev = "read",
             nic_netdev_share_max = 0.0001, nic_netdev_bytes_max = 12565, ["get.gbps"] = 5 }
  end,
}
test {
  id = "B06", layer = "s3rdma", title = "fixture T4",
  run = function(t) t.skip("no GPU (fixture)") end,
}
