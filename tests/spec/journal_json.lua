-- redact.json (core.clean_json, engine/core/json_lua.c), the journal's
-- encoder: the same text as cjson.encode(redact.clean(v)) byte for byte
-- where nothing is masked, the same JSON where something is, the same
-- errors, and a call from inside its own mask callback works.  Values are
-- generated from a fixed seed: every byte in strings, whole and fractional
-- numbers around %.14g's edges, NaN, infinities, -0, arrays with holes on
-- both sides of cjson's sparse rule, number keys, cjson.null, nesting.
require "strata.runner"   -- cjson configured as the runner configures it
local cjson = require "cjson"
local r = require "strata.redact"
local core = require "strata.core"

local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")({ quiet = true })

math.randomseed(19)
local NUMBERS = { 0, 1, -1, 7, 10, 11, 99999999999999, 100000000000000,
                  -99999999999999, -100000000000000, 2^53, -2^53, 2^63,
                  math.maxinteger, math.mininteger, 0.0, -0.0, 1.0, 3.0,
                  99999999999999.0, 1e14, 0.1, -0.5, 1/3, 1e-7, 1e300,
                  -1e-300, 123456.789, 0/0, math.huge, -math.huge,
                  5e-324, 1.5, 2.5e13 }
local function rnd_string()
  local n, out = math.random(0, 12), {}
  for i = 1, n do
    local c = math.random(1, 10)
    if c <= 5 then out[i] = string.char(math.random(32, 126))
    elseif c <= 7 then out[i] = string.char(math.random(0, 31))
    elseif c == 8 then out[i] = ({ '"', "\\", "/", "\127" })[math.random(4)]
    else out[i] = ({ "é", "✓", "\u{1F600}" })[math.random(3)] end
  end
  return table.concat(out)
end
local function rnd_number()
  if math.random(2) == 1 then return NUMBERS[math.random(#NUMBERS)] end
  if math.random(2) == 1 then return math.random(-1000000, 1000000) end
  return (math.random() - 0.5) * 10 ^ math.random(-10, 20)
end
local function rnd_value(depth)
  local k = math.random(1, depth > 3 and 4 or 7)
  if k == 1 then return rnd_string()
  elseif k == 2 then return rnd_number()
  elseif k == 3 then return math.random(2) == 1
  elseif k == 4 then return cjson.null end
  local t = {}
  if k == 5 then            -- an array, maybe with holes
    local n = math.random(0, 14)
    for i = 1, n do
      if math.random(4) > 1 then t[i] = rnd_value(depth + 1) end
    end
  elseif k == 6 then        -- an object
    for _ = 1, math.random(0, 6) do t[rnd_string()] = rnd_value(depth + 1) end
  else                      -- number keys, sparse or not, mixed
    for _ = 1, math.random(1, 5) do
      local key = ({ math.random(1, 30), math.random(-3, 0), 1.5, 2.0, 25 })[math.random(5)]
      t[key] = rnd_value(depth + 1)
    end
    if math.random(3) == 1 then t.name = rnd_string() end
  end
  return t
end

-- where nothing is masked: byte for byte
local same = 0
for i = 1, 4000 do
  local v = rnd_value(0)
  local ok1, a = pcall(function() return cjson.encode(r.clean(v)) end)
  local ok2, b = pcall(r.json, v)
  check(ok1 == ok2 and a == b, "value %d: cjson %s %s\n  json  %s %s", i,
        tostring(ok1), tostring(a), tostring(ok2), tostring(b))
  if ok1 and a == b then same = same + 1 end
end
check(same > 3900, "only %d of 4000 values encoded", same)

-- where something is masked: the same JSON, no secret in the text
r.add("supersecretvalue")
local function deep_eq(x, y)
  if type(x) ~= type(y) then return false end
  if type(x) ~= "table" then return x == y or (x ~= x and y ~= y) end
  for k, v in pairs(x) do if not deep_eq(v, y[k]) then return false end end
  for k in pairs(y) do if x[k] == nil then return false end end
  return true
end
local DIRTY = { "has supersecretvalue in it", "https://user:pw@host/x",
                "Authorization: Bearer abc.def-ghi", "bad \255\254 bytes",
                "supersecretvalue" }
for i = 1, 1000 do
  local v = rnd_value(1)
  if type(v) ~= "table" then v = { v } end
  v[DIRTY[math.random(#DIRTY)]] = DIRTY[math.random(#DIRTY)]
  v.password = ({ "hunter2hunter2", 5, true, { inner = "supersecretvalue" },
                  print })[math.random(5)]
  v.nested = { token = DIRTY[math.random(#DIRTY)], list = { DIRTY[1], 3 } }
  local ok1, a = pcall(function() return cjson.encode(r.clean(v)) end)
  local ok2, b = pcall(r.json, v)
  check(ok1 and ok2, "dirty value %d: %s / %s", i, tostring(a), tostring(b))
  if ok1 and ok2 then
    check(deep_eq(cjson.decode(a), cjson.decode(b)), "dirty value %d:\n  %s\n  %s", i, a, b)
    check(not b:find("supersecretvalue", 1, true) and not b:find("hunter2", 1, true)
          and not b:find(":pw@", 1, true) and not b:find("abc.def", 1, true),
          "dirty value %d: a secret written: %s", i, b)
  end
end

-- the same errors, without a position
local cyc = {}; cyc.self = cyc
local deep, d = {}, nil
d = deep
for _ = 1, 999 do d.x = {} d = d.x end   -- 1000 tables: fine
local deeper = { x = deep }              -- 1001: too deep
for name, v in pairs { cycle = cyc, fn = { f = print }, key = { [true] = 1 },
                       deep = deep, deeper = deeper, co = { coroutine.create(print) } } do
  local ok1, a = pcall(cjson.encode, r.clean(v))
  local ok2, b = pcall(r.json, v)
  check(ok1 == ok2 and a == b, "%s: cjson %s %s, json %s %s", name,
        tostring(ok1), tostring(a), tostring(ok2), tostring(b))
end
-- and a call after an error writes in its buffer again
check(r.json({ a = ("x"):rep(5000) }) == cjson.encode({ a = ("x"):rep(5000) }),
      "after an error")

-- a call from the mask callback (a buffer of its own)
local inner = 0
local s = core.clean_json({ "outer", { q = "y" } }, {}, {}, function(t)
  inner = inner + 1
  return core.clean_json({ t, ("w"):rep(3000) }, {}, {}, function(x) return x end,
                         function() return false end)
end, function() return false end)
local back = cjson.decode(s)
check(inner == 3 and back[1] == cjson.encode({ "outer", ("w"):rep(3000) })
      and back[2][cjson.encode({ "q", ("w"):rep(3000) })]
        == cjson.encode({ "y", ("w"):rep(3000) }), "re-entered: %s", s:sub(1, 200))

if check.n > 0 then
  io.stderr:write(check.n, " check.n\n")
  os.exit(1)
end
print(("ok: %d values byte for byte, 1000 masked, errors, re-entry"):format(same))
