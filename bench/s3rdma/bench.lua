-- bench.lua ENDPOINT PERFTEST_OUTPUT - one table: for each op, object
-- size and concurrency, the same engine (s3rdma.run) over HTTP and over
-- hipobj-rc-v2 against the same server, and the ratio; the RDMA rows are
-- proven (reply, bytes, counters) or marked.  ib_write_bw's average on
-- the same device is the raw-wire line.
local s3 = require "strata.s3"
local r = require "strata.s3rdma"
local ep, pt = arg[1], arg[2]
local cl = s3.client { endpoint = ep, timeout = 120 }
local metrics = ep .. "/minio/metrics/v3/api/rdma"
local MiB = 1048576
cl:create_bucket("bench")

local function run(mode, op, size, conc)
  local w = { client = cl, bucket = "bench", mode = mode, op = op,
              size = size, concurrency = conc, objects = conc,
              requests = 4 * conc, prefix = "o" .. size .. "-",
              readback = false }
  local c0 = mode == "rc" and r.counters { url = metrics }
  local res = r.run(w)
  local proof = "-"
  if mode == "rc" then
    proof = r.prove(res, c0, r.counters { url = metrics }).verdict
  end
  return res, proof
end

print("# S3 over RDMA vs TCP (reference server, one Soft-RoCE guest, TCG)")
print()
local f = io.open(pt or "", "r")
local raw = f and f:read("a") or ""
if f then f:close() end
local bw = raw:match("\n%s*1048576%s+%d+%s+[%d.]+%s+([%d.]+)")
print(("raw wire: ib_write_bw 1 MiB x 200 on rxe0: %s MB/s average")
      :format(bw or "n/a"))
print()
print("| op | size MiB | conc | TCP MiB/s | RDMA MiB/s | RDMA/TCP | TCP p50 ms "
      .. "| RDMA p50 ms | TCP p99 ms | RDMA p99 ms | TCP CPU % | RDMA CPU % "
      .. "| proof |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for _, op in ipairs { "put", "get" } do
  for _, size in ipairs { MiB, 4 * MiB, 16 * MiB } do
    for _, conc in ipairs { 1, 2 } do
      local tcp = run("tcp", op, size, conc)
      local rd, proof = run("rc", op, size, conc)
      local function f2(x) return x and ("%.1f"):format(x) or "" end
      print(("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |")
            :format(op, size // MiB, conc, f2(tcp.throughput_mibps),
                    f2(rd.throughput_mibps),
                    tcp.throughput_mibps > 0 and
                      ("%.2f"):format(rd.throughput_mibps / tcp.throughput_mibps) or "",
                    f2(tcp.lat_p50_ms), f2(rd.lat_p50_ms), f2(tcp.lat_p99_ms),
                    f2(rd.lat_p99_ms), f2(tcp.cpu_util_pct),
                    f2(rd.cpu_util_pct), proof))
    end
  end
end
print()
print("Method: docs/s3-rdma.md, \"Measurement method\"; 4 x concurrency "
      .. "requests per row, every GET byte checked, CPU = the client "
      .. "process over all cores (the server shares the guest).")
