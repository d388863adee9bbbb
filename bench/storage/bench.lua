-- bench/storage/bench.lua TARGET_DIR [ROUNDS [RUNTIME_S]]: strata's
-- storage engine against fio 3.33 (Debian) on the same file, the same
-- parameters, the same run, interleaved (the order swaps every round so
-- neither tool always follows the other into a warm cache or a quiet
-- moment).  Points: the rung's own (seq read/write 1 MiB QD32, 4 KiB
-- random read QD32), O_DIRECT, io_uring, at 1 and 4 jobs, each at two
-- submission settings given to both tools alike: fio's defaults
-- (iodepth_batch_submit=1, iodepth_batch_complete_min=1, _max=1) and
-- batched (iodepth_batch_submit=32, iodepth_batch_complete_max=32).
-- fio's figures: its JSON (--output-format=json, --group_reporting)
-- jobs[1].read/write .bw_bytes / .iops / usr_cpu / sys_cpu; strata's:
-- storage.run's fields of the same names; CPU microseconds per I/O of
-- the job threads (fio: (usr_cpu + sys_cpu) x job_runtime / total_ios).
-- Prints one Markdown table: min / median / max of the rounds per tool,
-- the ratio of medians, each round's ratio.
local storage = require "strata.storage"
local cjson = require "cjson"

local dir = assert(arg[1], "usage: bench.lua TARGET_DIR [ROUNDS] [RUNTIME_S]")
local rounds = tonumber(arg[2] or "3")
local runtime = tonumber(arg[3] or "5")
local file = dir .. "/strata-bench.dat"
local SIZE = "512M"

