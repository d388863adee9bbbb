-- bench/nccl/sweep.lua OP MIN MAX OUT.json [TIMER]: one strata.nccl sweep
-- on GPU 0 with R9's options (-f 2 -w 5 -n 20, checked), written as JSON
-- (the result table of strata.nccl.run) and printed like nccl-tests.
local nccl = require "strata.nccl"
local cjson = require "cjson"
local op, min, max, out, timer = arg[1], arg[2], arg[3], arg[4], arg[5]
local r = nccl.run { op = op, gpus = 1, min_bytes = min, max_bytes = max,
                     factor = 2, warmup = 5, iters = 20, check = true,
                     timer = timer or "host" }
print(("# strata.nccl %s: NCCL %s (%s), %d rank(s), timer %s")
      :format(op, r.version, r.library, r.nranks, r.timer))
print("#       size    count  oop host_us  event_us  algbw  busbw  #wrong"
      .. "   ip host_us  event_us  algbw  busbw  #wrong")
for _, w in ipairs(r.rows) do
  print(("%12d %8d  %10.2f %9.2f %7.2f %6.2f %6s   %10.2f %9.2f %7.2f %6.2f %6s")
        :format(w.size, w.count, w.oop.host_us, w.oop.event_us, w.oop.algbw,
                w.oop.busbw, tostring(w.oop.wrong or "N/A"), w.ip.host_us,
                w.ip.event_us, w.ip.algbw, w.ip.busbw,
                tostring(w.ip.wrong or "N/A")))
end
print(("# wrong %d, avg busbw %.3f"):format(r.wrong, r.avg_busbw))
local f = assert(io.open(out, "w"))
f:write(cjson.encode(r))
f:close()
