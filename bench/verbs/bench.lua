-- strata vs perftest on the same rxe device, interleaved, in one guest
-- boot (bench/verbs/run drives it).  Prints a ratio table: medians of
-- ROUNDS rounds with min-max, and the guest's clock source (perftest
-- times with the TSC; strata with CLOCK_MONOTONIC, whose cost depends on
-- it: docs/verbs.md).
-- usage (in the guest): strata lua bench.lua [ROUNDS [bw|lat]]
local verbs = require "strata.verbs"
local core = require "strata.core"
local ROUNDS = tonumber(arg[1]) or 3
local ONLY = arg[2]          -- "bw" or "lat": one half only; "lat:send"
                             -- (lat:write, lat:read): that op's latency;
                             -- "bw:8388608x8": that size x QPs alone
local IP = os.getenv("STRATA_RXE_IP") or "10.77.0.1"
local KiB, MiB = 1024, 1048576

local function sh(cmd)
  local f = io.popen(cmd .. " 2>&1")
  local out = f:read("a")
  f:close()
  return out
end

-- One perftest client run against a server started just before it.
-- perftest refuses to report when its cycle-clock calibration is noisy
-- ("Correlation coefficient r^2 < 0.9", common under TCG): retry.  The
-- server may be slow to listen on a loaded machine: the client retries
-- the connection; a server left over is killed before the next run.
local function perftest(tool, args, want)
  local out
  for _ = 1, 4 do
    os.execute(("%s -d rxe0 -x 1 %s >/tmp/pt-server.txt 2>&1 & "
                .. "echo $! >/tmp/pt-server.pid"):format(tool, args))
    for _ = 1, 10 do
      core.sleep(0.5)
      out = sh(("timeout 120 %s -d rxe0 -x 1 %s %s"):format(tool, args, IP))
      if not out:find("Couldn't connect", 1, true) then break end
    end
    local pid = io.open("/tmp/pt-server.pid"):read("l")
    for _ = 1, 20 do
      if not os.execute("kill -0 " .. pid .. " 2>/dev/null") then break end
      core.sleep(0.25)
    end
    os.execute("kill " .. pid .. " 2>/dev/null")
    if out:match(want) then return out end
  end
  return out
end

local function median(t)
  table.sort(t)
  local n = #t
  return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2
end

local function range(t)
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(t) do lo, hi = math.min(lo, v), math.max(hi, v) end
  return lo, hi
end

