-- put_files.lua ENDPOINT BUCKET PREFIX DIR: PUT every file of DIR as
-- <PREFIX><name> (the bucket made when absent), credentials from
-- AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.  The GPU machine's model
-- upload (tests/gpu/staging.sh).
local s3 = require "strata.s3"
local core = require "strata.core"
local ep, bucket, prefix, dir = arg[1], arg[2], arg[3], arg[4]
assert(dir, "usage: put_files.lua ENDPOINT BUCKET PREFIX DIR")
local cl = s3.client { endpoint = ep, timeout = 600 }
if cl:request { method = "HEAD", bucket = bucket }.status == 404 then
  cl:create_bucket(bucket)
end
local names = core.listdir(dir)
table.sort(names)
local total, t0 = 0, core.now()
for _, n in ipairs(names) do
  local f = assert(io.open(dir .. "/" .. n, "rb"))
  local data = f:read("a")
  f:close()
  cl:put(bucket, prefix .. n, data)
  total = total + #data
  print(("put %s%s %d bytes"):format(prefix, n, #data))
end
print(("put %d files, %d bytes in %.2f s"):format(#names, total,
      core.now() - t0))
cl:close()
