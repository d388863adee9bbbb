-- strata.fleet.config: the fleet's configuration view (docs/fleet.md,
-- "Configuration"): which nodes differ from the golden the site file
-- records, and which differ from the fleet's majority even where no
-- golden is given, each with the setting and both values.  The facts are
-- H4's own tables (specs/host/H4.lua): "Node configuration" (every
-- setting the node answers, with or without a golden) and "Golden
-- configuration" (each golden setting, DIFFERS where it differs).  This
-- view decides no status: H4's criterion does, per node.
local M = {}

local ABSENT = "(absent)"

local function table_of(r, name)
  for _, tb in ipairs(r.tables or {}) do
    if tb.name == name then return tb.rows or {} end
  end
end

-- Each node's H4 record (its last try), in node order.
local function h4_records(fm)
  local out = {}
  for _, node in ipairs(fm.nodes or {}) do
    for _, r in ipairs(node.cells or {}) do
      if r.id == "H4" and not r.superseded and table_of(r, "Node configuration") then
        out[#out + 1] = { node = node.name, r = r }
      end
    end
  end
  return out
end

-- The majority value of one setting: the value more than half of the
-- nodes hold (a node lacking the setting holds ABSENT); nil when none.
local function majority(values, n)
  local count = {}
  for _, v in pairs(values) do count[v] = (count[v] or 0) + 1 end
  for v, c in pairs(count) do
    if c * 2 > n then return v, c end
  end
end

-- fm -> { nodes = n, settings = k, rows = { {node, key, value, golden,
-- majority, held, of} }, ties = { keys without a majority } }: a row per
-- node and setting that differs from the golden or from the majority.
function M.build(fm)
  local recs = h4_records(fm)
  local by_key, keys = {}, {}
  for _, x in ipairs(recs) do
    for _, row in ipairs(table_of(x.r, "Node configuration")) do
      local k, v = row[1], row[2]
      if not by_key[k] then by_key[k] = {} keys[#keys + 1] = k end
      by_key[k][x.node] = v
    end
  end
  table.sort(keys)
  local rows, ties, idx = {}, {}, {}
  local function row(node, key)
    local id = node .. "|" .. key
    if not idx[id] then
      idx[id] = { node = node, key = key, of = #recs }
      rows[#rows + 1] = idx[id]
    end
    return idx[id]
  end
  for _, k in ipairs(keys) do
    local values = {}
    for _, x in ipairs(recs) do values[x.node] = by_key[k][x.node] or ABSENT end
    local maj, held = majority(values, #recs)
    if not maj then
      ties[#ties + 1] = k
    else
      for _, x in ipairs(recs) do
        if values[x.node] ~= maj then
          local e = row(x.node, k)
          e.value, e.majority, e.held = values[x.node], maj, held
        end
      end
    end
  end
  for _, x in ipairs(recs) do
    for _, g in ipairs(table_of(x.r, "Golden configuration") or {}) do
      if g[4] == "DIFFERS" then
        local e = row(x.node, g[1])
        e.value, e.golden = g[3], g[2]
      end
    end
  end
  local order = {}
  for i, x in ipairs(recs) do order[x.node] = i end
  table.sort(rows, function(a, b)
    if a.node ~= b.node then return order[a.node] < order[b.node] end
    return a.key < b.key
  end)
  for _, e in ipairs(rows) do
    e.value = e.value or (by_key[e.key] and by_key[e.key][e.node]) or ABSENT
  end
  return { nodes = #recs, settings = #keys, rows = rows, ties = ties }
end

local function golden_text(e)
  return e.golden and ("golden " .. e.golden) or nil
end

local function majority_text(e)
  return e.majority and ("majority %s (%d of %d nodes)"):format(e.majority,
    e.held, e.of) or nil
end

-- One line per difference: "g2: nics.eth0.mtu 1400, golden 1500, majority
-- 1500 (2 of 3 nodes)".
function M.lines(c)
  local out = {}
  for _, e in ipairs(c.rows) do
    local parts = { ("%s: %s %s"):format(e.node, e.key, e.value) }
    parts[#parts + 1] = golden_text(e)
    parts[#parts + 1] = majority_text(e)
    out[#out + 1] = table.concat(parts, ", ")
  end
  return out
end

function M.text(fm)
  local c = fm.config or M.build(fm)
  if c.nodes == 0 then return "configuration: H4 did not run on any node\n" end
  local out = { ("configuration: %d settings on %d nodes, %d differences (H4)")
    :format(c.settings, c.nodes, #c.rows) }
  for _, l in ipairs(M.lines(c)) do out[#out + 1] = "  " .. l end
  return table.concat(out, "\n") .. "\n"
end

-- On the Summary from row r: a title, then a row per node and setting
-- that differs (Node, Setting, This node, Golden, Majority); returns the
-- next row.
function M.write_summary(ws, F, r, fm)
  local c = fm.config or M.build(fm)
  r = r + 1
  ws:write(r, 0, "Configuration: nodes that differ from the golden or the fleet's majority (H4)", F.h2)
  r = r + 1
  if c.nodes == 0 then
    ws:write(r, 0, "H4 did not run on any node: no configuration to compare.", F.note)
    return r + 1
  end
  if #c.rows == 0 then
    ws:write(r, 0, ("Every node has the same %d settings (%d nodes); none differs from the golden.")
      :format(c.settings, c.nodes), F.note)
    r = r + 1
  else
    -- Majority spans the rung columns' narrow cells (set after this)
    local cols = { "Node", "Setting", "This node", "Golden" }
    for i, name in ipairs(cols) do ws:write(r, i - 1, name, F.header or F.key) end
    ws:merge(r, 4, r, 8, "Majority", F.header or F.key)
    r = r + 1
    for _, e in ipairs(c.rows) do
      ws:write(r, 0, e.node, F.key)
      ws:write(r, 1, e.key, F.text)
      ws:write(r, 2, e.value, F.outlier or F.text)
      ws:write(r, 3, e.golden or "", F.text)
      ws:merge(r, 4, r, 8, majority_text(e) or "", F.text)
      r = r + 1
    end
  end
  if #c.ties > 0 then
    ws:write(r, 0, ("No majority (nodes split evenly): %s"):format(table.concat(c.ties, ", ")), F.note)
    r = r + 1
  end
  return r
end

-- The same in JSON (fleet.json "configuration").
function M.json(fm)
  local c = fm.config or M.build(fm)
  return { nodes = c.nodes, settings = c.settings, differences = c.rows,
           no_majority = c.ties }
end

return M
