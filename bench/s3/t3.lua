-- bench/s3/t3.lua ENDPOINT CREDENTIALS_FILE [SIZE_MIB [CONC]]: T1 (TCP +
-- host memory) against T3 (TCP + GPU memory) on one endpoint: PUT then
-- verified GET of CONC objects, 4 x CONC operations each.  On a GPU host
-- with no S3 server, fixtures/s3/faulty_server.py --mode flaky
-- --slowdown-every 0 --error-every 0 --reset-every 0 is a fault-free
-- in-memory peer (it does not check signatures).
local s3 = require "strata.s3"
local ep = assert(arg[1], "usage: t3.lua ENDPOINT CREDENTIALS_FILE [MiB [CONC]]")
local cl = s3.client{ endpoint = ep, credentials_file = assert(arg[2]) }
local size = (tonumber(arg[3]) or 64) * 1024 * 1024
local conc = tonumber(arg[4]) or 4
pcall(cl.create_bucket, cl, "strata-t3")
print("mem  op  ops err bad    MB/s  p50 ms  p99 ms  copy s  copy Gbit/s")
for _, mem in ipairs{ "host", "cuda" } do
  for _, op in ipairs{ "put", "get" } do
    local ok, r = pcall(cl.run, cl, {
      op = op, bucket = "strata-t3", size = size, concurrency = conc,
      count = 4 * conc, objects = conc, memory = mem, verify = true,
      prepare = false, cleanup = op == "get", prefix = "t3-" .. mem .. "-" })
    if not ok then
      print(("%-4s %-3s %s"):format(mem, op, tostring(r)))
    else
      print(("%-4s %-3s %3d %3d %3d %7.0f %7.1f %7.1f %7s %12s"):format(
        mem, op, r.ops, r.errors, r.verify_failures, r.mbps, r.lat_p50_ms,
        r.lat_p99_ms, r.gpu_copy_s and ("%.3f"):format(r.gpu_copy_s) or "-",
        r.gpu_copy_gbps and ("%.0f"):format(r.gpu_copy_gbps) or "-"))
    end
  end
end
