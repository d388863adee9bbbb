-- RUNBOOK E3 (rung 5, host memory): S3 over RDMA with x-amz-rdma-token
-- into a registered host buffer.  Each cell PUTs objects over RDMA (read
-- back over HTTP, byte for byte), GETs them over RDMA (every byte checked)
-- and does a ranged GET; each phase is proven by three witnesses - the
-- reply header, the bytes that landed, and the server's
-- minio_api_rdma_{read,write}_bytes_total delta - else FAIL "RDMA not
-- proven".  A 501 is DECLINED (FAIL), never a silent fallback.
local lib = require "strata.lib.s3rdma"

local MiB, GiB = 1048576, 1073741824

local function in_list(list, v)
  if type(list) ~= "table" then return true end
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

test {
  id = "E3", layer = "s3rdma", title = "S3 over RDMA into host memory",
  needs = { "E3P" },
  description = "PUT, GET and ranged GET over hipobj-rc-v2 (RC) with "
             .. "x-amz-rdma-token, proven by reply, landed bytes and "
             .. "server counters (T2: RDMA + host memory).",
  tags = { "s3rdma", "rdma", "T2" }, timeout = 900,
  matrix = {
    size = { 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1 * GiB },
    concurrency = { 1, 4, 16, 64 },
    order = { "size", "concurrency" },
    exclude = { { size = 1 * GiB, concurrency = 64 } },
  },
  headline = "get.gbps", units = lib.UNITS,
  run = function(t)
    local s = lib.site(t)
    if not in_list(s.sizes, t.cell.size) then
      t.skip(("size %d is not in site.s3rdma.sizes"):format(t.cell.size))
    end
    if not in_list(s.concurrency, t.cell.concurrency) then
      t.skip(("concurrency %d is not in site.s3rdma.concurrency")
             :format(t.cell.concurrency))
    end
    local out = lib.put_then_get(t, t.cell.size, t.cell.concurrency, "host")
    local cl <close>, s2 = lib.client(t)
    local sz = out["get.size"]
    local len = math.max(1, sz // 3 + 7)
    lib.phase(t, cl, s2, { mode = "rc", op = "get", size = sz,
                           concurrency = 1, objects = 1, requests = 2,
                           range_offset = sz // 5 + 3, range_length = len,
                           prefix = "strata-E3-" }, "range.", out)
    return out
  end,
}
