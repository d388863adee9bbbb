-- A stand-in for R7's result (specs/roce/R7.lua needs two RDMA hosts):
-- an incast run that dropped 3 packets, judged by the §32 file's drop
-- band (within tolerance: a warning, not a failure).  The metric names
-- are R7's own.
test {
  id = "R7", layer = "roce", title = "fixture R7: 3 drops under incast",
  run = function()
    return { drops = 3, rdma_errors = 0, sender_errors = 0,
             pause_without_congestion = 0, incast_ratio = 0.93 }
  end,
}
