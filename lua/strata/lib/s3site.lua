-- strata.lib.s3site: an S3 client for the endpoint a site file names,
-- shared by every spec that talks S3 (specs/s3, specs/s3rdma, E2).
-- Credentials come from the environment or the credentials file the site
-- names, never from a spec; no endpoint means SKIP, never a default.
local s3 = require "strata.s3"

local M = {}

-- Create a bucket that a HEAD found missing.  Several clients (the fleet's
-- storage clients, started at once) may all find it missing and all
-- create it: the loser's 409 BucketAlreadyOwnedByYou (AWS outside
-- us-east-1, OpenStack Swift's s3api) says the bucket is there and ours,
-- which is what we wanted.  409 BucketAlreadyExists (someone else's
-- bucket) and anything else non-2xx stay errors.
function M.create_bucket(cl, bucket)
  local r = cl:request { method = "PUT", bucket = bucket }
  if r.status >= 200 and r.status < 300 then return "created" end
  if r.status == 409 and r.code == "BucketAlreadyOwnedByYou" then return "owned" end
  error(("bucket %s: create (PUT) answered HTTP %d%s"):format(bucket, r.status,
    (r.code or "") ~= "" and (" " .. r.code) or ""), 0)
end

-- s = a site section (site.s3, or site.s3rdma merged over it); what =
-- its name for the messages.  Returns the client; the bucket must exist
-- (created when s.create_bucket allows).
function M.client(t, s, what)
  what = what or "site.s3"
  if type(s) ~= "table" or not s.endpoint or s.endpoint == "" then
    t.skip(what .. ".endpoint is not set: no S3 endpoint configured")
  end
  if not s.bucket then t.skip(what .. ".bucket is not set") end
  local cl = s3.client {
    endpoint = s.endpoint, region = s.region, addressing = s.addressing,
    credentials_file = s.credentials_file, profile = s.profile,
    access_key_env = s.access_key_env, secret_key_env = s.secret_key_env,
    session_token_env = s.session_token_env, ca_bundle = s.ca_bundle,
    sign_payload = s.sign_payload, timeout = s.request_timeout,
    stall = s.stall_timeout,
  }
  local r = cl:request { method = "HEAD", bucket = s.bucket }
  if r.status == 404 and s.create_bucket then
    M.create_bucket(cl, s.bucket)
  elseif r.status == 503 then
    -- a HEAD has no body: no <Code> to quote, but 503 is S3's SlowDown
    error(("bucket %s: HEAD answered HTTP 503: the server is throttling "
           .. "(503 SlowDown), nothing got through"):format(s.bucket), 0)
  elseif r.status ~= 200 then
    error(("bucket %s: HEAD answered HTTP %d%s"):format(s.bucket, r.status,
      (r.code or "") ~= "" and (" " .. r.code) or ""), 0)
  end
  return cl
end

return M
