-- stage.lua ENDPOINT - model staging over S3 over RDMA (T4,
-- s3rdma.stage) against the reference server on rxe0, in the Soft-RoCE
-- guest (stage_guest.sh): a model's named shards PUT over HTTP, listed by
-- prefix (ListObjectsV2), then GET by key over hipobj-rc-v2 into one
-- registered host buffer, each at its offset: every shard whole, every
-- transfer witnessed (reply and landing), the bytes compared with an HTTP
-- GET of each shard; a shard larger than `piece` moves as ranged
-- transfers; a shard listed longer than it is, or missing, fails by
-- name; GPU memory SKIPs with the reason (no GPU in the guest).
local s3 = require "strata.s3"
local s3rdma = require "strata.s3rdma"
local vllm = require "strata.lib.vllm"

local ep = assert(arg[1], "usage: stage.lua ENDPOINT")
local cl = s3.client { endpoint = ep, timeout = 60 }
local bad = 0
local function check(c, what)
  print((c and "ok   " or "FAIL ") .. what)
  if not c then bad = bad + 1 end
end

local bucket = "strata-models"
cl:create_bucket(bucket)
-- distinct bytes per shard (a shard landing at another's offset shows)
local sizes = { (3 << 20) + 5, 1 << 20, 4097, 1, (2 << 20) - 3 }
local total = 0
math.randomseed(7)
for i, n in ipairs(sizes) do
  local t = {}
  for j = 1, 256 do t[j] = string.char(math.random(0, 255)) end
  local block = table.concat(t)
  local data = string.rep(block, n // 256 + 1):sub(1, n)
  cl:put(bucket, ("m/model-%05d-of-%05d.safetensors"):format(i, #sizes),
         data)
  total = total + n
end
cl:put(bucket, "other/x", "not a shard")

local shards = vllm.list_shards(cl, bucket, "m/")
check(#shards == #sizes, ("listed %d shards by prefix"):format(#shards))

local r = s3rdma.stage { client = cl, bucket = bucket, shards = shards,
                         concurrency = 3, memory = "host", verify = true,
                         piece = 1 << 20 }
print(("staged %d bytes in %d transfers, %.4f s (%.3f Gb/s), first "
       .. "landed %.4f s"):format(r.bytes, r.transfers, r.seconds, r.gbps,
       r.first_byte_s))
check(r.failed == 0 and r.bytes == total,
      ("every shard landed whole: %d of %d bytes, %d failed %s"):format(
       r.bytes, total, r.failed, r.error or ""))
-- 4 + 1 + 1 + 1 + 2 transfers of at most 1 MiB
check(r.transfers == 9, "shards over the piece size moved as ranged "
      .. "transfers: " .. r.transfers)
check(r.reply_ok == r.transfers and r.landed_ok == r.transfers,
      ("every transfer witnessed: reply %d, landed %d of %d"):format(
       r.reply_ok, r.landed_ok, r.transfers))
check(r.verified == #sizes and r.verify_errors == 0,
      ("the landed bytes equal each shard's (HTTP GET): %d compared, %d "
       .. "differ"):format(r.verified, r.verify_errors))
check(r.seconds > 0 and r.first_byte_s > 0 and r.first_byte_s <= r.seconds,
      "timed from the first request to the last byte landed")

r = s3rdma.stage { client = cl, bucket = bucket, shards = shards,
                   concurrency = 8, memory = "host", verify = true }
check(r.failed == 0 and r.transfers == #sizes and r.verify_errors == 0,
      "whole shards (piece 1 GiB), 8 workers for 5 shards")

shards[2].size = shards[2].size + 1
r = s3rdma.stage { client = cl, bucket = bucket, shards = shards,
                   concurrency = 2, memory = "host" }
check(r.failed == 1 and r.error and r.error:find("model%-00002") ~= nil,
      "a shard listed longer than it is fails by name: " ..
      tostring(r.error))
shards[2].size = shards[2].size - 1
shards[#shards + 1] = { key = "m/missing.safetensors", size = 10 }
r = s3rdma.stage { client = cl, bucket = bucket, shards = shards,
                   concurrency = 2, memory = "host" }
check(r.failed == 1 and r.error and r.error:find("missing", 1, true) ~= nil,
      "a missing shard fails by name: " .. tostring(r.error))
table.remove(shards)

local ok, e = pcall(s3rdma.stage, { client = cl, bucket = bucket,
                                    shards = shards, memory = "cuda" })
check(not ok and type(e) == "table" and e.skip ~= nil,
      "GPU memory SKIPs with the reason: " .. tostring(type(e) == "table"
      and e.skip or e))
cl:close()
if bad > 0 then os.exit(1) end
print("stage: all checks passed")
