-- stage_test.lua RGWDIR: model staging (llm.stage, T3 into host memory)
-- against the RGW of lab/rgw.sh: shards listed by prefix, every byte
-- landed, timed; a shard listed larger than it is fails by name.
local s3 = require "strata.s3"
local llm = require "strata.llm"
local vllm = require "strata.lib.vllm"

local dir = assert(arg[1], "usage: stage_test.lua RGWDIR")
local env = {}
for line in io.lines(dir .. "/env") do
  local k, v = line:match("^([%w_]+)=(.*)$")
  if k then env[k] = v end
end
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()

local cl = s3.client { endpoint = env.S3_ENDPOINT, region = env.S3_REGION,
                       credentials_file = env.S3_CREDENTIALS_FILE }
local bucket = "strata-stage"
if cl:request { method = "HEAD", bucket = bucket }.status == 404 then
  cl:create_bucket(bucket)
end
local sizes = { 5 << 20, 3 << 20, (7 << 20) + 13, 1 }
local total = 0
for i, n in ipairs(sizes) do
  cl:put(bucket, ("model/model-%05d-of-%05d.safetensors"):format(i, #sizes),
         string.rep(string.char(65 + i), n))
  total = total + n
end
cl:put(bucket, "other/unrelated", "x")

local shards = vllm.list_shards(cl, bucket, "model/")
check(#shards == #sizes, "listed " .. #shards .. " shards under model/")
local r = llm.stage { client = cl, bucket = bucket, shards = shards,
                      concurrency = 3, memory = "host" }
check(r.failed == 0 and r.bytes == total,
      ("staged %d of %d bytes, %d failed"):format(r.bytes, total, r.failed))
check(r.seconds > 0 and r.first_byte_s > 0 and r.first_byte_s <= r.seconds,
      ("timed: %.4f s, first byte %.4f s, %.2f Gb/s"):format(r.seconds,
        r.first_byte_s, r.gbps))

shards[2].size = shards[2].size + 1
r = llm.stage { client = cl, bucket = bucket, shards = shards,
                concurrency = 2, memory = "host" }
check(r.failed == 1 and r.error and r.error:find("model%-00002", 1) ~= nil,
      "a short shard fails by name: " .. tostring(r.error))
shards[2].size = shards[2].size - 1
shards[#shards + 1] = { key = "model/missing", size = 10 }
r = llm.stage { client = cl, bucket = bucket, shards = shards,
                concurrency = 2, memory = "host" }
check(r.failed == 1 and r.error and r.error:find("404", 1, true) ~= nil,
      "a missing shard fails with its status: " .. tostring(r.error))
local ok, e = pcall(llm.stage, { client = cl, bucket = bucket, shards = {},
                                  memory = "host" })
check(not ok and tostring(e):find("empty", 1, true), "no shards raises")
cl:close()
if check.n > 0 then os.exit(1) end
print("stage: all checks passed")
