-- server_tcp.lua ENDPOINT - the reference server's HTTP side on a host
-- without RDMA (--no-rdma): plain S3 round trips (ranges, multipart) with
-- SigV4 checked, a wrong secret refused, the one-round-trip RDMA form and
-- hipobj-rc-v2 both refused with 501 + X-Amz-Rdma-Protocol-Status, the
-- AIStor counter names exposed, and an RDMA run SKIPping for want of a
-- device (never passing).
local s3 = require "strata.s3"
local r = require "strata.s3rdma"
local rdma_counters = require("strata.lib.s3rdma").counters
local ep = assert(arg[1])
local cl = s3.client { endpoint = ep, timeout = 30 }
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()

cl:create_bucket("strata-h")
local res = r.run { client = cl, mode = "tcp", op = "put", bucket = "strata-h",
                    size = 300001, objects = 2, requests = 2, concurrency = 2 }
check(res.ok == 2 and res.readback_ok == 2, "TCP PUT, read back")
res = r.run { client = cl, mode = "tcp", op = "get", bucket = "strata-h",
              size = 300001, objects = 2, requests = 4, concurrency = 2,
              range_offset = 7, range_length = 1001 }
check(res.ok == 4 and res.verified == 4 and res.verify_errors == 0,
      "TCP ranged GET, bytes checked")
-- parts of 5 MiB: real S3 servers (RGW behind --backend) refuse smaller
res = r.run { client = cl, mode = "tcp", op = "multipart", bucket = "strata-h",
              prefix = "mp", size = 10 * 1048576 + 1, part_size = 5 * 1048576,
              objects = 1, concurrency = 2 }
check(res.ok == 3 and res.readback_ok == 1, "TCP multipart, read back"
      .. (res.first_error and (" (" .. res.first_error .. ")") or ""))

-- a wrong secret: 403 SignatureDoesNotMatch
local env_sk = os.getenv("AWS_SECRET_ACCESS_KEY")
local wrong = s3.client { endpoint = ep, secret_key_env = "STRATA_WRONG_SECRET" }
local x = wrong:request { method = "GET", bucket = "strata-h", key = "strata-s3rdma-0" }
check(x.status == 403 and x.code == "SignatureDoesNotMatch",
      "wrong secret refused (" .. x.status .. " " .. x.code .. ")")
check(env_sk ~= nil, "secret taken from the environment")

local o = r.single { client = cl, bucket = "strata-h", key = "strata-s3rdma-0",
                     size = 16, token = r.token_encode { qpn = 9 } }
check(o.status == "declined" and o.http == 501 and o.rdma_reply == 501,
      "one-round-trip RC token: 501")
x = cl:request { method = "POST", path = "/.hipobj-rc/prepare" }
check(x.status == 501 and
      x.headers["x-amz-rdma-protocol-status"] == "unsupported",
      "PREPARE without x-amz-rdma-protocol: 501 unsupported")
local c = rdma_counters { url = ep .. "/minio/metrics/v3/api/rdma" }
check(c.read_bytes == 0 and c.write_bytes == 0, "AIStor counter names, zero")
-- exactly AIStor's four names on the page (no invented ones)
x = cl:request { method = "GET", path = "/minio/metrics/v3/api/rdma" }
local names = {}
for n in (x.body or ""):gmatch("\n?(minio_[%w_]+)[{ ]") do names[n] = true end
check(names.minio_api_rdma_read_bytes_total and
      names.minio_api_rdma_write_bytes_total and
      names.minio_api_rdma_read_ops_total and
      names.minio_api_rdma_write_ops_total and
      not names.minio_api_rdma_requests_total and
      not names.minio_api_rdma_errors_total and
      not names.minio_api_rdma_declined_total,
      "metrics page: read/write bytes and ops, nothing invented")
