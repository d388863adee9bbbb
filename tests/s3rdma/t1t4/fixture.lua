-- Stand-ins for the TCP rows the s3 specs produce (B01, B03, B05) with
-- fixed metrics, so T1T4's arithmetic and verdicts are tested on the
-- host: T1 (B03) 20 Gbit/s at 45% CPU, p99 100 ms; T3 (B05) skipped.
-- The RDMA rows come from rdma-*.lua.  Each row also reports what the
-- shipped criteria of its ID ask (specs/thresholds.yaml: no failed
-- request, every byte verified, proven, no fallback), so the run is judged
-- by the shipped file as it stands.
test {
  id = "B03", layer = "s3", title = "fixture T1",
  run = function()
    return { ["get.hard_errors"] = 0, ["put.hard_errors"] = 0, ["get.verify_failures"] = 0,
             ["get.ops"] = 4, ["put.ops"] = 4, ["get.gbps"] = 20, ["put.gbps"] = 10,
             ["get.cpu_util_pct"] = 45, ["put.cpu_util_pct"] = 30,
             ["get.lat_p50_ms"] = 60, ["get.lat_p99_ms"] = 100 }
  end,
}
test {
  id = "B01", layer = "s3", title = "fixture T1 64 MiB x 1",
  run = function()
    return { ["get.hard_errors"] = 0, ["put.hard_errors"] = 0, ["get.verify_failures"] = 0,
             ["get.ops"] = 4, ["put.ops"] = 4, ["get.gbps"] = 5, ["get.cpu_util_pct"] = 10,
             ["get.lat_p99_ms"] = 40 }
  end,
}
test {
  id = "B05", layer = "s3", title = "fixture T3",
  run = function(t) t.skip("no GPU (fixture)") end,
}
test {
  id = "R2", layer = "verbs", title = "fixture raw wire",
  -- R2's own parameters: the shipped criterion's where names them
  matrix = { size = { 65536, 1048576 }, qps = { 4 }, order = { "size", "qps" } },
  run = function(t)
    return { bw_gbps = t.cell.size == 65536 and 80 or 100, line_rate_gbps = 88 }
  end,
}
