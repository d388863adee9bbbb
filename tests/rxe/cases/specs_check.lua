-- Check the journal of `strata run specs/verbs` in the guest.
-- usage: strata lua specs_check.lua JOURNAL RUN_EXIT RUN_STDERR [PEER [N
--        [LINE]]]
-- PEER: the far end R2/R3 must name (default "loopback"); N: R2 cells the
-- site selects (default 6); LINE: the site's line rate (0.05).  Figures
-- under TCG vary 2x with the host's load: the checks assert that every
-- verdict agrees with its figures and limits, not that the figures pass.
package.path = arg[0]:match("(.*/)") .. "?.lua;" .. package.path
local cjson = require "cjson"
local C = require "check"
local vs = require "strata.lib.verbsite"

local by = {}
for line in io.lines(arg[1]) do
  local r = cjson.decode(line)
  if r.type == "result" then
    by[r.id] = by[r.id] or {}
    table.insert(by[r.id], r)
  end
end
local function one(id) return (by[id] or {})[1] end

local r1 = one("R1")
C.ok(r1 and r1.status == "PASS" and r1.metrics.ports_active == 1,
     "R1 PASS: rxe0 port 1 PORT_ACTIVE (%s)", r1 and r1.status)

local LINE = tonumber(arg[6] or 0.05)
local measured, pass, skipped = 0, 0, 0
for _, r in ipairs(by.R2 or {}) do
  if r.status == "SKIP" then
    skipped = skipped + 1
  else
    measured = measured + 1
    local m = r.metrics or {}
    C.ok(r.status == "PASS" or r.status == "FAIL",
         "R2 size=%d qps=%d measured (%s %s)", r.cell.size, r.cell.qps,
         r.status, tostring(r.reason))
    C.ok(m.peer == (arg[4] or "loopback"), "R2 far end %s", tostring(m.peer))
    local lim = 0.9 * (m.line_rate_gbps or 0)
    -- the shipped criterion judges 64 KiB and up over 4 QPs and more
    -- (its where); the other cells are measured, not judged
    if r.cell.size >= 65536 and r.cell.qps >= 4 then
      C.ok(m.bw_gbps and m.bw_gbps > 0 and m.line_rate_gbps == LINE and
           r.checks[1] and r.checks[1].limit and
           math.abs(r.checks[1].limit - lim) < 1e-9 and
           (r.status == "PASS") == (m.bw_gbps >= lim),
           "R2 size=%d qps=%d: %.3f Gbit/s judged against 0.9 x %g -> %s",
           r.cell.size, r.cell.qps, m.bw_gbps or -1, LINE, r.status)
    else
      C.ok(m.bw_gbps and m.bw_gbps > 0 and r.status == "PASS" and r.checks[1]
           and r.checks[1].out_of_scope and r.checks[1].not_judged,
           "R2 size=%d qps=%d: %.3f Gbit/s measured, not judged (%s)",
           r.cell.size, r.cell.qps, m.bw_gbps or -1,
           tostring(r.checks[1] and r.checks[1].why))
    end
    if r.status == "PASS" then pass = pass + 1 end
  end
end
local want = tonumber(arg[5] or 6)
C.ok(measured == want and skipped == 42 - want,
     "R2: %d cells measured (site.rdma.bw_sizes x bw_qps), the rest skipped "
     .. "(%d, %d)", want, measured, skipped)
print(("note: R2 %d of %d cells at 90%% of the emulated rate"):format(pass,
      want))

local n3 = 0
for _, r in ipairs(by.R3 or {}) do
  n3 = n3 + 1
  local m = r.metrics or {}
  C.ok(m.median_us and m.median_us > 0 and m.min_us <= m.median_us and
       m.p99_us >= m.median_us and (r.status == "PASS") ==
       (m.median_us <= 100000 and m.tail_ratio <= 100000),
       "R3 size=%d: median %.1f us, p99 %.1f us -> %s", r.cell.size,
       m.median_us or -1, m.p99_us or -1, r.status)
end
C.ok(n3 == 3, "R3: 3 sizes")

-- R6 must agree with the counters R2/R3 recorded
local sum = 0
for _, id in ipairs { "R2", "R3" } do
  for _, r in ipairs(by[id] or {}) do
    for k, v in pairs(r.metrics or {}) do
      local name = k:match("^counters%.(.+)$")
      if name and vs.is_error_counter(name) then sum = sum + v end
    end
  end
end
local r6 = one("R6")
if r6 and not r6.metrics then r6.metrics = {} end
C.ok(r6 and r6.metrics.error_total == sum,
     "R6 error_total %s = sum of R2/R3 error deltas %d",
     r6 and tostring(r6.metrics.error_total), sum)
C.ok(r6 and r6.status == (sum == 0 and "PASS" or "FAIL"),
     "R6 verdict %s matches (TCG retransmits: completer_retry_err, "
     .. "duplicate_request rise under emulation)", r6 and r6.status)
C.ok(r6 and r6.metrics["delta.completer_retry_err"] ~= nil and
     r6.metrics["delta.rcvd_seq_err"] ~= nil,
     "R6 judges rxe's own error counters")

local rc = tonumber(arg[2])
local err = io.open(arg[3]):read("a")
local r3fail = false
for _, r in ipairs(by.R3 or {}) do r3fail = r3fail or r.status ~= "PASS" end
local expect = (sum == 0 and pass == want and not r3fail) and 0 or 1
if err:find("strata.report.workbook' not found", 1, true) then
  print("note: the workbook module is not on this branch yet; exit code not judged")
else
  C.ok(rc == expect, "strata run exit %d (expected %d)", rc, expect)
end
return C.finish()
