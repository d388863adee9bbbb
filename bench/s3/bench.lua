-- bench/s3/bench.lua RGWDIR [ROUNDS [POINT]]: strata's S3 engine side by
-- side with curl --aws-sigv4 and rclone on the same RGW (lab/rgw.sh).
-- Points: GET and PUT of 256 MiB objects at 1 and 4 streams, of 32 MiB at
-- 16 and of 8 MiB at 64 streams, and a multipart PUT of a 256 MiB object
-- in 64 MiB parts, 4 in flight.  POINT (e.g. "put:4", "mpu:4") runs that
-- one alone (a comma list: several).  Prints a table: median MiB/s of ROUNDS rounds per tool with
-- min/max, and strata / the better peer (ratio of medians; target >= 1.0).
-- GET is also run with verify = true ("strata+v"): the cost of checking
-- every byte, a separate figure, not part of the ratio (the peers check
-- nothing).  Method: docs/s3.md ("Benchmark").
--
-- Every tool moves the same bytes (OBJS objects per point, CONC at a
-- time) and is timed the same way: wall clock around the whole transfer
-- (process start included for the peers, thread and connection set-up
-- for strata).  The tools' order rotates from round to round.
local s3 = require "strata.s3"
local core = require "strata.core"

local dir = assert(arg[1], "usage: bench.lua RGWDIR [ROUNDS [POINT]]")
local ROUNDS = tonumber(arg[2] or "3")
local ONLY = arg[3]
local MiB = 1024 * 1024
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

-- op, streams, object size, objects per round
-- (about 0.5-1 GiB a point and tool: a round takes minutes on 2 cores)
local POINTS = {
  { "put", 1, 256 * MiB, 2 }, { "get", 1, 256 * MiB, 2 },
  { "put", 4, 256 * MiB, 4 }, { "get", 4, 256 * MiB, 4 },
  { "put", 16, 32 * MiB, 16 }, { "get", 16, 32 * MiB, 16 },
  { "put", 64, 8 * MiB, 64 }, { "get", 64, 8 * MiB, 64 },
  { "mpu", 4, 256 * MiB, 1 },
}
local PART = 64 * MiB

local function sh(cmd)
  local ok, how, code = os.execute(cmd)
  if not ok then
    error(("command failed (%s %s): %s"):format(how, code,
          cmd:gsub(SK, "***"):gsub(AK, "***")))
  end
end
-- Run a sh script; the CPU seconds (user + sys) of every process it
-- started and waited for (sh's `times`, second line: its children's).
local function sh_cpu(script)
  local tf = work .. "/times"
  os.remove(tf)
  sh("env -u AWS_CA_BUNDLE sh -c '" .. (script .. "\ntimes > " .. tf)
     :gsub("'", "'\\''") .. "' >/dev/null")
  local f = io.open(tf)
  f:read("l")
  local um, us, sm, ss = f:read("l"):match("(%d+)m([%d.]+)s (%d+)m([%d.]+)s")
  f:close()
  return um * 60 + us + sm * 60 + ss
end
local function out(cmd)
  local f = io.popen(cmd)
  local s = f:read("a")
  f:close()
  return (s:gsub("%s+$", ""))
end

local cl = s3.client{ endpoint = EP, credentials_file = env.S3_CREDENTIALS_FILE }
pcall(cl.create_bucket, cl, BUCKET)

