-- bench/s3/bench.lua RGWDIR [ROUNDS [OP:CONC]]: strata's S3 engine side by side with
-- curl --aws-sigv4 and rclone on the same RGW (lab/rgw.sh), GET and
-- PUT of 256 MiB objects at concurrency 1 and 4.  Prints a ratio table:
-- strata / the better peer (target >= 1.0 everywhere) and strata's CPU
-- seconds per GiB moved.  Method: docs/s3.md ("Benchmark").
--
-- Every tool moves the same bytes (OBJS objects per point, CONC at a
-- time) and is timed the same way: wall clock around the whole transfer
-- (process start included for the peers, thread and connection set-up
-- for strata).  Each point is the best of ROUNDS rounds (default 3), the
-- tools' order rotating from round to round.
local s3 = require "strata.s3"
local core = require "strata.core"

local dir = assert(arg[1], "usage: bench.lua RGWDIR [ROUNDS]")
local ROUNDS = tonumber(arg[2] or "3")
local ONLY = arg[3]          -- e.g. "put:4": that point alone
local MiB = 1024 * 1024
local SIZE = 256 * MiB
local env = {}
for line in io.lines(dir .. "/env") do
  local k, v = line:match("^([%w_]+)=(.*)$")
  if k then env[k] = v end
end
local creds = io.open(env.S3_CREDENTIALS_FILE):read("a")
local AK = creds:match("aws_access_key_id = (%S+)")
local SK = creds:match("aws_secret_access_key = (%S+)")
local EP, BUCKET = env.S3_ENDPOINT, "bench"
local work = os.tmpname()
os.remove(work)
core.mkdir_p(work)

local function sh(cmd)
  local ok, how, code = os.execute(cmd)
  if not ok then
    error(("command failed (%s %s): %s"):format(how, code,
          cmd:gsub(SK, "***"):gsub(AK, "***")))
  end
end

local cl = s3.client{ endpoint = EP, credentials_file = env.S3_CREDENTIALS_FILE }
pcall(cl.create_bucket, cl, BUCKET)

-- a 256 MiB file of random bytes for the peers to upload
local src = work .. "/obj"
sh(("head -c %d /dev/urandom > %s"):format(SIZE, src))
for i = 0, 7 do sh(("ln -sf %s %s/f%d"):format(src, work, i)) end

-- curl: one stream per process, CONC processes at a time
local function curl(op, conc, objs)
  local cmds = {}
  for i = 0, objs - 1 do
    local url = ("%s/%s/peer-curl-%d"):format(EP, BUCKET, i)
    -- RGW refuses curl's signature unless the payload hash header is set
    local base = ("curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user '%s:%s' "
                  .. "-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' ")
                 :format(AK, SK)
    if op == "put" then
      cmds[#cmds + 1] = base .. ("-T %s '%s' -o /dev/null"):format(src, url)
    else
      cmds[#cmds + 1] = base .. ("'%s' -o /dev/null"):format(url)
    end
  end
  -- objs/conc sequential transfers per lane, conc lanes in parallel
  local lanes = {}
  for i, c in ipairs(cmds) do
    local l = (i - 1) % conc + 1
    lanes[l] = (lanes[l] and lanes[l] .. " && " or "") .. c
  end
  local script, fail = {}, work .. "/curl-failed"
  for _, l in ipairs(lanes) do
    script[#script + 1] = "( " .. l .. " || touch " .. fail .. " ) &"
  end
  script[#script + 1] = "wait"
  os.remove(fail)
  local t0 = core.now()
  sh("env -u AWS_CA_BUNDLE sh -c '" .. table.concat(script, "\n")
     :gsub("'", "'\\''") .. "' >/dev/null")
  local dt = core.now() - t0
  if core.stat(fail) then error("curl: a transfer failed (" .. op .. ")") end
  return dt
end

-- rclone: --transfers CONC, single-part PUTs and single-stream GETs so
-- each object is one HTTP transfer, as for the others
local RC = ("env -u AWS_CA_BUNDLE RCLONE_CONFIG_B_TYPE=s3 "
  .. "RCLONE_CONFIG_B_PROVIDER=Ceph RCLONE_CONFIG_B_ENDPOINT=%s "
  .. "RCLONE_CONFIG_B_ACCESS_KEY_ID=%s RCLONE_CONFIG_B_SECRET_ACCESS_KEY=%s "
  .. "rclone --s3-upload-cutoff 5G --multi-thread-streams 0 "
  .. "--s3-disable-checksum --ignore-times --no-check-dest -q ")
  :format(EP, AK, SK)
local function rclone(op, conc, objs)
  local list = work .. "/list"
  local f = io.open(list, "w")
  for i = 0, objs - 1 do f:write("f", i, "\n") end
  f:close()
  local t0 = core.now()
  if op == "put" then
    sh(RC .. ("--transfers %d --files-from %s copy -L %s b:%s/peer-rclone")
       :format(conc, list, work, BUCKET))
  else
    sh(RC .. ("--transfers %d --files-from %s copy b:%s/peer-rclone %s/get")
       :format(conc, list, BUCKET, work))
    sh("rm -rf " .. work .. "/get")
  end
  return core.now() - t0
end

local cpu = {}
local function strata(op, conc, objs)
  local t0 = core.now()
  local r = cl:run{ op = op, bucket = BUCKET, size = SIZE, concurrency = conc,
                    count = objs, objects = objs, prefix = "strata-",
                    prepare = false, cleanup = false }
  local dt = core.now() - t0
  assert(r.errors == 0, "strata: " .. tostring(r.first_error))
  cpu[#cpu + 1] = r.cpu_s_per_gib
  return dt
end

local tools = { { "strata", strata }, { "curl", curl }, { "rclone", rclone } }
io.stderr:write("op   conc   strata     curl   rclone   strata/best-peer\n")
local rows = {}
for _, conc in ipairs{ 1, 4 } do
  local objs = conc == 1 and 4 or 8
  for _, op in ipairs{ "put", "get" } do
   if not ONLY or ONLY == op .. ":" .. conc then
    local best = {}
    for round = 1, ROUNDS do
      -- rotate the order: no tool always follows the same one (the
      -- server's background work after a tool's writes falls on the next)
      for k = 0, #tools - 1 do
        local t = tools[(round + k - 1) % #tools + 1]
        local dt = t[2](op, conc, objs)
        local mibps = objs * SIZE / MiB / dt
        best[t[1]] = math.max(best[t[1]] or 0, mibps)
      end
    end
    local peer = math.max(best.curl, best.rclone)
    rows[#rows + 1] = { op:upper(), conc, best.strata, best.curl, best.rclone,
                        best.strata / peer }
    io.stderr:write(("%-4s %4d %8.0f %8.0f %8.0f   %6.2f x\n")
                    :format(table.unpack(rows[#rows])))
   end
  end
end

table.sort(cpu)
print(("S3 on %s, 256 MiB objects, best of %d rounds (MiB/s)"):format(EP, ROUNDS))
print("op   conc   strata     curl   rclone   strata/best-peer")
for _, r in ipairs(rows) do
  print(("%-4s %4d %8.0f %8.0f %8.0f   %6.2f x"):format(table.unpack(r)))
end
print(("strata CPU per GiB moved: median %.3f s (min %.3f, max %.3f)")
      :format(cpu[(#cpu + 1) // 2], cpu[1], cpu[#cpu]))
for _, k in ipairs{ "strata-", "peer-curl-", "peer-rclone/f" } do
  for i = 0, 7 do pcall(cl.delete, cl, BUCKET, k .. i) end
end
sh("rm -rf " .. work)
