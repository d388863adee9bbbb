-- strata lua tests/llm/client.lua '<json options for llm.run>'
-- Runs strata's load generator once and prints its result as JSON (NaN,
-- "not measured", left out), for the Python tests beside it.
local llm = require "strata.llm"
local cjson = require "cjson"

local function clean(v)
  if type(v) == "number" and v ~= v then return nil end
  if type(v) ~= "table" then return v end
  local n, out = 0, {}
  for _ in pairs(v) do n = n + 1 end
  if n > 0 and #v == n then            -- a list stays a list
    for i = 1, n do out[i] = clean(v[i]) end
    return out
  end
  for k, x in pairs(v) do out[type(k) == "number" and tostring(k) or k] = clean(x) end
  return out
end

local opts = cjson.decode(arg[1])
-- cjson gives JSON null as a light userdata: drop those keys
for k, v in pairs(opts) do if v == cjson.null then opts[k] = nil end end
local r = llm.run(opts)
io.write(cjson.encode(clean(r)), "\n")
