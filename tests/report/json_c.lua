-- xl.json (engine/report/report_json_lua.c), run.json's encoder: byte for
-- byte the text of the Lua encoder it replaced (strata.report.json at
-- d34e8a7, kept below as the reference), on generated values (every byte
-- in texts, invalid UTF-8, numbers around %.15g-%.17g's edges, NaN, the
-- infinities, -0, lists with holes, number and float keys, a number key
-- and its text both present, empty tables under the list keys), on the
-- fixture model, and the same errors (a cycle, a boolean key, a function)
-- with their paths.  Values from a fixed seed.
--   strata lua tests/report/json_c.lua [fixtures/report/model.lua]
local common = require "strata.report.common"
local cjson = require "cjson"
local json = require "strata.report.json"

local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")({ quiet = true })

-- ---- the reference: strata.report.json's encoder at d34e8a7, verbatim
local ARRAY_KEYS = {
  argv = true, files = true, layers = true, tests = true, criteria = true,
  results = true, params = true, checks = true, tables = true,
  columns = true, rows = true, notes = true, t = true, tags = true,
  y = true, ["in"] = true, missing = true,
}
local ARRAY_CHILDREN = { rows = true, values = true }
local M = {}
local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b",
              ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function quote(s)
  s = common.utf8_clean(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESC[c] or ("\\u%04x"):format(c:byte())
  end) .. '"'
end
M.quote = quote

local function number(v)
  if not common.finite(v) then return "null" end
  if math.type(v) == "integer" then return ("%d"):format(v) end
  for _, p in ipairs { "%.15g", "%.16g", "%.17g" } do
    local s = p:format(v)
    if tonumber(s) == v then return s end
  end
  return ("%.17g"):format(v)
end
M.number = number

-- Whether t is a list: keys 1..n (holes allowed; they become null).
local function list_len(t)
  local n, max = 0, 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 then return nil end
    n = n + 1
    if k > max then max = k end
  end
  return max
end

