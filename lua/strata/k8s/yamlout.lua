-- strata.k8s.yamlout: Lua tables as YAML (manifests and the runner's
-- derived site file).  Deterministic: object keys in a fixed leading
-- order (apiVersion, kind, metadata, name, ...) then alphabetical, so a
-- golden file only changes when the content does.  Strings are plain
-- when YAML 1.1 and 1.2 both read them back as that string, double
-- quoted otherwise; multi-line strings are literal blocks.
local M = {}

-- A list that may be empty: M.list{} (an empty plain table is {}).
local LIST = {}
function M.list(t) return setmetatable(t or {}, LIST) end

local FIRST = { "apiVersion", "kind", "metadata", "name", "namespace", "labels",
                "annotations", "spec", "data" }
local RANK = {}
for i, k in ipairs(FIRST) do RANK[k] = i end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = tostring(k) end
  table.sort(ks, function(a, b)
    local ra, rb = RANK[a] or 100, RANK[b] or 100
    if ra ~= rb then return ra < rb end
    return a < b
  end)
  return ks
end

local function is_list(t)
  if getmetatable(t) == LIST then return true end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n > 0 and n == #t
end

-- Words YAML 1.1 (PyYAML, libyaml consumers) reads as bools or null.
local RESERVED = {}
for w in ("y n yes no on off true false null ~"):gmatch("%S+") do RESERVED[w] = true end

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' elseif c == "\\" then return "\\\\"
    elseif c == "\n" then return "\\n" elseif c == "\t" then return "\\t" end
    return ("\\x%02x"):format(c:byte())
  end) .. '"'
end

local function scalar_str(s)
  if s:match("^[%a_/][%w_./@:-]*$") and not s:find(": ", 1, true)
     and not s:match(":$") and not RESERVED[s:lower()] then
    return s
  end
  return quote(s)
end
M.key = scalar_str

local function scalar(v)
  local tv = type(v)
  if tv == "string" then return scalar_str(v)
  elseif tv == "boolean" then return v and "true" or "false"
  elseif tv == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    if v ~= v or v == math.huge or v == -math.huge then
      error("yamlout: a number that YAML cannot hold: " .. tostring(v), 2)
    end
    if v == math.floor(v) and math.abs(v) < 2^53 then return ("%d"):format(v) end
    return ("%.17g"):format(v)
  end
  error("yamlout: cannot write a " .. tv, 2)
end
M.scalar = scalar

local emit

-- A multi-line string as a literal block: "|2" keeps leading spaces of
-- the first line; the chomping indicator keeps the trailing newlines.
local function block(out, s, indent)
  local trail = #s:match("\n*$")
  local chomp = trail == 0 and "-" or (trail == 1 and "" or "+")
  local body = trail > 0 and s:sub(1, #s - trail) or s
  local pad = (" "):rep(indent)
  local lines = { "|2" .. chomp }
  for line in (body .. "\n"):gmatch("(.-)\n") do
    lines[#lines + 1] = line == "" and "" or pad .. line
  end
  for _ = 2, trail do lines[#lines + 1] = "" end
  out[#out + 1] = table.concat(lines, "\n")
end

local function inline(v)
  if type(v) == "string" and v:find("\n", 1, true) then return nil end
  if type(v) ~= "table" then return scalar(v) end
  if next(v) == nil then return is_list(v) and "[]" or "{}" end
  return nil
end

emit = function(out, v, indent)
  local pad = (" "):rep(indent)
  if is_list(v) then
    for _, item in ipairs(v) do
      local s = inline(item)
      if s then
        out[#out + 1] = pad .. "- " .. s .. "\n"
      elseif type(item) == "string" then
        out[#out + 1] = pad .. "- "
        block(out, item, indent + 2)
        out[#out + 1] = "\n"
      else
        -- the first key of an object item rides on the dash
        local sub = {}
        emit(sub, item, indent + 2)
        local text = table.concat(sub)
        out[#out + 1] = pad .. "- " .. text:sub(indent + 3)
      end
    end
  else
    for _, k in ipairs(sorted_keys(v)) do
      local item = v[k]
      if item == nil then item = v[tonumber(k)] end
      local s = inline(item)
      if s then
        out[#out + 1] = pad .. scalar_str(k) .. ": " .. s .. "\n"
      elseif type(item) == "string" then
        out[#out + 1] = pad .. scalar_str(k) .. ": "
        block(out, item, indent + 2)
        out[#out + 1] = "\n"
      else
        out[#out + 1] = pad .. scalar_str(k) .. ":\n"
        emit(out, item, indent + (is_list(item) and 0 or 2))
      end
    end
  end
end

-- One YAML document (no "---").
function M.dump(v)
  local out = {}
  if type(v) ~= "table" then return scalar(v) .. "\n" end
  emit(out, v, 0)
  return table.concat(out)
end

return M
