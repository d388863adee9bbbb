-- strata.lib.nccl: read the output of nccl-tests (all_reduce_perf,
-- all_gather_perf, broadcast_perf, reduce_scatter_perf, sendrecv_perf).
-- Bus bandwidth is nccl-tests' own figure (algbw corrected by the
-- collective's factor, doc/PERFORMANCE.md of nccl-tests), in GB/s.
--
-- The format is nccl-tests' src/util.cu (NVIDIA/nccl-tests 2.19.6,
-- a0b82b2): the result table's columns are read by the names in its
-- header line (writeResultHeader), never by position, because options
-- add columns: -I 1 adds i_min i_max i_p99 i_cv% to each half, -C 1
-- names the time column "cputime", -S 1 appends a "timestamp" that holds
-- a space.  Each half (out-of-place, in-place) starts at its time column.
-- Captured outputs: fixtures/lib/nccl_*.txt (README.md there).
local M = {}

local PER_ITER = { i_min = "min_us", i_max = "max_us", i_p99 = "p99_us",
                   ["i_cv%"] = "cv_pct" }
local HALF = { time = "time_us", cputime = "time_us", algbw = "algbw",
               busbw = "busbw", ["#wrong"] = "wrong" }
local LEAD = { size = true, count = true, type = true, redop = true,
               root = true }