local SETTINGS = {
  { name = "fio default", opts = {} },
  { name = "batched 32", opts = { iodepth_batch_submit = 32,
                                  iodepth_batch_complete_max = 32 } },
}
-- BENCH_POINTS="randread/1/fio default,write/4/batched 32" keeps those
-- points only (rw/jobs/setting); BENCH_FIO="--norandommap" adds fio
-- options to every fio run (to show which of fio's per-I/O work makes a gap)
local only = os.getenv("BENCH_POINTS")
local fio_extra = os.getenv("BENCH_FIO") or ""
local function wanted(rw, nj, set)
  if not only then return true end
  for item in only:gmatch("[^,]+") do
    if item == ("%s/%d/%s"):format(rw, nj, set) then return true end
  end
  return false
end
local points = {}
for _, set in ipairs(SETTINGS) do
  for _, nj in ipairs { 1, 4 } do
    for _, p in ipairs {
      { rw = "read", bs = "1M", key = "bw_bytes" },
      { rw = "write", bs = "1M", key = "bw_bytes" },
      { rw = "randread", bs = "4k", key = "iops" } } do
      if wanted(p.rw, nj, set.name) then
        points[#points + 1] = { rw = p.rw, bs = p.bs, key = p.key,
                                iodepth = 32, numjobs = nj, set = set }
      end
    end
  end
end

local function fio(p)
  local extra = {}
  for k, v in pairs(p.set.opts) do extra[#extra + 1] = ("--%s=%d"):format(k, v) end
  table.sort(extra)
  extra[#extra + 1] = fio_extra
  local cmd = ("fio --name=bench --filename=%s --rw=%s --bs=%s --iodepth=%d "
               .. "--numjobs=%d --direct=1 --ioengine=io_uring --size=%s "
               .. "--runtime=%d --time_based --group_reporting %s "
               .. "--output-format=json 2>&1"):format(file, p.rw, p.bs,
               p.iodepth, p.numjobs, SIZE, runtime, table.concat(extra, " "))
  local f = assert(io.popen(cmd))
  local out = f:read("a")
  f:close()
  local ok, j = pcall(cjson.decode, out:match("{.*}") or "")
  if not ok then error("fio: " .. out:sub(1, 400)) end
  local job = j.jobs[1]
  local d = p.rw:find("write") and job.write or job.read
  -- CPU per I/O: fio's group usr_cpu / sys_cpu are the jobs' summed
  -- CPU time over their summed runtime, job_runtime (ms; stat.c
  -- sum_thread_stats), so their product is the jobs' CPU time
  local ios = d.total_ios > 0 and d.total_ios or 1
  return { bw_bytes = d.bw_bytes, iops = d.iops, ios = d.total_ios,
           cpu = job.usr_cpu + job.sys_cpu,
           us_io = (job.usr_cpu + job.sys_cpu) / 100 * job.job_runtime / 1e3
                   / ios * 1e6 }, j["fio version"]
end

local function strata(p)
  local o = { filename = file, rw = p.rw, bs = p.bs, iodepth = p.iodepth,
              numjobs = p.numjobs, size = SIZE, runtime = runtime,
              time_based = true }
  for k, v in pairs(p.set.opts) do o[k] = v end
  local r = storage.run(o)
  return { bw_bytes = r.bw_bytes, iops = r.iops, ios = r.total_ios, cpu = r.usr_cpu + r.sys_cpu,
           us_io = r.cpu_us_per_io, per_submit = r.ios_per_submit }
end

-- The whole host's busy CPU time (/proc/stat "cpu": all but idle and
-- iowait), in microseconds: the loop worker's and the kernel's share of an
-- I/O as well as the job threads'
local TICK_US = 1e6 / 100  -- USER_HZ is 100 on Linux (proc(5))
local function host_busy_us()
  local f = assert(io.open("/proc/stat"))
  local line = f:read("l")
  f:close()
  local v, total = {}, 0
  for n in line:gmatch("%d+") do v[#v + 1] = tonumber(n) end
  for i = 1, 8 do total = total + (v[i] or 0) end  -- user..steal
  return (total - v[4] - v[5]) * TICK_US
end

local function timed(tool, p)
  local b0 = host_busy_us()
  local a, version = tool(p)
  a.host_us_io = (host_busy_us() - b0) / math.max(a.ios, 1)
  return a, version
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local function sorted(t)
  local c = { table.unpack(t) }
  table.sort(c)
  return c
end

local function sh(cmd)
  local f = io.popen(cmd)
  local s = f:read("a"):gsub("%s+$", "")
  f:close()
  return s
end

-- lay the file out once (strata writes its verifiable pattern)
storage.run { filename = file, rw = "write", bs = "1M", iodepth = 32,
              size = SIZE, verify = true }
local load0 = sh("cat /proc/loadavg")
local version
local res = {}
for i in ipairs(points) do
  res[i] = { fio = {}, strata = {}, fcpu = {}, scpu = {}, ratio = {}, ps = {},
             fus = {}, sus = {}, fhost = {}, shost = {} }
end
for round = 1, rounds do
  for i, p in ipairs(points) do
    local a, b
    if (round + i) % 2 == 1 then
      a, version = timed(fio, p)
      b = timed(strata, p)
    else
      b = timed(strata, p)
      a, version = timed(fio, p)
    end
    local r = res[i]
    r.fio[#r.fio + 1] = a[p.key]
    r.strata[#r.strata + 1] = b[p.key]
    r.fcpu[#r.fcpu + 1] = a.cpu
    r.scpu[#r.scpu + 1] = b.cpu
    r.ratio[#r.ratio + 1] = b[p.key] / a[p.key]
    r.ps[#r.ps + 1] = b.per_submit
    r.fus[#r.fus + 1] = a.us_io
    r.sus[#r.sus + 1] = b.us_io
    r.fhost[#r.fhost + 1] = a.host_us_io
    r.shost[#r.shost + 1] = b.host_us_io
    io.stderr:write(("round %d %s %s x%d %s: fio %.4g strata %.4g (%.3f) "
                     .. "[%s]\n"):format(round, p.rw, p.bs, p.numjobs,
                     p.set.name, a[p.key], b[p.key], b[p.key] / a[p.key],
                     sh("cut -d' ' -f1 /proc/loadavg")))
  end
end
local load1 = sh("cat /proc/loadavg")
print(("date %s; machine: %s, %s CPUs (%s); target %s (%s); %s; "
       .. "%d rounds x %d s; fio options added: %s; load before: %s; "
       .. "after: %s"):format(
  os.date("!%Y-%m-%d %H:%M UTC"), sh("uname -r"), sh("nproc"),
  sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'"),
  file, sh("df -T " .. dir .. " | awk 'NR==2{print $2\" on \"$1}'"),
  version or "fio", rounds, runtime, fio_extra == "" and "none" or fio_extra,
  load0, load1))
print()
print("| setting | point | jobs | fio min / median / max | strata min / median / max "
      .. "| strata/fio (medians) | per-round ratios | 0.98-1.02 | CPU us per I/O fio / "
      .. "strata (medians) | host CPU us per I/O fio / strata (medians) "
      .. "| strata I/Os per submit |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for i, p in ipairs(points) do
  local r = res[i]
  local unit = p.key == "iops" and 1 or 1048576
  local fmt = p.key == "iops" and "%.0f" or "%.0f"
  local function mmm(t)
    local s = sorted(t)
    return (fmt .. " / " .. fmt .. " / " .. fmt):format(s[1] / unit,
      median({ table.unpack(s) }) / unit, s[#s] / unit)
  end
  local f, s = median({ table.unpack(r.fio) }), median({ table.unpack(r.strata) })
  local q = s / f
  local rr = {}
  for _, x in ipairs(sorted(r.ratio)) do rr[#rr + 1] = ("%.2f"):format(x) end
  print(("| %s | %s %s QD%d %s | %d | %s | %s | %.3f | %s | %s | %.2f / %.2f "
         .. "| %.2f / %.2f | %.2f |")
        :format(p.set.name, p.rw, p.bs, p.iodepth,
                p.key == "iops" and "IOPS" or "MiB/s", p.numjobs, mmm(r.fio),
                mmm(r.strata), q, table.concat(rr, " "),
                (q >= 0.98 and q <= 1.02) and "within"
                  or (q > 1.02 and "above" or "below"),
                median(r.fus), median(r.sus), median(r.fhost),
                median(r.shost), median(r.ps)))
end
os.remove(file)
