-- strata.site.fleet: `strata site init --fleet slurm` (docs/site.md, "A
-- whole allocation"): the probe of `strata site init --golden` run on
-- every node of the allocation (one srun step per node, as the fleet
-- mode runs its nodes: strata.fleet.slurm), its facts merged into one
-- site file.  A fact every node shares is written as on one node; one
-- the nodes disagree on takes the majority's value, its comment naming
-- each node that differs and its value; with no majority it is a TODO
-- listing them.  The golden is the majority's, setting by setting.
local cjson = require "cjson"
local core = require "strata.core"

local M = {}

-- The line `strata site init --json` prints: one JSON document.
M.MARK = "@strata-site "

-- A number as it was written (JSON brings 1500 back as 1500.0).
local function num(v)
  return math.type(v) == "float" and math.tointeger(v) or v
end

-- The comparable text of a value (tables: JSON with sorted keys).
local function key_of(v)
  if type(v) ~= "table" then return tostring(num(v)) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. key_of(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- values: { {node=, value=} } -> the majority value (held by more than
-- half of n), how many hold it, and the nodes that differ
local function majority(values, n)
  local count, first = {}, {}
  for _, x in ipairs(values) do
    local k = key_of(x.value)
    count[k] = (count[k] or 0) + 1
    if not first[k] then first[k] = x.value end
  end
  for k, c in pairs(count) do
    if c * 2 > n then
      local differ = {}
      for _, x in ipairs(values) do
        if key_of(x.value) ~= k then differ[#differ + 1] = x end
      end
      return first[k], c, differ
    end
  end
end

local function show(v)
  if v == nil then return "(absent)" end
  return type(v) == "table" and cjson.encode(v) or tostring(num(v))
end

-- A golden list (nics, rdma): item by item (by name), field by field,
-- each field the majority's; the differences as "g2 eth0.mtu 1400".
local function merge_items(values, n)
  local names, by = {}, {}
  for _, x in ipairs(values) do
    for _, item in ipairs(x.value or {}) do
      if not by[item.name] then by[item.name] = {} names[#names + 1] = item.name end
      by[item.name][x.node] = item
    end
  end
  local merged, notes = {}, {}
  for _, name in ipairs(names) do
    local fields, seen = {}, {}
    for _, x in ipairs(values) do
      for f in pairs(by[name][x.node] or {}) do
        if f ~= "name" and not seen[f] then seen[f] = true fields[#fields + 1] = f end
      end
    end
    table.sort(fields)
    local item = { name = name }
    for _, f in ipairs(fields) do
      local vals = {}
      for _, x in ipairs(values) do
        vals[#vals + 1] = { node = x.node, value = (by[name][x.node] or {})[f] }
      end
      local v, _, differ = majority(vals, n)
      if v == nil and differ == nil then
        notes[#notes + 1] = ("%s.%s: no majority"):format(name, f)
      else
        item[f] = v
        for _, d in ipairs(differ) do
          notes[#notes + 1] = ("%s %s.%s %s (majority %s)"):format(d.node, name, f,
            show(d.value), show(v))
        end
      end
    end
    merged[#merged + 1] = item
  end
  return merged, notes
end

-- per_node: { {node=, entries=} } (nodes that answered) -> the site
-- file's entries: facts merged, TODOs once each.
function M.merge(per_node)
  local n = #per_node
  local order, facts, todos = {}, {}, {}
  for _, x in ipairs(per_node) do
    for _, e in ipairs(x.entries) do
      if e.todo then
        if not todos[e.path] then todos[e.path] = e order[#order + 1] = e.path end
      else
        if not facts[e.path] then facts[e.path] = {} order[#order + 1] = e.path end
        table.insert(facts[e.path], { node = x.node, value = e.value, from = e.from })
      end
    end
  end
  local out = {}
  for _, path in ipairs(order) do
    if todos[path] then out[#out + 1] = todos[path]
    else
      local vals = facts[path]
      for _, x in ipairs(per_node) do     -- a node without the fact
        local has = false
        for _, v in ipairs(vals) do has = has or v.node == x.node end
        if not has then vals[#vals + 1] = { node = x.node } end
      end
      out[#out + 1] = M.merge_one(path, vals, n)
    end
  end
  return out
end

-- One fact across the nodes -> one entry.
function M.merge_one(path, vals, n)
  local from = vals[1].from or "?"
  for _, v in ipairs(vals) do if v.from then from = v.from break end end
  if path:match("^golden%.") and type(vals[1].value) == "table" then
    local merged, notes = merge_items(vals, n)
    local text = ("%d nodes; %s"):format(n, from)
    if #notes > 0 then
      text = text .. "; DIFFERS: " .. table.concat(notes, "; ")
    end
    return { path = path, value = merged, from = text }
  end
  local v, held, differ = majority(vals, n)
  if v == nil and held then
    local parts = {}
    for _, d in ipairs(differ) do parts[#parts + 1] = d.node .. " " .. show(d.value) end
    return { path = path, todo = ("%d of %d nodes lack it; %s"):format(held, n,
             table.concat(parts, ", ")) }
  elseif v == nil then
    local parts = {}
    for _, x in ipairs(vals) do parts[#parts + 1] = x.node .. " " .. show(x.value) end
    return { path = path, todo = "the nodes differ, no majority: "
             .. table.concat(parts, ", ") }
  end
  if #differ == 0 then
    return { path = path, value = v, from = ("all %d nodes; %s"):format(n, from) }
  end
  local parts = {}
  for _, d in ipairs(differ) do parts[#parts + 1] = d.node .. " " .. show(d.value) end
  return { path = path, value = v, from = ("majority %d of %d nodes; DIFFERS: %s; %s")
           :format(held, n, table.concat(parts, ", "), from) }
end

-- Run `strata site init --golden --json` on every node of the Slurm
-- allocation, one srun step each, at once.  Returns the allocation, the
-- nodes' answers { {node=, entries=} } and the failures { {node=, why=} }.
function M.collect_slurm(strata, timeout)
  local slurm = require "strata.fleet.slurm"
  local alloc = slurm.allocation()
  local g <close> = require("strata.fleet").group()
  local tasks = {}
  for _, n in ipairs(alloc.nodes) do
    local argv = slurm.srun(n.name, { strata, "site", "init", "--golden", "--json" },
                            { name = "strata-site-init" })
    tasks[g:spawn { cmd = argv }] = { node = n.name, err = {} }
  end
  local deadline = core.now() + (timeout or 120)
  while g:running() > 0 and core.now() < deadline do
    local ev = g:next(1.0)
    local t = ev and tasks[ev.id]
    if t and ev.line then
      if ev.stream == "stdout" and ev.line:sub(1, #M.MARK) == M.MARK then
        local ok, doc = pcall(cjson.decode, ev.line:sub(#M.MARK + 1))
        if ok and type(doc) == "table" then t.doc = doc end
      elseif ev.stream == "stderr" then
        t.err[#t.err + 1] = ev.line
      end
    elseif t then
      t.code = ev.exit
    end
  end
  local answers, failed = {}, {}
  for _, n in ipairs(alloc.nodes) do
    for id, t in pairs(tasks) do
      if t.node == n.name then
        if t.code == nil then g:kill(id, "KILL") end
        if t.doc and type(t.doc.entries) == "table" then
          answers[#answers + 1] = { node = t.node, entries = t.doc.entries }
        else
          failed[#failed + 1] = { node = t.node, why = t.code == nil
            and ("no answer in %d s"):format(timeout or 120)
            or ("exit %s: %s"):format(tostring(t.code),
                 table.concat(t.err, " | "):sub(-300)) }
        end
      end
    end
  end
  return alloc, answers, failed
end

return M
