-- faults_test.lua FAULTDIR: the client and the workload engine against
-- servers that misbehave (fixtures/s3/faulty_server.py via faults.sh):
-- 503 SlowDown / 500 / connection resets mid-run are counted and the run
-- goes on; a server that never answers ends in a timeout, not a hang.
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local T = dofile(here .. "/lib.lua")
local s3 = require "strata.s3"
local core = require "strata.core"
local cjson = require "cjson"

local dir = assert(arg[1], "usage: faults_test.lua FAULTDIR")
local function port(name)
  local f = assert(io.open(dir .. "/" .. name .. ".port"))
  local p = f:read("n")
  f:close()
  return p
end
local function stats()
  local f = assert(io.open(dir .. "/flaky.stats"))
  local t = cjson.decode(f:read("a"))
  f:close()
  return t
end

-- any credentials: the fault servers do not check signatures
local creds = os.tmpname()
do
  local f = assert(io.open(creds, "w"))
  f:write("[default]\naws_access_key_id = AKIDFAULT\n",
          "aws_secret_access_key = fault-secret\n")
  f:close()
end

local flaky = s3.client{ endpoint = "http://127.0.0.1:" .. port("flaky"),
                         credentials_file = creds, stall = 5 }

T.check("flaky server: 503/500/resets counted, the run goes on", function()
  local s0 = stats and pcall(stats) and stats() or
             { requests = 0, ok = 0, slowdown = 0, error = 0, reset = 0 }
  local r = flaky:run{ op = "put", bucket = "b", size = 64 * 1024,
                       concurrency = 2, count = 60, objects = 4,
                       prefix = "f-", cleanup = false }
  local s1 = stats()
  local by = r.errors_by
  T.eq(r.ops + r.errors, 60, "every recorded op is a success or an error")
  T.eq(by["503 SlowDown"], s1.slowdown - s0.slowdown, "503 SlowDown count")
  T.eq(by["500 InternalError"], s1.error - s0.error, "500 count")
  local transport = 0
  for k, v in pairs(by) do
    if k:find("^transport error") then transport = transport + v end
  end
  T.eq(transport, s1.reset - s0.reset, "resets counted as transport errors")
  T.truthy(transport > 0 and by["503 SlowDown"] > 0, "faults happened")
  T.eq(r.ops, s1.ok - s0.ok, "successes")
  T.truthy(r.first_error and not r.first_error:find("fault-secret"),
           "first error described, no secret")
  -- GETs through the same faults; objects written above
  r = flaky:run{ op = "get", bucket = "b", size = 64 * 1024, concurrency = 2,
                 count = 40, objects = 4, prefix = "f-", prepare = false,
                 verify = true }
  T.eq(r.ops + r.errors, 40, "get: success + error")
  T.truthy(r.errors > 0, "get: errors counted")
  T.eq(r.verify_failures, 0, "bytes that arrived are right")
end)

T.check("server that never answers: timeout, not a hang", function()
  local hang = s3.client{ endpoint = "http://127.0.0.1:" .. port("hang"),
                          credentials_file = creds, timeout = 1.5 }
  local t0 = core.now()
  T.raises(function() hang:get("b", "k") end, "s3.get: GET /b/k: timeout")
  T.truthy(core.now() - t0 < 5, "gave up in time")
  local r = hang:run{ op = "get", bucket = "b", size = 1024, count = 2,
                      prepare = false }
  T.eq(r.errors, 2, "both timed out")
  T.eq(r.errors_by["timeout (curl 28)"], 2, "counted as timeouts")
  -- stall detection alone (no overall deadline)
  local stall = s3.client{ endpoint = "http://127.0.0.1:" .. port("hang"),
                           credentials_file = creds, stall = 1 }
  t0 = core.now()
  T.raises(function() stall:head("b", "k") end, "timeout")
  T.truthy(core.now() - t0 < 5, "stall gave up in time")
end)

T.check("nothing listening: transport error naming the request", function()
  local dead = s3.client{ endpoint = "http://127.0.0.1:1",
                          credentials_file = creds }
  T.raises(function() dead:put("b", "k", "x") end,
           "s3.put: PUT /b/k: transport error.*[Cc]onnect")
end)

T.check("HTTPS: the CA bundle named is used; an unknown CA refused", function()
  local ep = "https://localhost:" .. port("tls")
  local ok = s3.client{ endpoint = ep, credentials_file = creds,
                        ca_bundle = dir .. "/ca.pem" }
  local data = string.rep("tls!", 300000)
  ok:put("b", "secure", data)
  T.eq(ok:get("b", "secure"), data, "round trip over TLS")
  local r = ok:run{ op = "get", bucket = "b", size = 65536, concurrency = 2,
                    count = 8, verify = true }
  T.eq(r.ops, 8, "workload over TLS"); T.eq(r.verify_failures, 0, "verified")
  local other = os.tmpname()          -- a bundle without our CA
  io.open(other, "w"):close()
  local bad = s3.client{ endpoint = ep, credentials_file = creds,
                         ca_bundle = other }
  T.raises(function() bad:get("b", "secure") end,
           "s3.get: GET /b/secure: transport error: .*certificate")
  os.remove(other)
end)

T.check("virtual-hosted addressing puts the bucket in the host", function()
  local port_ = port("clean")
  local vh = s3.client{ endpoint = "http://localhost:" .. port_,
                        credentials_file = creds, addressing = "virtual" }
  local path = s3.client{ endpoint = "http://localhost:" .. port_,
                          credentials_file = creds }
  vh:put("vbucket", "k1", "hosted")
  T.eq(vh:get("vbucket", "k1"), "hosted", "virtual-hosted round trip")
  -- the server saw the key at /k1, not /vbucket/k1
  T.eq(path:request{ method = "GET", bucket = "vbucket", key = "k1" }.status,
       404, "not under the path-style name")
  T.eq(path:request{ method = "GET", path = "/k1" }.body, "hosted",
       "stored at the bare key")
end)

os.remove(creds)
T.finish()
