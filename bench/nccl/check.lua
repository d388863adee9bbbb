-- bench/nccl/check.lua: the correctness matrix on GPU 0 - every
-- collective, and for the reducing ones every op over several dtypes,
-- 8 B .. 4 MiB (-f 4), 2 iterations; prints one line per run and the
-- total of wrong elements (must be 0).  check.lua OP: that collective only.
local nccl = require "strata.nccl"
local only = arg[1]   -- a collective name: run only its entries
local total, runs = 0, 0
local function one(op, dtype, redop)
  if only and op ~= only then return end
  local ok, r = pcall(nccl.run, { op = op, gpus = 1, min_bytes = 8,
                                  max_bytes = "4M", factor = 4, warmup = 1,
                                  iters = 2, dtype = dtype, redop = redop })
  runs = runs + 1
  if not ok then
    print(("%-15s %-9s %-5s ERROR %s"):format(op, dtype, redop, tostring(r)))
    total = total + 1
    return
  end
  local checked = 0
  for _, w in ipairs(r.rows) do
    if w.oop.wrong then checked = checked + 1 end
    if w.ip.wrong then checked = checked + 1 end
  end
  print(("%-15s %-9s %-5s wrong %d (%d halves checked, %d sizes)")
        :format(op, dtype, redop, r.wrong, checked, #r.rows))
  total = total + r.wrong
end
for _, d in ipairs { "float", "half", "bfloat16", "int8", "uint8", "int32",
                     "uint64", "double" } do
  for _, o in ipairs { "sum", "prod", "max", "min", "avg" } do
    one("all_reduce", d, o)
  end
end
for _, op in ipairs { "reduce_scatter", "reduce" } do
  for _, o in ipairs { "sum", "avg", "max" } do one(op, "float", o) end
  one(op, "bfloat16", "sum")
end
for _, op in ipairs { "all_gather", "broadcast", "alltoall", "sendrecv" } do
  one(op, "float", "sum")
  one(op, "int8", "sum")
end
print(("check: %d runs, %d wrong elements or errors"):format(runs, total))
os.exit(total == 0 and 0 or 1)