-- per object size: a file of random bytes and a folder of links to it
-- (rclone's source), made once
local srcs = {}
local function source(size, objs)
  local s = srcs[size]
  if not s then
    s = { file = ("%s/obj-%d"):format(work, size),
          dir = ("%s/d-%d"):format(work, size), links = 0 }
    sh(("head -c %d /dev/urandom > %s && mkdir -p %s")
       :format(size, s.file, s.dir))
    srcs[size] = s
  end
  for i = s.links, objs - 1 do
    sh(("ln -sf %s %s/f%d"):format(s.file, s.dir, i))
  end
  s.links = math.max(s.links, objs)
  return s
end

-- curl: one stream per process, CONC processes at a time
local function curl(op, conc, size, objs)
  local src = source(size, objs)
  local cmds = {}
  for i = 0, objs - 1 do
    local url = ("%s/%s/peer-curl-%d-%d"):format(EP, BUCKET, size, i)
    -- RGW refuses curl's signature unless the payload hash header is set
    local base = ("curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user '%s:%s' "
                  .. "-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' ")
                 :format(AK, SK)
    if op == "put" then
      cmds[#cmds + 1] = base .. ("-T %s '%s' -o /dev/null"):format(src.file, url)
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
  local cpu_s = sh_cpu(table.concat(script, "\n"))
  local dt = core.now() - t0
  if core.stat(fail) then error("curl: a transfer failed (" .. op .. ")") end
  return dt, cpu_s
end

-- rclone: --transfers CONC, single-part PUTs and single-stream GETs so
-- each object is one HTTP transfer, as for the others; the multipart
-- point uploads in 64 MiB chunks, 4 in flight (--s3-upload-concurrency)
local RC = ("RCLONE_CONFIG_B_TYPE=s3 "
  .. "RCLONE_CONFIG_B_PROVIDER=Ceph RCLONE_CONFIG_B_ENDPOINT=%s "
  .. "RCLONE_CONFIG_B_ACCESS_KEY_ID=%s RCLONE_CONFIG_B_SECRET_ACCESS_KEY=%s "
  .. "rclone --multi-thread-streams 0 "
  .. "--s3-disable-checksum --ignore-times --no-check-dest -q ")
  :format(EP, AK, SK)
local function rclone(op, conc, size, objs)
  local src = source(size, objs)
  local list = work .. "/list"
  local f = io.open(list, "w")
  for i = 0, objs - 1 do f:write("f", i, "\n") end
  f:close()
  local dst = ("b:%s/peer-rclone-%d"):format(BUCKET, size)
  local t0, cpu_s = core.now()
  if op == "put" then
    cpu_s = sh_cpu(RC .. ("--s3-upload-cutoff 5G --transfers %d --files-from %s "
              .. "copy -L %s %s"):format(conc, list, src.dir, dst))
  elseif op == "mpu" then
    cpu_s = sh_cpu(RC .. ("--s3-upload-cutoff 0 --s3-chunk-size %dM "
              .. "--s3-upload-concurrency %d --transfers 1 --files-from %s "
              .. "copy -L %s %s-mpu"):format(PART // MiB, conc, list,
                                              src.dir, dst))
  else
    cpu_s = sh_cpu(RC .. ("--transfers %d --files-from %s copy %s %s/get")
       :format(conc, list, dst, work))
  end
  local dt = core.now() - t0
  if op == "get" then sh("rm -rf " .. work .. "/get") end
  return dt, cpu_s
end

local function strata_run(op, conc, size, objs, verify)
  local t0 = core.now()
  local r = cl:run{ op = op == "mpu" and "multipart" or op, bucket = BUCKET,
                    size = size, concurrency = conc, count = objs,
                    objects = objs, prefix = ("strata-%d-"):format(size),
                    part_size = op == "mpu" and PART or nil,
                    verify = verify, prepare = false, cleanup = false }
  local dt = core.now() - t0
  assert(r.errors == 0, "strata: " .. tostring(r.first_error))
  assert(r.verify_failures == 0, "strata: GET bytes differ from the PUT's")
  return dt, r.cpu_s
end
local function strata(op, conc, size, objs)
  return strata_run(op, conc, size, objs, false)
end
local function strata_v(op, conc, size, objs)
  return strata_run(op, conc, size, objs, true)
end

local function median(t)
  local s = {}
  for i, v in ipairs(t) do s[i] = v end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2,
         s[1], s[n]
end

local NAMES = { "strata", "curl", "rclone", "strata+v" }
local FN = { strata = strata, curl = curl, rclone = rclone,
             ["strata+v"] = strata_v }
local load0 = out("cut -d' ' -f1-3 /proc/loadavg")
local rows = {}
for _, pt in ipairs(POINTS) do
  local op, conc, size, objs = table.unpack(pt)
  local name = op .. ":" .. conc
  if not ONLY or ("," .. ONLY .. ","):find("," .. name .. ",", 1, true) then
    local tools = { "strata", "curl", "rclone" }
    if op == "get" then tools[#tools + 1] = "strata+v" end
    if op == "mpu" then tools = { "strata", "rclone" } end
    local got, cpu = {}, {}
    for round = 1, ROUNDS do
      -- rotate the order: no tool always follows the same one (the
      -- server's background work after a tool's writes falls on the next)
      for k = 0, #tools - 1 do
        local name = tools[(round + k - 1) % #tools + 1]
        local dt, cpu_s = FN[name](op, conc, size, objs)
        local gib = objs * size / (1024 * MiB)
        got[name] = got[name] or {}
        cpu[name] = cpu[name] or {}
        table.insert(got[name], objs * size / MiB / dt)
        table.insert(cpu[name], cpu_s / gib)
        io.stderr:write(("  %s:%d round %d %s %.0f MiB/s, %.3f CPU-s/GiB, "
                         .. "load %s\n"):format(op, conc, round, name,
                        objs * size / MiB / dt, cpu_s / gib,
                        out("cut -d' ' -f1 /proc/loadavg")))
      end
    end
    local med, row = {}, { op = op, conc = conc, size = size, cells = {},
                           cpu = {} }
    for _, name in ipairs(NAMES) do
      if got[name] then
        local m, lo, hi = median(got[name])
        med[name] = m
        row.cells[name] = ("%5.0f (%4.0f-%4.0f)"):format(m, lo, hi)
        m, lo, hi = median(cpu[name])
        row.cpu[name] = ("%.3f (%.3f-%.3f)"):format(m, lo, hi)
      else
        row.cells[name] = "-"
        row.cpu[name] = "-"
      end
    end
    local peer = math.max(med.curl or 0, med.rclone or 0)
    row.ratio = med.strata / peer
    row.vcost = med["strata+v"] and med["strata+v"] / med.strata
    rows[#rows + 1] = row
    io.stderr:write(("%s:%d %dMiB strata %.0f curl %s rclone %.0f -> %.3f\n")
      :format(op, conc, size // MiB, med.strata, tostring(med.curl),
              med.rclone, row.ratio))
  end
end

print(("S3 bench %s on %s (%s), RGW %s, load average %s before, %s after, "
       .. "%d rounds"):format(os.date("!%Y-%m-%d %H:%M UTC"),
       out("hostname"), out("nproc") .. " x " .. out(
         "sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1"), EP, load0,
       out("cut -d' ' -f1-3 /proc/loadavg"), ROUNDS))
print("MiB/s: median (min-max) of the rounds; ratio = strata / better peer "
      .. "(medians); verify = strata+v / strata")
print("| op | streams | object | strata | curl | rclone | strata / best peer "
      .. "| strata+v (verify) | verify |")
print("|---|---|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  print(("| %s | %d | %d MiB | %s | %s | %s | %.3f | %s | %s |"):format(
    r.op == "mpu" and "PUT multipart 64 MiB parts" or r.op:upper(), r.conc,
    r.size // MiB, r.cells.strata, r.cells.curl, r.cells.rclone, r.ratio,
    r.cells["strata+v"], r.vcost and ("%.3f"):format(r.vcost) or "-"))
end
print("\nCPU seconds (user + sys, every process of the tool) per GiB moved: "
      .. "median (min-max) of the rounds; the load-robust figure")
print("| op | streams | object | strata | curl | rclone | strata+v |")
print("|---|---|---|---|---|---|---|")
for _, r in ipairs(rows) do
  print(("| %s | %d | %d MiB | %s | %s | %s | %s |"):format(
    r.op == "mpu" and "PUT multipart 64 MiB parts" or r.op:upper(), r.conc,
    r.size // MiB, r.cpu.strata, r.cpu.curl, r.cpu.rclone, r.cpu["strata+v"]))
end
for _, pt in ipairs(POINTS) do
  local size, objs = pt[3], pt[4]
  for i = 0, objs - 1 do
    pcall(cl.delete, cl, BUCKET, ("strata-%d-%d"):format(size, i))
    pcall(cl.delete, cl, BUCKET, ("peer-curl-%d-%d"):format(size, i))
    pcall(cl.delete, cl, BUCKET, ("peer-rclone-%d/f%d"):format(size, i))
    pcall(cl.delete, cl, BUCKET, ("peer-rclone-%d-mpu/f%d"):format(size, i))
  end
end
sh("rm -rf " .. work)
