-- tests/nccl/absent.lua, run with STRATA_NCCL_LIBRARY naming no file:
-- nccl.available() says why, nccl.version() and nccl.run() raise SKIP.
local nccl = require "strata.nccl"
local ok, why = nccl.available()
assert(ok == false and why:find("not loadable (NCCL is not installed)", 1, true), why)
local good, e = pcall(nccl.version)
assert(not good and type(e) == "table" and e.skip:find("not loadable"), tostring(e))
good, e = pcall(nccl.run, { op = "all_reduce" })
-- no GPU here, so CUDA's absence comes first; on a GPU host, NCCL's
assert(not good and type(e) == "table" and e.skip, tostring(e))
print("nccl absent: " .. e.skip)