local rows = {}
local function row(name, ref, mine, unit, better)
  local rlo, rhi = range(ref)
  local mlo, mhi = range(mine)
  local r = { name = name, ref = median(ref), mine = median(mine),
              unit = unit, better = better, rlo = rlo, rhi = rhi,
              mlo = mlo, mhi = mhi }
  r.ratio = r.mine / r.ref
  rows[#rows + 1] = r
  io.stderr:write(("%-28s perftest %10.4f  strata %10.4f %s  ratio %.3f\n")
                  :format(name, r.ref, r.mine, unit, r.ratio))
end

-- WRITE bandwidth: perftest's tx depth and CQ moderation, same iterations
-- per QP: 64 MiB a run where 5 iterations a QP allow it (perftest's
-- minimum).  8 MiB x 32 QPs would need 2 x 512 MiB of buffers per tool:
-- more than the 1 GiB guest.
local points = {}
for _, size in ipairs{ 64 * KiB, MiB, 8 * MiB } do
  for _, qps in ipairs{ 1, 8, 32 } do
    if not (size == 8 * MiB and qps == 32) then
      points[#points + 1] = { size, qps, math.max(5, 64 * MiB // size // qps) }
    end
  end
end
for _, p in ipairs((ONLY or "bw"):find("^lat") and {} or points) do
  local size, qps, n = p[1], p[2], p[3]
  if ONLY and ONLY:find("^bw:") and ONLY ~= ("bw:%dx%d"):format(size, qps) then
    goto next
  end
  local ref, mine = {}, {}
  local depth, cqmod
  for _ = 1, ROUNDS do
    local out = perftest("ib_write_bw", ("-s %d -q %d -n %d --report_gbits")
                         :format(size, qps, n), "\n%s*" .. size .. "%s+%d+%s+[%d%.]+")
    depth = tonumber(out:match("TX depth%s*:%s*(%d+)"))
    cqmod = tonumber(out:match("CQ Moderation%s*:%s*(%d+)"))
    local avg = out:match("\n%s*" .. size .. "%s+%d+%s+[%d%.]+%s+([%d%.]+)")
    if not avg then error("perftest output not understood:\n" .. out) end
    ref[#ref + 1] = tonumber(avg)
    local r = verbs.bw { op = "write", size = size, qps = qps, iters = n,
                         tx_depth = depth, cq_mod = cqmod }
    mine[#mine + 1] = r.bw_gbps
    io.stderr:write(("  round: perftest %.4f, strata %.4f Gbit/s\n")
                    :format(ref[#ref], r.bw_gbps))
  end
  row(("WRITE bw %s x %d QP"):format(size >= MiB and (size // MiB) .. " MiB"
      or (size // KiB) .. " KiB", qps), ref, mine, "Gbit/s", "higher")
  ::next::
end

-- latency (median = perftest's t_typical): WRITE, READ and SEND with
-- perftest's inline size (it inlines nothing on rxe, a device it does not
-- know: "Max inline data : 0[B]") and its iterations
local LAT = { { "write", 2 }, { "write", 4 * KiB }, { "read", 2 },
              { "send", 2 } }
for _, p in ipairs((ONLY or "lat"):find("^bw") and {} or LAT) do
  local op, size = p[1], p[2]
  if ONLY and ONLY:find("^lat:") and ONLY ~= "lat:" .. op then goto next end
  local ref, mine = {}, {}
  for _ = 1, ROUNDS do
    local out = perftest("ib_" .. op .. "_lat", ("-s %d -n 500"):format(size),
                         "\n%s*" .. size .. "%s+%d+%s+[%d%.]+")
    local typ = out:match("\n%s*" .. size .. "%s+%d+%s+[%d%.]+%s+[%d%.]+%s+([%d%.]+)")
    if not typ then error("perftest output not understood:\n" .. out) end
    local inl = tonumber(out:match("Max inline data%s*:%s*(%d+)"))
    ref[#ref + 1] = tonumber(typ)
    local r = verbs.lat { op = op, size = size, iters = 500, inline = inl }
    mine[#mine + 1] = r.median_us
    io.stderr:write(("  round: perftest %.2f us, strata %.2f us\n")
                    :format(ref[#ref], r.median_us))
  end
  row(("%s lat %s median"):format(op:upper(), size == 2 and "2 B" or "4 KiB"),
      ref, mine, "us", "lower")
  ::next::
end

local function first_line(path)
  local f = io.open(path)
  local l = f and f:read("l")
  if f then f:close() end
  return l or "?"
end
print(("\nverbs bench (guest) %s, clocksource %s, guest load %s, "
       .. "%d interleaved rounds"):format(os.date("!%Y-%m-%d %H:%M UTC"),
       first_line("/sys/devices/system/clocksource/clocksource0/"
                  .. "current_clocksource"),
       first_line("/proc/loadavg"):match("^(%S+ %S+ %S+)"), ROUNDS))
print("| point | perftest median (min-max) | strata median (min-max) | "
      .. "strata/perftest | target |")
print("|---|---|---|---|---|")
local bad = 0
for _, r in ipairs(rows) do
  local ok = r.better == "higher" and r.ratio >= 0.98
             or r.better == "lower" and r.ratio <= 1.05
  if not ok then bad = bad + 1 end
  local f = r.unit == "us" and "%.2f" or "%.4f"
  print(("| %s | " .. f .. " (" .. f .. "-" .. f .. ") %s | " .. f .. " ("
         .. f .. "-" .. f .. ") | %.3f | %s %s |"):format(r.name, r.ref,
        r.rlo, r.rhi, r.unit, r.mine, r.mlo, r.mhi, r.ratio,
        r.better == "higher" and ">= 0.98" or "<= 1.05",
        ok and "met" or "MISSED"))
end
print(("\n%d of %d points meet the target (medians of %d interleaved rounds)")
      :format(#rows - bad, #rows, ROUNDS))
return 0
