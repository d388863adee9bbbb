-- tests/nccl/family.lua RUN: strata.nccl without a GPU, checked against
-- a captured bench run (bench/nccl/results/<run>: nccl-tests' output and
-- strata's result of the same sweep on one H200).
local nccl = require "strata.nccl"
local lib = require "strata.lib.nccl"
local cjson = require "cjson"
local run = arg[1]
local fails = 0
local function check(cond, what)
  if not cond then
    fails = fails + 1
    io.stderr:write("FAIL: ", what, "\n")
  end
end
local slurp = require("strata.sys").read

-- every collective: nccl-tests' size and count columns (one rank, float)
-- are what nccl.counts computes, and strata's recorded rows match them
check(#nccl.collectives == 7, "seven collectives")
for _, op in ipairs(nccl.collectives) do
  local nt = lib.parse(slurp(("%s/nt_%s_1.txt"):format(run, op)))
  local st = cjson.decode(slurp(("%s/st_%s_1.json"):format(run, op)))
  check(#nt.rows == 31 and #st.rows == 31, op .. " 31 sizes")
  for i, row in ipairs(nt.rows) do
    local bytes = 8 << (i - 1)    -- -b 8 -f 2
    local c = nccl.counts(op, bytes, "float", 1)
    local size = math.max(c.send, c.recv) * 4
    check(size == row.size and c.param == row.count,
          ("%s %d B: size %d count %d, nccl-tests %d %d")
          :format(op, bytes, size, c.param, row.size, row.count))
    check(st.rows[i].size == row.size and st.rows[i].count == row.count,
          op .. " strata row " .. i)
  end
  check(st.wrong == 0 and nt.out_of_bounds == 0, op .. " no wrong values")
  check(st.version == "2.28.3" and nt.nccl_library == 22803, op .. " NCCL 2.28.3")
  -- one GPU: busbw 0 where the factor is (n-1)/n, algbw otherwise
  local last = st.rows[31].oop
  check((lib.bus_factor(op, 1) == 0) == (last.busbw == 0), op .. " busbw factor")
end
local a2a = cjson.decode(slurp(run .. "/st_alltoall_1.json"))
check(a2a.alltoall == "ncclAlltoAll", "alltoall through ncclAlltoAll on 2.28")

-- the factors agree between the C family and the Lua library
for _, op in ipairs(nccl.collectives) do
  for _, n in ipairs { 1, 2, 3, 8, 72 } do
    check(math.abs(nccl.bus_factor(op, n) - lib.bus_factor(op, n)) < 1e-12,
          ("bus factor %s %d"):format(op, n))
  end
end
check(nccl.bus_factor("all_reduce", 8) == 1.75, "all_reduce 8 ranks 1.75")

-- options: unknown names and keys raise naming them; no GPU here: SKIP
local function err(t)
  local ok, e = pcall(nccl.run, t)
  return not ok and tostring(type(e) == "table" and (e.skip and "SKIP: " .. e.skip) or e) or ""
end
check(err { op = "allreduce" }:find("unknown op 'allreduce'", 1, true), "bad op")
check(err { dtype = "fp8" }:find("unknown dtype 'fp8'", 1, true), "bad dtype")
check(err { redop = "mulsum" }:find("unknown redop", 1, true), "bad redop")
check(err { max_bytes = "8Q" }:find("not a size", 1, true), "bad size")
check(err { min_bytes = "2G", max_bytes = "1G" }:find("min_bytes", 1, true), "min > max")
check(err { colour = 1 }:find("unknown option 'colour'", 1, true), "unknown key")
check(err { devices = { 0, 0 } }:find("GPU 0 twice", 1, true), "duplicate GPU")
check(err { op = "broadcast", root = 3, gpus = 2 }:find("root 3", 1, true), "bad root")
check(err { timer = "wall" }:find("unknown timer", 1, true), "bad timer")
check(err { min_bytes = 1, max_bytes = 1000, factor = 1, step = 1 }
      :find("more than 128 sizes", 1, true), "too many sizes")
local e = err { op = "all_reduce", max_bytes = "1M" }
check(e:find("^SKIP: ") ~= nil, "no GPU here: SKIP, got " .. e)

-- R9P's measure: each pair against the median of the pairs, or a site
-- value (how low a ratio may go is R9P.min_pair_ratio in thresholds.yaml)
local pairs = { { busbw = 100 }, { busbw = 98 }, { busbw = 60, wrong = 2 },
                { busbw = 101 } }
local j = lib.pair_ratios(pairs, nil)
check(j.median == 99 and j.reference == 99 and j.min == 60
      and j.wrong == 2, "pairs by median")
check(j.slowest == pairs[3] and math.abs(j.min_ratio - 60 / 99) < 1e-12
      and math.abs(pairs[3].ratio - 60 / 99) < 1e-12, "the slowest pair named")
j = lib.pair_ratios(pairs, 120)
check(j.reference == 120 and math.abs(j.min_ratio - 0.5) < 1e-12
      and j.basis:find("site"), "pairs by site value")

if fails > 0 then
  io.stderr:write(fails, " failure(s)\n")
  os.exit(1)
end
print("nccl family: ok")
