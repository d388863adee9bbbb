-- bench/nccl/diag.lua DIR ROUNDS "PINS": the tables of bench/nccl/diag.sh.
-- Per pin (none or a CPU) and collective: per size the median over rounds
-- of nccl-tests' out-of-place time and strata's (host timer), their ratio,
-- and every round's figure at 1 KiB and 1 MiB (one process each: shows
-- whether a process as a whole runs fast or slow).
local parse = require("strata.lib.nccl").parse
local cjson = require "cjson"
local read = require("strata.sys").try_read
local dir, rounds, pins = arg[1], tonumber(arg[2]), arg[3]
local function median(v)
  local c = {}
  for i, x in ipairs(v) do c[i] = x end
  table.sort(c)
  local n = #c
  if n == 0 then return 0 end
  return n % 2 == 1 and c[(n + 1) // 2] or (c[n // 2] + c[n // 2 + 1]) / 2
end
for pin in pins:gmatch("%S+") do
  for _, op in ipairs { "broadcast", "all_gather" } do
    local nt, st = {}, {}
    for r = 1, rounds do
      local t = read(("%s/nt_%s_%s_%d.txt"):format(dir, op, pin, r))
      local j = read(("%s/st_%s_%s_%d.json"):format(dir, op, pin, r))
      if t and j then
        nt[#nt + 1] = parse(t)
        st[#st + 1] = cjson.decode(j)
      end
    end
    print(("\n### %s, pinned to CPU %s (%d rounds)\n"):format(op, pin, #nt))
    print("| size | nccl-tests us | strata us | strata/nt time | nt per round | strata per round |")
    print("|---:|---:|---:|---:|---|---|")
    for i, row in ipairs(nt[1] and nt[1].rows or {}) do
      local a, b, ra, rb = {}, {}, {}, {}
      for k = 1, #nt do
        a[k] = nt[k].rows[i].oop.time_us
        b[k] = st[k].rows[i].oop.host_us
        ra[k] = ("%.2f"):format(a[k])
        rb[k] = ("%.2f"):format(b[k])
      end
      local ma, mb = median(a), median(b)
      print(("| %d | %.2f | %.2f | %.3f | %s | %s |"):format(row.size, ma, mb,
            ma > 0 and mb / ma or 0, table.concat(ra, " "),
            table.concat(rb, " ")))
    end
  end
end
