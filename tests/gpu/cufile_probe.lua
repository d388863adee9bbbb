-- cufile_probe.lua DIR: cuda.cufile on the GPU machine, a file of DIR
-- written through cuFile then read back into the GPU, O_DIRECT and not,
-- each result (or the error) printed; the storage run's S6/S7 use the
-- same call.  Run with CUFILE_ENV_PATH_JSON naming a cufile.json whose
-- logging level is TRACE (tests/gpu/staging.sh keeps the log).
local cuda = require "strata.cuda"
local json = require "cjson"
local dir = assert(arg[1], "usage: cufile_probe.lua DIR")
local path = dir .. "/strata-cufile-probe.dat"
for _, direct in ipairs { true, false } do
  for _, op in ipairs { "write", "read" } do
    local ok, r = pcall(cuda.cufile, { path = path, dir = op,
                                       size = 256 << 20, direct = direct })
    if not ok then
      r = { error = type(r) == "table" and ("SKIP: " .. tostring(r.skip))
                    or tostring(r) }
    end
    r.asked_direct, r.op = direct, op
    print(json.encode(r))
  end
end
os.remove(path)
