-- strata.criteria: the one reader of a criterion's written shape, for a
-- spec's `criteria = {...}` and a thresholds file (or profile) alike.
--
-- Under a name (a metric, or a group's label) a criterion is either
--
--   a limit:  { min = 10 }  { max = "3 * lat_p50_us" }  { in = { 1, 2 } }
--             optionally with a WARN band beside the FAIL limit:
--             { min = 90, warn = { min = 95 } }   (between 90 and 95: WARN)
--             and optionally the matrix cells it judges (absent or {}:
--             every cell), each parameter a plain value, a list (in) or
--             operators: { min = 90, where = { size = { min = 65536 } } }
--   a group:  { any_of = { { name = <criterion> }, ... } }  (one must hold)
--             { all_of = { { name = <criterion> }, ... } }  (every one must)
--             each list item holds one or more named members, which may
--             be groups themselves (nested).
--
-- parse() turns that into an entry (the shape thresholds.resolve merges):
--   limit entry: { metric, ops = { [op] = { value, source } },
--                  warn = { [op] = { value, source } } or nil,
--                  where = { { param, op, value, source }, ... } or nil
--                  (by param, then op) }
--   group entry: { metric = label, group = "any_of"|"all_of", source,
--                  members = { entry, ... } }
-- Every error names file:line (through `fail`, which raises: exit 2).
local M = {}

M.OPS = { min = true, max = true, eq = true, ne = true, ["in"] = true }
M.GROUPS = { any_of = true, all_of = true }
local OP_LIST = "min, max, eq, ne, in"

local function is_list(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t
end
M.is_list = is_list

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

-- The operators of a limit (or of its warn band) into { [op] = {value,
-- source} }; path names the criterion in messages ("R2.bw_gbps").
local function parse_ops(node, path, at, fail, here)
  local ops = {}
  for _, op in ipairs(sorted_keys(node)) do
    local v, where = node[op], at(node, op) or here
    if not M.OPS[op] then
      fail(where, "%s: unknown operator '%s' (use %s; warn = { ... } for a "
           .. "WARN band; any_of / all_of for a group)", path, tostring(op),
           OP_LIST)
    end
    if op == "in" and not is_list(v) then
      fail(where, "%s.in: expected a list", path)
    end
    ops[op] = { value = v, source = where }
  end
  return ops
end

-- A limit's where: { param = value | list | { op = value } } into
-- { { param, op, value, source }, ... } by param, then op; values are
-- plain (a cell's parameters are numbers and strings, never references).
local function parse_where(node, path, at, fail, here)
  if type(node) ~= "table" or (is_list(node) and next(node) ~= nil) then
    fail(here, "%s.where: expected a mapping of matrix parameters like "
         .. "{ size: { min: 65536 } }", path)
  end
  local out = {}
  for _, p in ipairs(sorted_keys(node)) do
    local v, w = node[p], at(node, p) or here
    if type(p) ~= "string" then
      fail(w, "%s.where: keys must be matrix parameter names", path)
    end
    local ops
    if type(v) == "table" and not is_list(v) then
      ops = parse_ops(v, path .. ".where." .. p, at, fail, w)
    else
      ops = { [type(v) == "table" and "in" or "eq"] = { value = v, source = w } }
    end
    for _, op in ipairs(sorted_keys(ops)) do
      local x = ops[op]
      for _, y in ipairs(op == "in" and x.value or { x.value }) do
        if type(y) ~= "number" and type(y) ~= "string" then
          fail(x.source, "%s.where.%s.%s: expected a number or a word, as "
               .. "a matrix parameter's values are", path, p, op)
        end
      end
      out[#out + 1] = { param = p, op = op, value = x.value, source = x.source }
    end
  end
  return out
end

local function parse_group(name, node, g, path, at, fail, here)
  for k in pairs(node) do
    if k ~= g then
      fail(at(node, k) or here, "%s: a group holds only '%s', not '%s' "
           .. "(any_of and all_of nest as members)", path, g, tostring(k))
    end
  end
  local list = node[g]
  local lwhere = at(node, g) or here
  if not is_list(list) or #list == 0 then
    fail(lwhere, "%s.%s: expected a non-empty list of members like "
         .. "'- metric: { min: 10 }'", path, g)
  end
  local members = {}
  for i, item in ipairs(list) do
    local iwhere = at(list, i) or lwhere
    if type(item) ~= "table" or is_list(item) then
      fail(iwhere, "%s.%s item %d: expected a member like "
           .. "'metric: { min: 10 }'", path, g, i)
    end
    for _, k in ipairs(sorted_keys(item)) do
      if type(k) ~= "string" then
        fail(iwhere, "%s.%s item %d: member names must be metric names",
             path, g, i)
      end
      members[#members + 1] = M.parse(k, item[k], at, fail,
        at(item, k) or iwhere, path .. "." .. k)
    end
  end
  return { metric = name, group = g, members = members, source = here }
end

-- parse(name, node, at, fail, here [, path]): node is what is written
-- under name; at(tbl, key) -> "file:line" of key in tbl (or nil: here);
-- fail(where, fmt, ...) raises; here is the source of name itself.
function M.parse(name, node, at, fail, here, path)
  path = path or name
  if type(node) ~= "table" or (is_list(node) and next(node) ~= nil) then
    fail(here, "%s: expected a mapping like { min: 10 }, or a group "
         .. "{ any_of: [ ... ] }", path)
  end
  local g = (node.any_of ~= nil and "any_of")
    or (node.all_of ~= nil and "all_of") or nil
  if g then return parse_group(name, node, g, path, at, fail, here) end
  local plain, warn, where = {}, nil, nil
  for k, v in pairs(node) do
    if k ~= "warn" and k ~= "where" then plain[k] = v end
  end
  if node.where ~= nil then
    where = parse_where(node.where, path, at, fail, at(node, "where") or here)
  end
  local ops = parse_ops(plain, path, at, fail, here)
  if node.warn ~= nil then
    local wwhere = at(node, "warn") or here
    if type(node.warn) ~= "table" or is_list(node.warn) then
      fail(wwhere, "%s.warn: expected a mapping like { min: 95 }", path)
    end
    warn = parse_ops(node.warn, path .. ".warn", at, fail, wwhere)
    for op, w in pairs(warn) do
      if not ops[op] then
        fail(w.source, "%s.warn.%s: a WARN band sits beside a FAIL limit: "
             .. "give %s.%s too", path, op, path, op)
      end
    end
  end
  return { metric = name, ops = ops, warn = warn, where = where }
end

-- Every metric name an entry judges (members of groups included).
function M.metrics(entry, out)
  out = out or {}
  if entry.group then
    for _, m in ipairs(entry.members) do M.metrics(m, out) end
  else
    out[#out + 1] = entry.metric
  end
  return out
end

return M