check(c.read_ops == 0 and c.write_ops == 0, "ops counters read too")
-- MinIO's v3 inter-node page: the runbook's six rdma series (E2) and
-- MinIO's own sent/recv bytes and errors, nothing else (docs/provenance.md)
x = cl:request { method = "GET", path = "/minio/metrics/v3/system/network/internode" }
local inode, want = {}, {
  "minio_system_network_internode_rdma_write_bytes_total",
  "minio_system_network_internode_rdma_errors_total",
  "minio_system_network_internode_rdma_pool_fallbacks_total",
  "minio_system_network_internode_rdma_nic_inflight_writes",
  "minio_system_network_internode_rdma_nic_credit_waits_total",
  "minio_system_network_internode_rdma_nic_writes_throttled_total",
  "minio_system_network_internode_sent_bytes_total",
  "minio_system_network_internode_recv_bytes_total",
  "minio_system_network_internode_errors_total" }
local ninode = 0
for n, v in (x.body or ""):gmatch("\n?(minio_[%w_]+){[^}]*} (%d+)") do
  inode[n] = tonumber(v)
  ninode = ninode + 1
end
local all = x.status == 200 and ninode == #want
for _, n in ipairs(want) do all = all and inode[n] == 0 end
check(all, ("inter-node page: the runbook's six and MinIO's three, zero (%d series)")
      :format(ninode))
-- a counter URL answering 404: the witness is absent, not an error
local ok404, c404 = pcall(rdma_counters, { url = ep .. "/minio/metrics/v3/nope" })
check(ok404 and type(c404) == "table" and c404.absent and
      c404.absent:find("404", 1, true), "counter URL 404 -> absent ("
      .. tostring(c404 and c404.absent or c404) .. ")")
-- the direction AIStor counts (GET -> read_bytes, PUT -> write_bytes),
-- judged on one synthetic GET and one PUT of 100 bytes each
local get1 = { ok = 1, requests = 1, reply_ok = 1, landed_ok = 1,
               rdma_get_bytes = 100, rdma_put_bytes = 0 }
local put1 = { ok = 1, requests = 1, reply_ok = 1, landed_ok = 1,
               rdma_get_bytes = 0, rdma_put_bytes = 100 }
local z = { read_bytes = 0, write_bytes = 0 }
-- prove measures the counter gap (relative), the criterion
-- "*.counter_gap" (specs/thresholds.yaml) judges it
local pg = r.prove(get1, z, { read_bytes = 100, write_bytes = 0 })
check(pg.verdict == "PROVEN" and pg.counter_gap == 0 and
      pg.counters == "match", "GET proven by read_bytes, gap 0")
local pw = r.prove(get1, z, { read_bytes = 0, write_bytes = 100 })
check(pw.counter_gap == 100 and pw.counters == "gap",
      "GET counted in write_bytes: gap 100 (" .. tostring(pw.counter_gap) .. ")")
local pl = r.prove(get1, z, { read_bytes = 101, write_bytes = 0 })
check(math.abs(pl.counter_gap - 0.01) < 1e-12, "1 % over: gap 0.01 ("
      .. tostring(pl.counter_gap) .. ")")
local pp = r.prove(put1, z, { read_bytes = 0, write_bytes = 100 })
check(pp.verdict == "PROVEN" and pp.counter_gap == 0,
      "PUT proven by write_bytes, gap 0")
-- the shipped criterion judges those gaps: 0 passes, 0.01 and 100 fail
local th = require "strata.thresholds"
local shipped = require("strata.setup").load {
  paths = { STRATA_HOME .. "/specs/s3rdma" },
  thresholds = STRATA_HOME .. "/specs/thresholds.yaml" }