-- The column header line ("#  size  count  type  redop  root  time ...")
-- as a list of { key, half } (half nil for the leading columns) and the
-- index of the timestamp column, if any.
local function header(line, n)
  local cols, half, ts = {}, nil, nil
  local seen = 0
  for w in line:sub(2):gmatch("%S+") do
    if w == "time" or w == "cputime" then
      seen = seen + 1
      half = seen == 1 and "oop" or seen == 2 and "ip" or nil
      if not half then
        error(("nccl-tests output line %d: more than two time columns: %s")
              :format(n, line), 0)
      end
    end
    if w == "timestamp" then
      ts = #cols + 1
      cols[#cols + 1] = { "timestamp" }
    elseif LEAD[w] and not half then
      cols[#cols + 1] = { w }
    elseif half and (HALF[w] or PER_ITER[w]) then
      cols[#cols + 1] = { HALF[w] or PER_ITER[w], half }
    else
      error(("nccl-tests output line %d: unknown column '%s' in the header")
            :format(n, w), 0)
    end
  end
  return cols, ts
end

local function number(f, n, name)
  if f == "N/A" then return nil end
  local v = tonumber(f)
  if v == nil then
    error(("nccl-tests output line %d: column %s is not a number: %s")
          :format(n, name, f), 0)
  end
  return v
end

-- Returns { rows = { {size=, count=, type=, redop=, root=, timestamp=,
-- oop={time_us=, algbw=, busbw=, wrong=, min_us=, max_us=, p99_us=,
-- cv_pct=}, ip={...}} }, avg_busbw = n, out_of_bounds = n, version =
-- "2.19.6", nccl_headers = n, nccl_library = n, test = "all_reduce_perf",
-- concluded = bool, devices = { {rank=, host=, device=, pci=, name=} } }
-- or raises naming the line that does not parse.
function M.parse(text)
  local r = { rows = {}, devices = {}, concluded = false }
  local cols, ts
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    line = line:gsub("\r$", "")
    if line:match("^%s*#") then
      local v, h, l = line:match("^#%s*nccl%-tests version (%S+) nccl%-headers=(%d+) nccl%-library=(%d+)")
      if v then
        r.version, r.nccl_headers, r.nccl_library = v, tonumber(h), tonumber(l)
      end
      r.test = line:match("^#%s*Collective test starting:%s*(%S+)") or r.test
      if line:match("^#%s*Collective test concluded:") then r.concluded = true end
      local avg = line:match("^#%s*Avg bus bandwidth%s*:%s*([%d%.eE%+%-]+)")
      if avg then r.avg_busbw = tonumber(avg) end
      local oob = line:match("^#%s*Out of bounds values%s*:%s*(%d+)")
      if oob then r.out_of_bounds = tonumber(oob) end
      local rank, host, dev, pci, name = line:match(
        "^#%s*Rank%s+(%d+)%s+Group%s+%d+%s+Pid%s+%d+%s+on%s+(%S+)%s+device%s+(%d+)%s+%[([^%]]+)%]%s*(.-)%s*$")
      if rank then
        r.devices[#r.devices + 1] = { rank = tonumber(rank), host = host,
          device = tonumber(dev), pci = pci, name = name }
      end
      local toks = {}
      for w in line:sub(2):gmatch("%S+") do toks[#toks + 1] = w end
      if toks[1] == "size" and toks[2] == "count" then
        cols, ts = header(line, n)
      end
    elseif line:match("^%s*%d") then
      if not cols then
        error(("nccl-tests output line %d: a result row before the column "
               .. "header"):format(n), 0)
      end
      local f = {}
      for w in line:gmatch("%S+") do f[#f + 1] = w end
      local want = ts and ts - 1 or #cols
      if (ts and #f < want + 1) or (not ts and #f ~= want) then
        error(("nccl-tests output line %d: expected %d columns, got %d: %s")
              :format(n, ts and want + 1 or want, #f, line), 0)
      end
      local row = { oop = {}, ip = {} }
      for i, c in ipairs(cols) do
        local key, half = c[1], c[2]
        if key == "timestamp" then
          row.timestamp = table.concat(f, " ", i)
        elseif half then
          row[half][key] = number(f[i], n, key)
        elseif key == "type" or key == "redop" then
          row[key] = f[i]
        else
          row[key] = number(f[i], n, key)
        end
      end
      r.rows[#r.rows + 1] = row
    end
  end
  if #r.rows == 0 then error("nccl-tests output has no result rows", 0) end
  return r
end

-- The same result from the file -J writes (nccl-tests' JSON report,
-- "version": 3): results[].out_of_place / in_place {time or cpu_time,
-- alg_bw, bus_bw, nwrong} and, with -I 1, *_per_iter {min_us, max_us,
-- p99_us, cv_pct, ...}.  Raises when it is not such a report.
function M.parse_json(text)
  local cjson = require "cjson"
  local ok, d = pcall(cjson.decode, text)
  if not ok or type(d) ~= "table" or type(d.results) ~= "table" then
    error("nccl-tests JSON report: no results list ("
          .. (ok and "not a report" or tostring(d)) .. ")", 0)
  end
  local function num(v) return type(v) == "number" and v or nil end
  local function half(h, it)
    if type(h) ~= "table" then return {} end
    local o = { time_us = num(h.time) or num(h.cpu_time),
                algbw = num(h.alg_bw), busbw = num(h.bus_bw),
                wrong = num(h.nwrong) }
    if type(it) == "table" then
      o.min_us, o.max_us = num(it.min_us), num(it.max_us)
      o.p99_us, o.cv_pct = num(it.p99_us), num(it.cv_pct)
    end
    return o
  end
  local r = { rows = {}, devices = {}, concluded = d.end_time ~= nil,
              nccl_library = num(d.nccl_version),
              out_of_bounds = type(d.out_of_bounds) == "table"
                              and num(d.out_of_bounds.count) or nil,
              avg_busbw = type(d.average_bus_bandwidth) == "table"
                          and num(d.average_bus_bandwidth.bandwidth) or nil }
  for _, x in ipairs(d.results) do
    r.rows[#r.rows + 1] = {
      size = num(x.size), count = num(x.count), type = x.type,
      redop = x.redop, root = tonumber(x.root),
      oop = half(x.out_of_place, x.out_of_place_per_iter),
      ip = half(x.in_place, x.in_place_per_iter),
    }
  end
  local cfg = type(d.config) == "table" and d.config or {}
  for _, dv in ipairs(type(cfg.devices) == "table" and cfg.devices or {}) do
    r.devices[#r.devices + 1] = { rank = dv.rank, host = dv.hostname,
      device = dv.device, pci = dv.device_hex, name = dv.device_info }
  end
  if #r.rows == 0 then error("nccl-tests JSON report has no results", 0) end
  return r
end

-- Summary metrics: bus bandwidth at the largest size, wrong values total.
-- The headline is the out-of-place figure, as nccl-tests users quote it:
-- in place, a collective on one rank moves nothing and its "bandwidth" is
-- meaningless (2e7 GB/s on one H200), so it is reported on its own.
function M.summary(p)
  local last = p.rows[#p.rows]
  local wrong = 0
  for _, row in ipairs(p.rows) do
    wrong = wrong + (row.oop.wrong or 0) + (row.ip.wrong or 0)
  end
  return {
    busbw_gbs = last.oop.busbw, algbw_gbs = last.oop.algbw,
    busbw_inplace_gbs = last.ip.busbw,
    max_size = last.size, avg_busbw_gbs = p.avg_busbw,
    wrong = wrong + (p.out_of_bounds or 0),
  }
end

-- The columns of R9's per-size table and its rows, from either engine's
-- result (nccl.parse, nccl.parse_json or strata.nccl.run).
M.COLUMNS = { "size (B)", "count", "time us (out-of-place)", "algbw GB/s",
              "busbw GB/s", "wrong", "busbw in-place", "wrong in-place" }
function M.rows(p)
  local rows = {}
  for _, row in ipairs(p.rows) do
    rows[#rows + 1] = { row.size, row.count, row.oop.time_us, row.oop.algbw,
                        row.oop.busbw, row.oop.wrong or "N/A", row.ip.busbw,
                        row.ip.wrong or "N/A" }
  end
  return rows
end

-- nccl-tests' bus bandwidth factor (src/<coll>.cu <Coll>GetBw): 2(n-1)/n
-- all_reduce; (n-1)/n all_gather, reduce_scatter, alltoall; 1 otherwise.
function M.bus_factor(op, n)
  if op == "all_reduce" then return 2 * (n - 1) / n end
  if op == "all_gather" or op == "reduce_scatter" or op == "alltoall" then
    return (n - 1) / n
  end
  return 1
end

-- Measure the GPU-pair matrix against its reference: pairs = { {busbw=,
-- wrong=, ...}, ... }; the reference is site_value when given, else the
-- median of the pairs.  Sets p.ratio (busbw / reference) on each pair;
-- returns { reference, basis, median, min, min_ratio, slowest, wrong }.
-- How low a ratio may go is a criterion (R9P.min_pair_ratio in
-- specs/thresholds.yaml), not decided here.
function M.pair_ratios(pairs, site_value)
  local v = {}
  for _, p in ipairs(pairs) do v[#v + 1] = p.busbw or 0 end
  table.sort(v)
  local median = 0
  if #v > 0 then
    median = #v % 2 == 1 and v[(#v + 1) // 2] or (v[#v // 2] + v[#v // 2 + 1]) / 2
  end
  local ref, basis = median, ("median of %d pairs"):format(#v)
  if site_value then ref, basis = site_value, "site nccl.pair_busbw_gbs" end
  local out = { reference = ref, basis = basis, median = median,
                min = v[1] or 0, wrong = 0 }
  for _, p in ipairs(pairs) do
    p.ratio = ref > 0 and (p.busbw or 0) / ref or 0
    if not out.min_ratio or p.ratio < out.min_ratio then
      out.min_ratio, out.slowest = p.ratio, p
    end
    out.wrong = out.wrong + (p.wrong or 0)
  end
  return out
end

return M
