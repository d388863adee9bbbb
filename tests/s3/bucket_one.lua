-- bucket_one.lua ENDPOINT BUCKET [CREDENTIALS_FILE]: one client of
-- bucket_race_test.py.  Waits for a line on stdin (the test releases all
-- clients at once), then opens the bucket as every S3 spec does
-- (strata.lib.s3site.client with create_bucket) and prints "ok" or the
-- error.  Without a credentials file the keys come from the environment.
local s3site = require "strata.lib.s3site"
local endpoint, bucket, cred = arg[1], arg[2], arg[3]
local site = { endpoint = endpoint, bucket = bucket, create_bucket = true }
if cred and cred ~= "" then
  site.credentials_file = cred
else
  site.access_key_env, site.secret_key_env = "RACE_AK", "RACE_SK"
end
local t = { skip = function(m) error("SKIP " .. m, 0) end }
io.read("l")
local ok, err = pcall(s3site.client, t, site, "site.s3")
if ok then print("ok") else print("error: " .. tostring(err)) end