local gapc = {}
for _, c in ipairs(shipped.criteria) do
  if c.id == "E3" and c.metric == "*.counter_gap" then gapc[#gapc + 1] = c end
end
check(#gapc == 1 and tostring(gapc[1].source):find("thresholds.yaml:%d+$"),
      "E3's counter_gap criterion is on the Thresholds sheet ("
      .. tostring(gapc[1] and gapc[1].source) .. ")")
local function gap_ok(v)
  local cks = th.judge(gapc, { metrics = { ["get.counter_gap"] = v } })
  return #cks == 1 and cks[1].ok
end
check(gap_ok(pg.counter_gap) and not gap_ok(pl.counter_gap) and
      not gap_ok(pw.counter_gap), "the shipped criterion: gap 0 passes, "
      .. "0.01 and 100 fail")
local pa = r.prove(get1, c404, c404)
check(pa.verdict == "NOT PROVEN" and pa.counters == "absent" and
      pa.reason:find("404", 1, true), "absent counters: NOT PROVEN, why: "
      .. pa.reason)
-- cuObject descriptors are checked before anything is sent
local okd, errd = pcall(r.cuobj_desc, string.rep("0", 88))
check(not okd and tostring(errd):find("expected exactly 81", 1, true),
      "an 88-hex RC token is no cuObject descriptor")
local cq = rdma_counters { prometheus = ep }
check(cq.read_bytes == 0 and cq.write_bytes == 0 and cq.source == ep,
      "counters through a Prometheus server's instant-query API")
local ok, err = pcall(r.run, { client = cl, mode = "rc", op = "get",
                               bucket = "strata-h", size = 1000 })
check(not ok and tostring(err):find("SKIP", 1, true), "RDMA run without a "
      .. "device: SKIP (" .. tostring(err) .. ")")
ok, err = pcall(r.run, { client = cl, mode = "cuobject", op = "get",
                         bucket = "strata-h", size = 1000 })
check(not ok and tostring(err):find("SKIP", 1, true) and
      tostring(err):find("cuobjclient", 1, true),
      "cuObject provider without its library: SKIP with the reason")
-- GPU memory without a CUDA driver (or a build without CUDA): SKIP
ok, err = pcall(r.run, { client = cl, mode = "tcp", memory = "cuda",
                         op = "get", bucket = "strata-h", size = 1000 })
check(not ok and tostring(err):find("SKIP", 1, true) and
      (tostring(err):find("CUDA", 1, true) or
       tostring(err):find("cuda", 1, true)),
      "GPU memory without CUDA: SKIP with the reason (" .. tostring(err) .. ")")
-- ListObjectsV2 on the directory store (B16 lists model shards with it):
-- prefix, byte order, pages of max-keys with a continuation token, keys
-- XML-escaped, the store's own companion files never listed
cl:create_bucket("strata-l")
for _, k in ipairs { "m/b&c.bin", "m/a.bin", "m/c", "x" } do
  cl:put("strata-l", k, "v:" .. k)
end
local vllm = require "strata.lib.vllm"
local ls = vllm.list_shards(cl, "strata-l", "m/")
check(#ls == 3 and ls[1].key == "m/a.bin" and ls[2].key == "m/b&c.bin" and
      ls[3].key == "m/c" and ls[2].size == #"v:m/b&c.bin",
      "ListObjectsV2 by prefix, in key order, sizes, & unescaped")
local pg = cl:request { method = "GET", bucket = "strata-l",
                        query = "list-type=2&prefix=m%2F&max-keys=2" }
check(pg.status == 200 and pg.body:find("<IsTruncated>true</IsTruncated>", 1, true)
      and pg.body:find("<NextContinuationToken>m/b&amp;c.bin<", 1, true)
      and pg.body:find("<KeyCount>2</KeyCount>", 1, true),
      "ListObjectsV2 pages: max-keys 2, truncated, token the last key")
local all = vllm.list_shards(cl, "strata-l", "")
check(#all == 4 and not pg.body:find("#etag", 1, true),
      "the whole bucket, no companion files")
local nb = cl:request { method = "GET", bucket = "no-such-bucket",
                        query = "list-type=2" }
check(nb.status == 404, "ListObjectsV2 of a missing bucket: 404")
-- T4 staging without an RDMA device: SKIP with the reason; misuse raises
ok, err = pcall(r.stage, { client = cl, bucket = "strata-l", shards = ls })
check(not ok and type(err) == "table" and tostring(err.skip):find("RDMA", 1, true),
      "s3rdma.stage without a device: SKIP (" .. tostring(err) .. ")")
ok, err = pcall(r.stage, { client = cl, bucket = "strata-l", shards = {} })
check(not ok and tostring(err):find("empty list", 1, true),
      "s3rdma.stage with no shards raises")
ok, err = pcall(r.stage, { client = cl, bucket = "strata-l", shards = ls,
                           piece = 1 << 31 })
check(not ok and tostring(err):find("2^31-1", 1, true),
      "s3rdma.stage piece over one transfer raises")
print(check.n == 0 and "server_tcp: all checks passed" or "server_tcp: FAILED")
os.exit(check.n == 0 and 0 or 1)
