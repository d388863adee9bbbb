-- strata.report.json: the run model as one JSON document, for machines
-- and for diffing two runs.
--
--   require("strata.report.json").write("reports/run.json", model)
--
-- Keys are sorted at every level and the output is indented, so two runs
-- diff line by line.  NaN and the infinities (which JSON lacks) become
-- null; a float is printed with the fewest digits that read back to the
-- same double.  Empty tables are arrays where the model holds lists (argv,
-- results, checks, rows, ...) and objects elsewhere.  Raises on a value
-- JSON cannot hold (function, userdata, a cycle) and on a failed write.
local common = require "strata.report.common"
local verdict = require "strata.verdict"
local cjson = require "cjson"

local M = {}

M.FORMAT_VERSION = 1

-- Keys whose value is a list even when empty.
local ARRAY_KEYS = {
  argv = true, files = true, layers = true, tests = true, criteria = true,
  results = true, params = true, checks = true, tables = true,
  columns = true, rows = true, notes = true, t = true, tags = true,
  y = true, ["in"] = true, missing = true,
}
-- Keys whose children are lists: tables' rows, series' values.
local ARRAY_CHILDREN = { rows = true, values = true }

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

-- The document written for a model.
function M.document(model)
  return {
    format = "strata-report", format_version = M.FORMAT_VERSION,
    run = model.run or {}, inventory = model.inventory or {},
    criteria = model.criteria or {}, results = model.results or {},
    tests = model.tests or {}, verdict = model.verdict,
    lowest_failed = model.lowest_failed, layers = model.layers or {},
    message = model.message, missing = model.missing or {},
    counts = verdict.counts(model.tests),
  }
end

-- Write model as JSON at path (through path.tmp + rename); raises.
function M.write(path, model)
  if type(path) ~= "string" or path == "" then
    error("report.json: output path must be a non-empty string", 0)
  end
  if type(model) ~= "table" then
    error("report.json: model must be a table, got " .. type(model), 0)
  end
  common.write_file("report.json", path, M.encode(M.document(model)) .. "\n")
end

return M
