-- host_sign.lua ENDPOINT [CREDENTIALS_FILE] - which `host` a SigV4
-- signature must cover, against a real S3 server (the Ceph RGW of
-- lab/rgw.sh) or the reference server: the Host header as it is
-- sent, with the port or without it (shared/S3RDMA-WIRE.md: the
-- hipobj-rc-v2 reference client signs `host` without the port; AWS-style
-- clients send and sign host:port).  Both forms pass because the s3 layer
-- always sends the very Host value it signed (engine/s3/client.c puts
-- the signed host in the header list itself): servers verify the Host
-- header they received.
local s3 = require "strata.s3"
local ep, creds = assert(arg[1]), arg[2]
local cl = s3.client { endpoint = ep, credentials_file = creds }
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()
local hostport = ep:match("^%a+://([^/]+)")
local host = hostport:match("^(.-):%d+$") or hostport
local B = "strata-host-sign"
pcall(cl.create_bucket, cl, B)
local x = cl:request { method = "HEAD", bucket = B }
check(x.status == 200, "default (host:port as sent): " .. x.status)
x = cl:request { method = "HEAD", bucket = B, headers = { host = hostport } }
check(x.status == 200, "Host " .. hostport .. " sent and signed: " .. x.status)
x = cl:request { method = "HEAD", bucket = B, headers = { host = host } }
check(x.status == 200, "Host " .. host .. " (no port) sent and signed: "
      .. x.status)
print(check.n == 0 and "host_sign: all checks passed" or "host_sign: FAILED")
os.exit(check.n == 0 and 0 or 1)
