-- bench/structure/luafuncs.lua - print "first last path" for every
-- function each named Lua file defines, read from the compiler's own
-- record: the file is compiled (load) and dumped (string.dump), and the
-- binary chunk's function prototypes carry linedefined/lastlinedefined,
-- the numbers `luac -l` prints as "function <file:first,last>".  No Lua is
-- parsed here, so strings, comments and long brackets cannot mislead it.
-- The chunk layout is Lua 5.4's (lundump.c: loadFunction); another
-- version is refused rather than misread.
--
-- Usage: strata lua bench/structure/luafuncs.lua FILE...
assert(_VERSION == "Lua 5.4", "luafuncs.lua reads Lua 5.4 chunks only")

local function reader(s)
  local pos = 1
  local r = {}
  function r.byte()
    local b = s:byte(pos); pos = pos + 1; return b
  end
  function r.skip(n) pos = pos + n end
  function r.size() -- lundump.c loadUnsigned: 7 bits a byte, last has 0x80
    local x = 0
    repeat
      local b = r.byte()
      x = x * 128 + (b & 0x7f)
    until b & 0x80 ~= 0
    return x
  end
  function r.string()
    local n = r.size()
    if n > 0 then r.skip(n - 1) end
  end
  return r
end

-- lobject.h variant tags of the constants a chunk can hold
local VNIL, VFALSE, VTRUE, VNUMINT, VNUMFLT, VSHRSTR, VLNGSTR =
  0, 1, 17, 3, 19, 4, 20

local function proto(r, out)
  r.string()                      -- source
  local first, last = r.size(), r.size()
  out[#out + 1] = {first, last}
  r.skip(3)                       -- numparams, is_vararg, maxstacksize
  r.skip(4 * r.size())            -- code
  for _ = 1, r.size() do          -- constants
    local t = r.byte()
    if t == VNUMINT or t == VNUMFLT then r.skip(8)
    elseif t == VSHRSTR or t == VLNGSTR then r.string()
    else assert(t == VNIL or t == VFALSE or t == VTRUE, "constant tag " .. t)
    end
  end
  r.skip(3 * r.size())            -- upvalues: instack, idx, kind
  for _ = 1, r.size() do proto(r, out) end
  r.skip(r.size())                -- lineinfo
  for _ = 1, r.size() do r.size(); r.size() end -- abslineinfo
  for _ = 1, r.size() do r.string(); r.size(); r.size() end -- locvars
  for _ = 1, r.size() do r.string() end          -- upvalue names
end

for _, path in ipairs(arg) do
  local fh = assert(io.open(path, "rb"))
  local src = fh:read("a")
  fh:close()
  local f = assert(load(src, "@" .. path))
  local r = reader(string.dump(f))
  -- header: signature 4, version, format, LUAC_DATA 6, three sizes,
  -- LUAC_INT 8, LUAC_NUM 8, then the main function's upvalue count
  r.skip(4 + 1 + 1 + 6 + 3 + 8 + 8 + 1)
  local out = {}
  proto(r, out)
  for i = 2, #out do -- out[1] is the main chunk (0,0)
    print(out[i][1], out[i][2], path)
  end
end
