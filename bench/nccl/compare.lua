-- bench/nccl/compare.lua DIR ROUNDS: strata.nccl against nccl-tests from
-- DIR/nt_<op>_<round>.txt (nccl-tests' output) and
-- DIR/st_<op>_<round>.json (sweep.lua).  Per collective and size: the
-- median over rounds of the out-of-place time, algbw = size / time
-- (nccl-tests' algbw for every collective), busbw, and #wrong; strata's
-- time by nccl-tests' host timer and by CUDA events.  Prints a markdown
-- table per collective and a summary at >= 1 MiB: the lowest and the
-- median ratio, and each tool's own spread (the lowest, over those
-- sizes, of its slowest round's algbw over its fastest round's): a ratio
-- under 1 by less than that spread is within the tools' own noise.
local parse = require("strata.lib.nccl").parse
local cjson = require "cjson"
local dir, rounds = arg[1], tonumber(arg[2] or "2")
local OPS = { "all_reduce", "all_gather", "broadcast", "reduce_scatter",
              "reduce", "alltoall", "sendrecv" }
local read = require("strata.sys").try_read
local function median(v)
  table.sort(v)
  local n = #v
  if n == 0 then return nil end
  return n % 2 == 1 and v[(n + 1) // 2] or (v[n // 2] + v[n // 2 + 1]) / 2
end
-- fastest round's time over the slowest round's (= slowest algbw over
-- fastest), 1 with a single round
local function spread(times)
  local lo, hi = math.huge, 0
  for _, t in ipairs(times) do
    lo, hi = math.min(lo, t), math.max(hi, t)
  end
  return hi > 0 and lo / hi or 1
end
local summary = {}
for _, op in ipairs(OPS) do
  local nt, st = {}, {}
  for r = 1, rounds do
    local t = read(("%s/nt_%s_%d.txt"):format(dir, op, r))
    local j = read(("%s/st_%s_%d.json"):format(dir, op, r))
    if t then nt[#nt + 1] = parse(t) end
    if j then st[#st + 1] = cjson.decode(j) end
  end
  if #nt > 0 and #st > 0 then
    print(("\n### %s (%d rounds; nccl-tests %s, NCCL %s)\n"):format(op, #nt,
          nt[1].version or "?", st[1].version))
    print("| size (B) | nccl-tests us | strata us (host) | strata us (events) "
          .. "| nccl-tests algbw | strata algbw | strata/nccl-tests | busbw nt | busbw strata | #wrong nt | #wrong strata |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    local worst, worst_e, wrong_nt, wrong_st, n1m = nil, nil, 0, 0, 0
    local ratios, spread_nt, spread_st = {}, 1, 1
    for i, row in ipairs(nt[1].rows) do
      local tn, th, te, bn, bs = {}, {}, {}, {}, {}
      for _, p in ipairs(nt) do
        local w = p.rows[i]
        tn[#tn + 1] = w.oop.time_us
        bn[#bn + 1] = w.oop.busbw
        wrong_nt = wrong_nt + (w.oop.wrong or 0) + (w.ip.wrong or 0)
      end
      for _, p in ipairs(st) do
        local w = p.rows[i]
        if w.size ~= row.size then
          error(("%s: size %d in nccl-tests, %d in strata"):format(op, row.size, w.size))
        end
        th[#th + 1] = w.oop.host_us
        te[#te + 1] = w.oop.event_us
        bs[#bs + 1] = w.oop.busbw
        wrong_st = wrong_st + (w.oop.wrong or 0) + (w.ip.wrong or 0)
      end
      local mn, mh, me = median(tn), median(th), median(te)
      local an = mn > 0 and row.size / mn / 1e3 or 0
      local ah = mh > 0 and row.size / mh / 1e3 or 0
      local ratio = an > 0 and ah / an or nil
      if row.size >= (1 << 20) and ratio then
        n1m = n1m + 1
        ratios[#ratios + 1] = ratio
        spread_nt = math.min(spread_nt, spread(tn))
        spread_st = math.min(spread_st, spread(th))
        worst = math.min(worst or ratio, ratio)
        local re = me > 0 and (row.size / me / 1e3) / an or 0
        worst_e = math.min(worst_e or re, re)
      end
      print(("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %.2f | %.2f | | |")
            :format(row.size, mn, mh, me, an, ah,
                    ratio and ("%.3f"):format(ratio) or "-", median(bn), median(bs)))
    end
    print(("| total | | | | | | | | | %d | %d |"):format(wrong_nt, wrong_st))
    summary[#summary + 1] = { op, worst, n1m, wrong_nt, wrong_st, worst_e,
                              median(ratios), spread_nt, spread_st }
  end
end
print("\n### summary: strata algbw / nccl-tests algbw, out of place, sizes >= 1 MiB\n")
print("| collective | lowest ratio (host timer) | median ratio (host timer) | lowest ratio (events) | nccl-tests' own spread | strata's own spread | sizes | #wrong nccl-tests | #wrong strata |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
local fail = false
for _, s in ipairs(summary) do
  local function f(v) return v and ("%.3f"):format(v) or "-" end
  print(("| %s | %s | %s | %s | %s | %s | %d | %d | %d |"):format(s[1],
        f(s[2]), f(s[7]), f(s[6]), f(s[8]), f(s[9]), s[3], s[4], s[5]))
  if not s[2] or s[2] < 0.98 or s[5] ~= 0 then fail = true end
end
print(fail and "\ntarget (>= 0.98 at every size >= 1 MiB, #wrong 0): MISSED"
           or "\ntarget (>= 0.98 at every size >= 1 MiB, #wrong 0): met")