local function encode(v, out, indent, key, parent, path, seen)
  local tv = type(v)
  if v == nil or v == cjson.null then
    out[#out + 1] = "null"
  elseif tv == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif tv == "number" then
    out[#out + 1] = number(v)
  elseif tv == "string" then
    out[#out + 1] = quote(v)
  elseif tv == "table" then
    if seen[v] then
      error(("report.json: a cycle at %s"):format(path), 0)
    end
    seen[v] = true
    local n = list_len(v)
    local empty = next(v) == nil
    local as_list = (n and not empty) or (empty and (ARRAY_KEYS[key] or
                    ARRAY_CHILDREN[parent]))
    local pad = "\n" .. string.rep("  ", indent + 1)
    if empty then
      out[#out + 1] = as_list and "[]" or "{}"
    elseif as_list then
      local flat = true
      for i = 1, n do
        if type(v[i]) == "table" then flat = false break end
      end
      out[#out + 1] = "["
      for i = 1, n do
        if i > 1 then out[#out + 1] = "," end
        if not flat then out[#out + 1] = pad end
        encode(v[i], out, indent + 1, nil, key, path .. "[" .. i .. "]", seen)
      end
      if not flat then out[#out + 1] = "\n" .. string.rep("  ", indent) end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do
        local tk = type(k)
        if tk ~= "string" and tk ~= "number" then
          error(("report.json: a %s key at %s"):format(tk, path), 0)
        end
        keys[#keys + 1] = tostring(k)
      end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        local x = v[k]
        if x == nil then x = v[tonumber(k)] end
        out[#out + 1] = (i > 1 and "," or "") .. pad .. quote(k) .. ": "
        encode(x, out, indent + 1, k, key, path .. "." .. k, seen)
      end
      out[#out + 1] = "\n" .. string.rep("  ", indent) .. "}"
    end
    seen[v] = nil
  else
    error(("report.json: cannot encode a %s at %s"):format(tv, path), 0)
  end
end

-- The JSON text of any plain Lua value (the rules above).
function M.encode(v)
  local out = {}
  encode(v, out, 0, nil, nil, "$", {})
  return table.concat(out)
end
-- ---- end of the reference

local function same(v, what)
  local ok1, a = pcall(M.encode, v)
  local ok2, b = pcall(json.encode, v)
  check(ok1 == ok2 and a == b, "%s: reference %s %q\n  xl.json %s %q", what,
        tostring(ok1), tostring(a):sub(1, 300), tostring(ok2), tostring(b):sub(1, 300))
  return ok1 and a == b
end

math.randomseed(19)
local NUMBERS = { 0, 1, -1, 7, 2^53, -2^53, 2^53 + 1, 2^63, math.maxinteger,
                  math.mininteger, 0.0, -0.0, 1.0, 3.0, 1e15, 1e16, 1e17,
                  0.1, 0.2 + 0.1, -0.5, 1/3, 2/3, 1e-7, 1e300, -1e-300,
                  123456.789, 0/0, math.huge, -math.huge, 5e-324,
                  2.2250738585072014e-308, 1.7976931348623157e308,
                  9007199254740993.0, 123456789012345.67, 0.30000000000000004 }
local KEYS = { "argv", "results", "rows", "values", "t", "in", "missing",
               "metrics", "cell", "a", "B", "é", "_", "a\0b", "a\0", "10", "9" }
local function rnd_string()
  local n, out = math.random(0, 10), {}
  for i = 1, n do
    local c = math.random(1, 12)
    if c <= 5 then out[i] = string.char(math.random(32, 126))
    elseif c <= 7 then out[i] = string.char(math.random(0, 31))
    elseif c == 8 then out[i] = ({ '"', "\\", "/", "\127" })[math.random(4)]
    elseif c == 9 then out[i] = string.char(math.random(128, 255))  -- invalid
    elseif c == 10 then out[i] = ({ "\xed\xa0\x80", "\xc0\x80", "\xf4\x90\x80\x80" })[math.random(3)]
    else out[i] = ({ "é", "✓", "\u{1F600}" })[math.random(3)] end
  end
  return table.concat(out)
end
local function rnd_number()
  if math.random(2) == 1 then return NUMBERS[math.random(#NUMBERS)] end
  if math.random(2) == 1 then return math.random(-1000000, 1000000) end
  return (math.random() - 0.5) * 10 ^ math.random(-20, 20)
end
local function rnd_key()
  local k = math.random(1, 4)
  if k == 1 then return rnd_string() end
  if k == 2 then return KEYS[math.random(#KEYS)] end
  if k == 3 then return ({ math.random(1, 30), math.random(-3, 0), 1.5,
                           2.0, 0.1 + 0.2, 1e100, math.huge, -math.huge })[math.random(8)] end
  return rnd_string():sub(1, 3)
end
local function rnd_value(depth)
  local k = math.random(1, depth > 4 and 4 or 8)
  if k == 1 then return rnd_string()
  elseif k == 2 then return rnd_number()
  elseif k == 3 then return math.random(2) == 1
  elseif k == 4 then return math.random(3) == 1 and cjson.null or nil end
  local t = {}
  if k == 5 then            -- a list, maybe with holes, maybe empty
    for i = 1, math.random(0, 8) do
      if math.random(4) > 1 then t[i] = rnd_value(depth + 1) end
    end
  elseif k == 6 or k == 8 then   -- an object under keys the rules name
    for _ = 1, math.random(0, 6) do
      local key = rnd_key()
      t[key] = rnd_value(depth + 1)
    end
  else                      -- a number key and its text both
    local n = math.random(1, 20)
    t[n] = rnd_value(depth + 1)
    t[tostring(n)] = rnd_value(depth + 1)
  end
  return t
end

local N = 0
for i = 1, 3000 do
  local v = rnd_value(0)
  if same(v, "value " .. i) then N = N + 1 end
  -- the same value under each key the rules name: empty tables as lists
  local w = {}
  for _, k in ipairs(KEYS) do w[k] = { v, {}, { {} } } end
  same(w, "keyed value " .. i)
end

-- the errors, with their paths
local cyc = { a = { b = {} } }
cyc.a.b.c = cyc.a
same(cyc, "a cycle")
local cyc2 = { 1, 2, {} }
cyc2[3][1] = cyc2
same(cyc2, "a cycle in a list")
same({ x = { [true] = 1 } }, "a boolean key")
same({ x = { { f = print } } }, "a function")
same({ x = { io.stdout } }, "a userdata")
same(coroutine.create(print), "a thread at the root")
local shared = { 1, 2 }
same({ a = shared, b = { shared, shared } }, "a table met twice, no cycle")
same({}, "the empty root")
same("\0\1\31\127\"\\/", "control bytes at the root")

-- an object of 30 000 keys (the keys are held in a table, not on the stack)
local wide = {}
for i = 1, 30000 do wide["k" .. i] = i end
same({ metrics = wide }, "30 000 keys")

-- the fixture model, as run.json has it
local model_path = arg[1]
if model_path then
  local model = dofile(model_path)
  same(json.document(model), "the fixture model's document")
  same(model, "the fixture model")
end

-- a table of 10 000 results: the same text, and faster
local big = { results = {} }
for i = 1, 10000 do
  big.results[i] = { id = "T1", cell = { a = i, b = i * 0.5 },
    metrics = { x = i / 7, y = i }, checks = {}, tables = {}, notes = {},
    params = { "a", "b" }, status = "PASS", duration_s = 0.0012 * i }
end
local c0 = os.clock()
local a = M.encode(big)
local lua_s = os.clock() - c0
c0 = os.clock()
local b = json.encode(big)
local c_s = os.clock() - c0
check(a == b, "10 000 results: the texts differ")
print(("json_c: %d/3000 generated values the same; 10 000 results %.3f s (Lua) "
  .. "-> %.3f s (C)"):format(N, lua_s, c_s))
if check.n > 0 then
  io.stderr:write(("json_c: %d check.n\n"):format(check.n))
  os.exit(1)
end
print("json_c: ok")
