-- bench/storage/bench.lua TARGET_DIR [ROUNDS]: strata's storage engine
-- against fio 3.33 (Debian) on the same file, same parameters, the same
-- run, interleaved (the order swaps every round so neither tool always
-- follows the other into a warm cache or a quiet moment).  Points: the
-- rung's own (seq read/write 1 MiB QD32, 4 KiB random read QD32), O_DIRECT,
-- io_uring, one job.  fio's figures: its JSON (--output-format=json)
-- jobs[1].read/write .bw_bytes and .iops; strata's: storage.run's fields
-- of the same names.  Prints one Markdown table of medians and ratios.
local storage = require "strata.storage"
local cjson = require "cjson"

local dir = assert(arg[1], "usage: bench.lua TARGET_DIR [ROUNDS] [RUNTIME_S]")
local rounds = tonumber(arg[2] or "3")
local runtime = tonumber(arg[3] or "5")
local file = dir .. "/strata-bench.dat"
local SIZE = "512M"

local points = {
  { rw = "read", bs = "1M", iodepth = 32, key = "bw_bytes" },
  { rw = "write", bs = "1M", iodepth = 32, key = "bw_bytes" },
  { rw = "randread", bs = "4k", iodepth = 32, key = "iops" },
}

local function fio(p)
  local cmd = ("fio --name=bench --filename=%s --rw=%s --bs=%s --iodepth=%d "
               .. "--numjobs=1 --direct=1 --ioengine=io_uring --size=%s "
               .. "--runtime=%d --time_based --group_reporting "
               .. "--output-format=json 2>&1"):format(file, p.rw, p.bs,
               p.iodepth, SIZE, runtime)
  local f = assert(io.popen(cmd))
  local out = f:read("a")
  f:close()
  local ok, j = pcall(cjson.decode, out:match("{.*}") or "")
  if not ok then error("fio: " .. out:sub(1, 400)) end
  local job = j.jobs[1]
  local d = p.rw:find("write") and job.write or job.read
  return { bw_bytes = d.bw_bytes, iops = d.iops,
           p99_us = d.clat_ns.percentile["99.000000"] / 1e3 }, j["fio version"]
end

local function strata(p)
  local r = storage.run { filename = file, rw = p.rw, bs = p.bs,
                          iodepth = p.iodepth, numjobs = 1, size = SIZE,
                          runtime = runtime, time_based = true }
  return { bw_bytes = r.bw_bytes, iops = r.iops,
           p99_us = r.clat_ns.percentile["99.000000"] / 1e3 }
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
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
for i, p in ipairs(points) do res[i] = { fio = {}, strata = {}, fp99 = {},
                                         sp99 = {} } end
for round = 1, rounds do
  for i, p in ipairs(points) do
    local a, b
    if round % 2 == 1 then
      a, version = fio(p)
      b = strata(p)
    else
      b = strata(p)
      a, version = fio(p)
    end
    local r = res[i]
    r.fio[#r.fio + 1] = a[p.key]
    r.strata[#r.strata + 1] = b[p.key]
    r.fp99[#r.fp99 + 1] = a.p99_us
    r.sp99[#r.sp99 + 1] = b.p99_us
    io.stderr:write(("round %d %s %s: fio %.4g strata %.4g (%.3f)\n"):format(
      round, p.rw, p.bs, a[p.key], b[p.key], b[p.key] / a[p.key]))
  end
end
local load1 = sh("cat /proc/loadavg")
print(("date %s; machine: %s, %s CPUs (%s); target %s (%s); %s; "
       .. "%d rounds x %d s; load before: %s; after: %s"):format(
  os.date("!%Y-%m-%d %H:%M UTC"), sh("uname -r"), sh("nproc"),
  sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'"),
  file, sh("df -T " .. dir .. " | awk 'NR==2{print $2\" on \"$1}'"),
  version or "fio", rounds, runtime, load0, load1))
print()
print("| point | fio | strata | strata/fio | target 0.98 | fio clat p99 us | strata clat p99 us |")
print("|---|---|---|---|---|---|---|")
for i, p in ipairs(points) do
  local r = res[i]
  local f, s = median(r.fio), median(r.strata)
  local unit = p.key == "iops" and 1 or 1048576
  local fmt = p.key == "iops" and "%.0f IOPS" or "%.1f MiB/s"
  print(("| %s %s QD%d | " .. fmt .. " | " .. fmt .. " | %.3f | %s | %.0f | %.0f |")
        :format(p.rw, p.bs, p.iodepth, f / unit, s / unit, s / f,
                s / f >= 0.98 and "met" or "NOT met", median(r.fp99),
                median(r.sp99)))
end
os.remove(file)
