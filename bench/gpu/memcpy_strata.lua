-- strata's cuda.copy_bw over the same sizes as memcpy_torch.py.
-- usage: strata lua memcpy_strata.lua DEVICE WARMUP REPEATS SIZE...
local cuda = require "strata.cuda"
local cjson = require "cjson"
local dev, warmup, repeats = tonumber(arg[1]), tonumber(arg[2]),
  tonumber(arg[3])
for _, dir in ipairs { "h2d", "d2h", "d2d" } do
  for i = 4, #arg do
    local r = cuda.copy_bw { dir = dir, device = dev, size = tonumber(arg[i]),
                             warmup = warmup, repeats = repeats }
    print(cjson.encode { tool = "strata", dir = dir, size = r.size,
      median_ms = r.median_ms, min_ms = r.min_ms, gbps = r.gbps,
      verified = r.verified })
    io.stdout:flush()
  end
end
