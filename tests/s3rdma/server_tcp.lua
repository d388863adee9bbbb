-- server_tcp.lua ENDPOINT - the reference server's HTTP side on a host
-- without RDMA (--no-rdma): plain S3 round trips (ranges, multipart) with
-- SigV4 checked, a wrong secret refused, the one-round-trip RDMA form and
-- hipobj-rc-v2 both refused with 501 + X-Amz-Rdma-Protocol-Status, the
-- AIStor counter names exposed, and an RDMA run SKIPping for want of a
-- device (never passing).
local s3 = require "strata.s3"
local r = require "strata.s3rdma"
local ep = assert(arg[1])
local cl = s3.client { endpoint = ep, timeout = 30 }
local bad = 0
local function check(c, what)
  print((c and "ok   " or "FAIL ") .. what)
  if not c then bad = bad + 1 end
end

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
local c = r.counters { url = ep .. "/minio/metrics/v3/api/rdma" }
check(c.read_bytes == 0 and c.write_bytes == 0, "AIStor counter names, zero")
local cq = r.counters { prometheus = ep }
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
print(bad == 0 and "server_tcp: all checks passed" or "server_tcp: FAILED")
os.exit(bad == 0 and 0 or 1)
