-- T2 no better than T1 on any count: T1T4 FAILs (host.benefit false).
test {
  id = "B04", layer = "s3rdma", title = "fixture T2",
  run = function()
    return { ["get.gbps"] = 21, ["put.gbps"] = 10,
             ["get.cpu_util_pct"] = 40, ["put.cpu_util_pct"] = 30,
             ["get.lat_p50_ms"] = 60, ["get.lat_p99_ms"] = 95 }
  end,
}
test {
  id = "B02", layer = "s3rdma", title = "fixture T2 64 MiB x 1",
  run = function() return { ["get.gbps"] = 5 } end,
}
test {
  id = "B06", layer = "s3rdma", title = "fixture T4",
  run = function(t) t.skip("no GPU (fixture)") end,
}
