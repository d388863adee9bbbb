-- client_test.lua RGWDIR: the S3 client against a real Ceph RGW started
-- by rgw.sh: signing, byte-identical round trips of every operation,
-- ranges, multipart edge cases, verified workloads, the metrics scrape.
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local T = dofile(here .. "/lib.lua")
local s3 = require "strata.s3"
local core = require "strata.core"

local env = T.env(assert(arg[1], "usage: client_test.lua RGWDIR"))
local secret
do
  local f = assert(io.open(env.S3_CREDENTIALS_FILE))
  secret = f:read("a"):match("aws_secret_access_key = (%S+)")
  f:close()
end
local messages = {}     -- every error text seen: none may hold the secret
local function raises(fn, pat)
  local m = T.raises(fn, pat)
  messages[#messages + 1] = m
  return m
end

local cl = s3.client{ endpoint = env.S3_ENDPOINT,
                      credentials_file = env.S3_CREDENTIALS_FILE }
local B = "client-test"
cl:create_bucket(B)

T.check("the handle prints no secret", function()
  local s = tostring(cl)
  T.truthy(not s:find(secret, 1, true), "secret absent from tostring")
  T.truthy(s:find(env.S3_ENDPOINT, 1, true), "endpoint shown")
end)

T.check("wrong secret: 403 SignatureDoesNotMatch, clear error", function()
  local bad = os.tmpname()
  local f = assert(io.open(bad, "w"))
  local ak = io.open(env.S3_CREDENTIALS_FILE):read("a")
               :match("aws_access_key_id = (%S+)")
  f:write("[default]\naws_access_key_id = ", ak,
          "\naws_secret_access_key = not-the-secret\n")
  f:close()
  local c2 = s3.client{ endpoint = env.S3_ENDPOINT, credentials_file = bad }
  os.remove(bad)
  local r = c2:request{ method = "GET", bucket = B, key = "x" }
  T.eq(r.status, 403, "status")
  T.eq(r.code, "SignatureDoesNotMatch", "code")
  raises(function() c2:put(B, "x", "data") end,
         "s3.put: PUT /client%-test/x: HTTP 403 SignatureDoesNotMatch")
  c2:close()
  raises(function() c2:get(B, "x") end, "closed")
end)

T.check("no credentials: SKIP with the reason", function()
  local m = raises(function()
    s3.client{ endpoint = env.S3_ENDPOINT,
               access_key_env = "STRATA_TEST_NO_SUCH_VAR",
               secret_key_env = "STRATA_TEST_NO_SUCH_VAR2" }
  end, "no S3 credentials: environment variable STRATA_TEST_NO_SUCH_VAR")
  T.truthy(m:find("^SKIP"), "a SKIP error")
  raises(function() s3.client{ endpoint = "" } end,
         "SKIP: no S3 endpoint configured")
  raises(function() s3.client{ endpoint = env.S3_ENDPOINT, bogus = 1 } end,
         "unknown option 'bogus'")
end)

T.check("payload hash: signed body accepted, mismatch refused", function()
  local c2 = s3.client{ endpoint = env.S3_ENDPOINT, sign_payload = true,
                        credentials_file = env.S3_CREDENTIALS_FILE }
  c2:put(B, "signed", "signed body")
  T.eq(c2:get(B, "signed"), "signed body", "round trip")
  local r = cl:request{ method = "PUT", bucket = B, key = "bad-hash",
                        body = "abc", payload_hash = core.sha256("abd") }
  T.eq(r.status, 400, "status")
  T.eq(r.code, "XAmzContentSHA256Mismatch", "code")
  c2:close()
end)

-- 1 MiB + 7 bytes of varied content; keys needing encoding
local blob = {}
for i = 1, 1024 do blob[i] = string.rep(string.char(i % 251), 1024) end
blob = table.concat(blob) .. "tail!!!"

T.check("put/get/head/delete round trip, byte-identical", function()
  for _, key in ipairs{ "plain", "dir/sub/obj", "a b+c=d&e", "ünï/çødé" } do
    local etag = cl:put(B, key, blob)
    T.truthy(etag:match('^"%x+"$'), "etag " .. etag)
    local got, st = cl:get(B, key)
    T.eq(st, 200, "status")
    T.eq(#got, #blob, "length of " .. key)
    T.truthy(got == blob, "bytes of " .. key)
    local h = cl:head(B, key)
    T.eq(h.size, #blob, "HEAD size")
    T.eq(h.etag, etag, "HEAD etag")
    cl:delete(B, key)
    local r = cl:request{ method = "GET", bucket = B, key = key }
    T.eq(r.status, 404, "after delete")
    T.eq(r.code, "NoSuchKey", "code after delete")
  end
end)

T.check("ranged GET: first, middle, suffix, open, past the end", function()
  cl:put(B, "ranged", blob)
  local cases = { { "bytes=0-0", blob:sub(1, 1) },
                  { "bytes=1000-5000", blob:sub(1001, 5001) },
                  { "bytes=-7", "tail!!!" },
                  { "bytes=1048570-", blob:sub(1048571) } }
  for _, c in ipairs(cases) do
    local got, st = cl:get(B, "ranged", { range = c[1] })
    T.eq(st, 206, c[1] .. " status")
    T.truthy(got == c[2], c[1] .. " bytes")
  end
  local r = cl:request{ method = "GET", bucket = B, key = "ranged",
                        headers = { Range = "bytes=99999999-" } }
  T.eq(r.status, 416, "past the end")
  T.eq(r.code, "InvalidRange", "code")
  T.truthy(r.headers["content-length"], "reply headers lower-cased")
end)

local MiB = 1024 * 1024
local part1 = string.rep("A", 5 * MiB - 3) .. "end"
T.check("multipart: parts joined byte-identical", function()
  local id = cl:mp_create(B, "mp")
  local e1 = cl:mp_part(B, "mp", id, 1, part1)
  local e2 = cl:mp_part(B, "mp", id, 2, blob)
  cl:mp_complete(B, "mp", id, { { 1, e1 }, { 2, e2 } })
  local got = cl:get(B, "mp")
  T.eq(#got, #part1 + #blob, "size")
  T.truthy(got == part1 .. blob, "bytes")
  T.truthy(cl:head(B, "mp").etag:find("%-2\"$"), "multipart etag")
end)

T.check("multipart: EntityTooSmall, InvalidPart, NoSuchUpload", function()
  local id = cl:mp_create(B, "edge")
  local small = cl:mp_part(B, "edge", id, 1, "tiny")
  local e2 = cl:mp_part(B, "edge", id, 2, "tiny too")
  raises(function()
    cl:mp_complete(B, "edge", id, { { 1, small }, { 2, e2 } })
  end, "HTTP 400 EntityTooSmall")
  raises(function()
    cl:mp_complete(B, "edge", id, { { 1, '"0123456789abcdef0123456789abcdef"' } })
  end, "HTTP 400 InvalidPart")
  cl:mp_abort(B, "edge", id)
  raises(function() cl:mp_part(B, "edge", id, 3, "x") end,
         "HTTP 404 NoSuchUpload")
  raises(function() cl:mp_part(B, "edge", "2~no-such-upload", 1, "x") end,
         "HTTP 404 NoSuchUpload")
end)

T.check("workloads: PUT, verified GET, mixed, multipart", function()
  local common = { bucket = B, size = 256 * 1024, concurrency = 2,
                   prefix = "wl-", objects = 4 }
  local function with(t)
    local o = {}
    for k, v in pairs(common) do o[k] = v end
    for k, v in pairs(t) do o[k] = v end
    return o
  end
  local r = cl:run(with{ op = "put", count = 12, cleanup = false })
  T.eq(r.ops, 12, "put ops"); T.eq(r.errors, 0, "put errors")
  T.eq(r.bytes, 12 * 256 * 1024, "put bytes")
  T.truthy(r.lat_p50_ms > 0 and r.lat_p99_ms >= r.lat_p50_ms, "percentiles")
  r = cl:run(with{ op = "get", count = 16, verify = true, prepare = false,
                   cleanup = false, warmup = 0.05 })
  T.eq(r.ops, 16, "get ops"); T.eq(r.verify_failures, 0, "verified")
  T.truthy(r.mbps > 0 and r.gbps > 0 and r.ops_per_s > 0, "rates")
  T.truthy(r.ttfb_p50_ms <= r.lat_p50_ms, "ttfb <= latency")
  -- the check can fail: corrupt one object, GET must notice
  cl:put(B, "wl-1", string.rep("x", 256 * 1024))
  r = cl:run(with{ op = "get", count = 8, verify = true, prepare = false,
                   cleanup = false })
  T.truthy(r.verify_failures >= 1, "corruption detected")
  r = cl:run(with{ op = "get", count = 8, range = 1000, verify = true })
  T.eq(r.bytes, 8 * 1000, "ranged bytes"); T.eq(r.verify_failures, 0, "ranged verify")
  r = cl:run(with{ op = "mixed", duration = 0.5, get_ratio = 0.7,
                   verify = true })
  T.truthy(r.get_ops > 0 and r.put_ops > 0, "mixed did both")
  T.eq(r.errors, 0, "mixed errors"); T.eq(r.verify_failures, 0, "mixed verify")
  r = cl:run{ op = "multipart", bucket = B, size = 11 * MiB,
              part_size = 5 * MiB, concurrency = 3, count = 1,
              prefix = "mpw-", objects = 1, cleanup = false }
  T.eq(r.uploads, 1, "uploads"); T.eq(r.ops, 3, "parts")
  T.eq(r.errors, 0, "mp errors")
  T.eq(cl:head(B, "mpw-0").size, 11 * MiB, "assembled size")
  cl:delete(B, "mpw-0")
  raises(function() cl:run(with{ op = "get", count = 1, memory = "cuda" }) end,
         "SKIP: memory = \"cuda\"")
  raises(function() cl:run(with{ op = "fly", count = 1 }) end, "invalid option 'fly'")
end)

T.check("metrics scrape: server counters move by the bytes moved", function()
  local series, sums = s3.scrape(env.S3_METRICS_URL)
  T.truthy(sums.ceph_rgw_req, "ceph_rgw_req exposed")
  T.truthy(next(series), "series")
  core.sleep(2.2)           -- let earlier traffic reach the mgr first
  local size = 512 * 1024
  local r = cl:run{ op = "put", bucket = B, size = size, concurrency = 2,
                    count = 6, prefix = "met-", objects = 3,
                    metrics = { url = env.S3_METRICS_URL,
                                prefix = "ceph_rgw_", settle = 2.5 } }
  T.truthy(r.server, "deltas present: " .. tostring(r.server_error))
  T.eq(r.server.ceph_rgw_put_b, 6 * size, "ceph_rgw_put_b delta")
  T.eq(r.server.ceph_rgw_put, 6, "ceph_rgw_put delta")
  raises(function() s3.scrape("http://127.0.0.1:1/metrics", { timeout = 2 }) end,
         "s3.scrape: scrape http://127.0.0.1:1/metrics")
end)

T.check("no error message holds the secret", function()
  for _, m in ipairs(messages) do
    T.truthy(not m:find(secret, 1, true), "secret in: " .. m)
  end
end)

-- leave the bucket empty and gone
for _, k in ipairs{ "signed", "ranged", "mp", "wl-0", "wl-1", "wl-2", "wl-3",
                    "bad-hash", "x" } do
  pcall(cl.delete, cl, B, k)
end
pcall(cl.delete_bucket, cl, B)
T.finish()
