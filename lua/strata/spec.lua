-- strata.spec: load spec files, validate every test definition, expand
-- matrices.  All errors are SpecError values naming file:line; the CLI
-- prints them and exits 2.
local core = require "strata.core"

local M = {}

-- The ladder, bottom rung first (RUNBOOK, "the core idea").  storage (the
-- node's NVMe scratch and the staging paths) sits after S3/TCP and before
-- S3 over RDMA: the second source document measures it before judging
-- whether S3 over RDMA is worth it (RUNBOOK "Second seed").
M.LAYERS = { "host", "gpu", "verbs", "gpu-rdma", "roce", "k8s", "nccl",
             "s3", "storage", "s3rdma", "vllm" }
M.LAYER_RANK = {}
for i, l in ipairs(M.LAYERS) do M.LAYER_RANK[l] = i end

local SpecError = {}
SpecError.__index = SpecError
SpecError.__tostring = function(e) return e.msg end

function M.error(where, fmt, ...)
  local msg = select("#", ...) > 0 and fmt:format(...) or fmt
  error(setmetatable({ msg = where .. ": " .. msg, spec = true }, SpecError), 0)
end

function M.is_error(e) return getmetatable(e) == SpecError end

-- Call fn(...); turn any error it raises into a SpecError (exit code 2).
function M.protect(fn, ...)
  local r = table.pack(pcall(fn, ...))
  if r[1] then return table.unpack(r, 2, r.n) end
  if M.is_error(r[2]) then error(r[2], 0) end
  error(setmetatable({ msg = tostring(r[2]), spec = true }, SpecError), 0)
end

local FIELDS = {
  id = "string", layer = "string", title = "string", description = "string",
  needs = "table", tags = "table", timeout = "number", matrix = "table",
  sample = "table", headline = "string", criteria = "table",
  units = "table", run = "function", gate = "boolean",
}
M.OPS = require("strata.criteria").OPS
local is_list = require("strata.criteria").is_list

local function check_matrix(where, id, m)
  local order = m.order
  local params = {}
  for k, v in pairs(m) do
    if k ~= "order" and k ~= "exclude" then
      if type(k) ~= "string" then
        M.error(where, "test %s: matrix keys must be parameter names", id)
      end
      if not is_list(v) or #v == 0 then
        M.error(where, "test %s: matrix.%s must be a non-empty list", id, k)
      end
      params[#params + 1] = k
    end
  end
  table.sort(params)
  if #params == 0 then
    M.error(where, "test %s: matrix has no parameters", id)
  end
  if order then
    if not is_list(order) then
      M.error(where, "test %s: matrix.order must be a list of names", id)
    end
    local seen = {}
    for _, p in ipairs(order) do
      if m[p] == nil or p == "order" or p == "exclude" then
        M.error(where, "test %s: matrix.order names '%s', which is not a "
                .. "matrix parameter", id, tostring(p))
      end
      seen[p] = true
    end
    for _, p in ipairs(params) do
      if not seen[p] then
        M.error(where, "test %s: matrix.order misses parameter '%s'", id, p)
      end
    end
    params = order
  elseif #params > 1 then
    M.error(where, "test %s: a matrix of %d parameters needs "
            .. "matrix.order = { ... } (the first is the x axis)", id, #params)
  end
  if m.exclude ~= nil and not is_list(m.exclude) then
    M.error(where, "test %s: matrix.exclude must be a list of cells", id)
  end
  return params
end

-- The criteria of a test{} at file:line, read by strata.criteria into
-- { [name] = entry } with each limit's and member's file:line: the first
-- line below `criteria =` (below its group's line, for a member) in that
-- test's text that names it.  Lua tables keep no lines; the text does.
-- Names not found point at their group, or at `test {`.
local text_lines = {}
local function file_lines(file)
  local lines = text_lines[file]
  if not lines and file then
    local f = io.open(file, "r")
    if not f then return nil end
    lines = {}
    for l in f:lines() do lines[#lines + 1] = l end
    f:close()
    text_lines[file] = lines
  end
  return lines
end

local function parse_criteria(where, id, crit)
  local file, line = where:match("^(.*):(%d+)$")
  line = tonumber(line)
  local lines = file and file_lines(file) or {}
  local stop, from = #lines, nil
  for j = (line or 1) + 1, #lines do
    if lines[j]:match("^%s*test%s*[{(]") then stop = j - 1 break end
  end
  for j = line or 1, stop do
    if lines[j] and lines[j]:match("criteria%s*=") then from = j break end
  end
  local start = setmetatable({}, { __mode = "k" })  -- table -> its line
  start[crit] = from
  local function at(tbl, key)
    local first = start[tbl]
    if not first then return nil end
    local found = first
    if type(key) == "string" then
      local esc = key:gsub("%p", "%%%0")
      found = nil
      for j = first, stop do
        local l = " " .. lines[j]
        if l:match("[%s{,]" .. esc .. "%s*=")
           or l:match("%[%s*[\"']" .. esc .. "[\"']%s*%]%s*=") then
          found = j
          break
        end
      end
    end
    if type(tbl[key]) == "table" then start[tbl[key]] = found or first end
    return found and ("%s:%d"):format(file, found) or nil
  end
  local function fail(w, fmt, ...) M.error(w or where, fmt, ...) end
  local out = {}
  for name, node in pairs(crit) do
    if type(name) ~= "string" then
      M.error(where, "test %s: criteria keys must be metric names", id)
    end
    out[name] = require("strata.criteria").parse(name, node, at, fail,
      at(crit, name) or where, ("test %s: criteria.%s"):format(id, name))
  end
  return out
end

-- Validate one test{} table; returns the normalised definition.
local function validate(def, where)
  if type(def) ~= "table" then
    M.error(where, "test{} takes a table")
  end
  for k, v in pairs(def) do
    local want = FIELDS[k]
    if not want then
      M.error(where, "test %s: unknown field '%s'", tostring(def.id), tostring(k))
    end
    if type(v) ~= want then
      M.error(where, "test %s: field '%s' must be a %s, got %s",
              tostring(def.id), k, want, type(v))
    end
  end
  local id = def.id
  if not id then M.error(where, "test without an id") end
  if not id:match("^[%a][%w_%-]*$") then
    M.error(where, "test id '%s' must be a letter then letters, digits, _ or -", id)
  end
  if not def.title then M.error(where, "test %s: missing title", id) end
  if not def.layer then M.error(where, "test %s: missing layer", id) end
  if not M.LAYER_RANK[def.layer] then
    M.error(where, "test %s: unknown layer '%s' (one of: %s)", id, def.layer,
            table.concat(M.LAYERS, ", "))
  end
  if not def.run then M.error(where, "test %s: missing run function", id) end
  if def.timeout and def.timeout <= 0 then
    M.error(where, "test %s: timeout must be > 0 seconds", id)
  end
  for _, f in ipairs { "needs", "tags" } do
    if def[f] and not is_list(def[f]) then
      M.error(where, "test %s: %s must be a list of strings", id, f)
    end
    for _, v in ipairs(def[f] or {}) do
      if type(v) ~= "string" then
        M.error(where, "test %s: %s must be a list of strings", id, f)
      end
    end
  end
  local criteria = parse_criteria(where, id, def.criteria or {})
  local units = {}
  for metric, u in pairs(def.units or {}) do
    local cu, why = require("strata.units").canon(u)
    if not cu then M.error(where, "test %s: units.%s: %s", id, tostring(metric), why) end
    units[metric] = cu
  end
  local t = {
    id = id, layer = def.layer, title = def.title,
    description = def.description, needs = def.needs or {},
    tags = def.tags or {}, timeout = def.timeout or 60,
    sample = def.sample, headline = def.headline,
    criteria = criteria, units = units, run = def.run,
    -- false: record only (measured and judged; gates neither the exit
    -- code nor the tests that need it)
    gate = def.gate ~= false, gate_source = def.gate == false and where or nil,
    where = where, file = where:match("^(.*):%d+$"),
  }
  if def.matrix then
    t.params = check_matrix(where, id, def.matrix)
    t.matrix = def.matrix
  else
    t.params = {}
  end
  return t
end

-- Strict globals: reading an unknown name raises; assigning one too.
local function spec_env(file, tests)
  local env = {}
  env.test = function(def)
    local info = debug.getinfo(2, "Sl")
    local where = ("%s:%d"):format(file, info.currentline)
    tests[#tests + 1] = validate(def, where)
  end
  return setmetatable(env, {
    __index = function(_, k)
      local v = _G[k]
      if v == nil then
        error(("undefined global '%s'"):format(tostring(k)), 2)
      end
      return v
    end,
    __newindex = function(_, k)
      error(("assignment to global '%s': use a local"):format(tostring(k)), 2)
    end,
  })
end

local function load_file(path, tests)
  local chunk, err = loadfile(path, "t", spec_env(path, tests))
  if not chunk then
    -- Lua's message already starts with path:line
    error(setmetatable({ msg = err, spec = true }, SpecError), 0)
  end
  local ok, e = pcall(chunk)
  if not ok then
    if M.is_error(e) then error(e, 0) end
    -- Lua's message starts with file:line already
    error(setmetatable({ msg = tostring(e), spec = true }, SpecError), 0)
  end
end

-- Collect *.lua spec files under each path (folders recursively, sorted).
function M.files(paths)
  local out, seen = {}, {}
  local function walk(p)
    local kind = core.stat(p)
    if kind == "dir" then
      -- a symlink back up the tree would loop: each folder once
      local real = core.realpath(p) or p
      if seen[real] then return end
      seen[real] = true
      for _, name in ipairs(core.listdir(p)) do
        if name:sub(1, 1) ~= "." then
          local full = p:gsub("/$", "") .. "/" .. name
          local k = core.stat(full)
          if k == "dir" or (k == "file" and name:match("%.lua$")) then
            walk(full)
          end
        end
      end
    elseif kind == "file" then
      out[#out + 1] = p
    else
      M.error(p, "no such file or folder")
    end
  end
  for _, p in ipairs(paths) do walk(p) end
  return out
end

-- Load every spec under paths; returns tests (list), by_id, files.
function M.load(paths)
  local files = M.files(paths)
  local tests, by_id = {}, {}
  for _, f in ipairs(files) do load_file(f, tests) end
  for _, t in ipairs(tests) do
    if by_id[t.id] then
      M.error(t.where, "test %s already defined at %s", t.id, by_id[t.id].where)
    end
    by_id[t.id] = t
  end
  for _, t in ipairs(tests) do
    for _, n in ipairs(t.needs) do
      if not by_id[n] then
        M.error(t.where, "test %s needs '%s', which no spec defines", t.id, n)
      end
      if n == t.id then M.error(t.where, "test %s needs itself", t.id) end
    end
  end
  return tests, by_id, files
end

local function excluded(cell, excludes)
  for _, ex in ipairs(excludes or {}) do
    local all = true
    for k, v in pairs(ex) do
      if cell[k] ~= v then all = false break end
    end
    if all then return true end
  end
  return false
end

-- The matrix cells of a test, cartesian product in `params` order (the
-- last parameter varies fastest), minus excludes.  No matrix: one {} cell.
function M.cells(t)
  if not t.matrix then return { {} } end
  local cells = { {} }
  for _, p in ipairs(t.params) do
    local next_cells = {}
    for _, c in ipairs(cells) do
      for _, v in ipairs(t.matrix[p]) do
        local n = {}
        for k, x in pairs(c) do n[k] = x end
        n[p] = v
        next_cells[#next_cells + 1] = n
      end
    end
    cells = next_cells
  end
  local out = {}
  for _, c in ipairs(cells) do
    if not excluded(c, t.matrix.exclude) then out[#out + 1] = c end
  end
  return out
end

-- A cell of t as the positions of its values in t.matrix, one per
-- parameter (t.params' order), and back: the same values (the same
-- tables), so a cell can travel as a few integers.  The positions of a
-- test's values are found once per test (a value listed twice: its
-- first place, the same value).
local positions = setmetatable({}, { __mode = "k" })
local function positions_of(t)
  local pos = positions[t]
  if not pos then
    pos = {}
    for k, p in ipairs(t.params or {}) do
      local m = {}
      for j, v in ipairs(t.matrix[p]) do
        if v == v and m[v] == nil then m[v] = j end   -- (NaN: no key)
      end
      pos[k] = m
    end
    positions[t] = pos
  end
  return pos
end

function M.cell_at(t, cell)
  local at, pos = {}, positions_of(t)
  for k, p in ipairs(t.params or {}) do at[k] = pos[k][cell[p]] end
  return at
end

function M.cell_from(t, at)
  local cell = {}
  for k, p in ipairs(t.params or {}) do cell[p] = t.matrix[p][at[k]] end
  return cell
end

return M
