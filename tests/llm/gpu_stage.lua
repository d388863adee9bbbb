-- gpu_stage.lua ENDPOINT BUCKET PREFIX [ROUNDS]: model staging time (T3:
-- S3/TCP, llm.stage) of the shards under PREFIX into GPU memory and into
-- host memory, at concurrency 1, 4 and 16, ROUNDS times each (2),
-- alternating memory kinds; one JSON line per run.  The GPU machine's
-- staging figures (tests/gpu/staging.sh).
local s3 = require "strata.s3"
local llm = require "strata.llm"
local vllm = require "strata.lib.vllm"
local json = require "cjson"
local ep, bucket, prefix = arg[1], arg[2], arg[3]
local rounds = tonumber(arg[4] or 2)
local cl = s3.client { endpoint = ep, timeout = 600 }
local shards = vllm.list_shards(cl, bucket, prefix)
local total = 0
for _, s in ipairs(shards) do total = total + s.size end
io.stderr:write(("%d shards, %d bytes under %s/%s\n"):format(#shards, total,
                bucket, prefix))
local bad = 0
for round = 1, rounds do
  for _, c in ipairs { 1, 4, 16 } do
    for _, mem in ipairs { "cuda", "host" } do
      local ok, r = pcall(llm.stage, { client = cl, bucket = bucket,
                                       shards = shards, concurrency = c,
                                       memory = mem })
      if not ok then
        r = { memory = mem, failed = #shards, bytes = 0,
              error = type(r) == "table" and ("SKIP: " .. tostring(r.skip))
                      or tostring(r) }
      end
      r.round, r.concurrency, r.expected_bytes = round, c, total
      if r.failed ~= 0 or r.bytes ~= total then bad = bad + 1 end
      print(json.encode(r))
      io.stdout:flush()
    end
  end
end
cl:close()
os.exit(bad == 0 and 0 or 1)
