-- strata.lib.nccl: read the output of nccl-tests (all_reduce_perf,
-- all_gather_perf, broadcast_perf, reduce_scatter_perf, sendrecv_perf).
-- Bus bandwidth is nccl-tests' own figure (algbw corrected by the
-- collective's factor, docs/PERFORMANCE.md of nccl-tests), in GB/s.
local M = {}

-- Returns { rows = { {size=, count=, type=, redop=, root=, oop={time_us=,
-- algbw=, busbw=, wrong=}, ip={...}} }, avg_busbw = n, out_of_bounds = n }
-- or raises naming the line that does not parse.
function M.parse(text)
  local r = { rows = {} }
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local avg = line:match("^#%s*Avg bus bandwidth%s*:%s*([%d%.eE%+%-]+)")
    if avg then r.avg_busbw = tonumber(avg) end
    local oob = line:match("^#%s*Out of bounds values%s*:%s*(%d+)")
    if oob then r.out_of_bounds = tonumber(oob) end
    if not line:match("^%s*#") and line:match("^%s*%d") then
      local f = {}
      for w in line:gmatch("%S+") do f[#f + 1] = w end
      -- size count type redop root | time algbw busbw wrong | time algbw busbw wrong
      if #f < 13 then
        error(("nccl-tests output line %d: expected 13 columns, got %d: %s")
              :format(n, #f, line), 0)
      end
      local function num(i)
        local v = tonumber(f[i])
        if f[i] == "N/A" then return nil end
        if v == nil then
          error(("nccl-tests output line %d: column %d is not a number: %s")
                :format(n, i, f[i]), 0)
        end
        return v
      end
      r.rows[#r.rows + 1] = {
        size = num(1), count = num(2), type = f[3], redop = f[4],
        root = num(5),
        oop = { time_us = num(6), algbw = num(7), busbw = num(8), wrong = num(9) },
        ip = { time_us = num(10), algbw = num(11), busbw = num(12), wrong = num(13) },
      }
    end
  end
  if #r.rows == 0 then error("nccl-tests output has no result rows", 0) end
  return r
end

-- Summary metrics: bus bandwidth at the largest size, wrong values total.
function M.summary(p)
  local last = p.rows[#p.rows]
  local wrong = 0
  for _, row in ipairs(p.rows) do
    wrong = wrong + (row.oop.wrong or 0) + (row.ip.wrong or 0)
  end
  return {
    busbw_gbs = math.max(last.oop.busbw or 0, last.ip.busbw or 0),
    algbw_gbs = math.max(last.oop.algbw or 0, last.ip.algbw or 0),
    max_size = last.size, avg_busbw_gbs = p.avg_busbw,
    wrong = wrong + (p.out_of_bounds or 0),
  }
end

return M
