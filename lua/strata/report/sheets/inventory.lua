-- strata.report.sheets.inventory: the host as the run found it (the
-- inventory record): scalars as key/value blocks, lists of devices as
-- tables, nested sections under their dotted names.
local sheet = require "strata.report.sheet"
local common = require "strata.report.common"

local M = { names = { "Inventory" } }
local fmt = common.fmt

local function is_array(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n > 0 and n == #t
end

local function is_flat(t)
  for _, v in pairs(t) do
    if type(v) == "table" then return false end
  end
  return true
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

-- Preferred first columns for tables of devices, then the rest sorted.
local FIRST = { "name", "addr", "id", "host", "model", "vendor", "device" }

local function inline(v)
  if type(v) ~= "table" then return v end
  local parts = {}
  if is_array(v) then
    for _, x in ipairs(v) do parts[#parts + 1] = fmt(inline(x)) end
    return table.concat(parts, ", ")
  end
  for _, k in ipairs(sorted_keys(v)) do
    parts[#parts + 1] = tostring(k) .. "=" .. fmt(inline(v[k]))
  end
  return table.concat(parts, "; ")
end

function M.write(ctx, model)
  local F = ctx.F
  local S = sheet.new(ctx, "Inventory")
  S:put(0, 0, "Inventory", F.h1)
  local r = 2

  local function kv_block(title, t, keys)
    if #keys == 0 then return end
    S:put(r, 0, title, F.h2)
    r = r + 1
    for _, k in ipairs(keys) do
      local v = t[k]
      if type(v) == "table" then v = inline(v) end
      S:put(r, 0, tostring(k), F.key)
      S:put(r, 1, v, F.wrap)
      r = r + 1
    end
    r = r + 1
  end

  local function table_block(title, list)
    local seen, cols = {}, {}
    for _, row in ipairs(list) do
      for k in pairs(row) do seen[k] = true end
    end
    for _, k in ipairs(FIRST) do
      if seen[k] then cols[#cols + 1] = k seen[k] = nil end
    end
    for _, k in ipairs(sorted_keys(seen)) do cols[#cols + 1] = k end
    S:put(r, 0, title, F.h2)
    r = r + 1
    for c, k in ipairs(cols) do S:put(r, c - 1, tostring(k), F.header) end
    for _, row in ipairs(list) do
      r = r + 1
      for c, k in ipairs(cols) do
        local v = inline(row[k])
        S:put(r, c - 1, v, F.text)
      end
    end
    r = r + 2
  end

  local function render(title, t)
    local scalars, nested = {}, {}
    for _, k in ipairs(sorted_keys(t)) do
      local v = t[k]
      if type(v) ~= "table" or (is_array(v) and is_flat(v)) then
        scalars[#scalars + 1] = k
      elseif next(v) ~= nil then
        nested[#nested + 1] = k
      end
    end
    kv_block(title, t, scalars)
    for _, k in ipairs(nested) do
      local v, name = t[k], (title == "Host" and "" or title .. ".") .. k
      if is_array(v) and #v > 0 then
        local records = true
        for _, x in ipairs(v) do
          if type(x) ~= "table" or is_array(x) then records = false end
        end
        if records then table_block(name, v) else
          local flat = {}
          for i, x in ipairs(v) do flat[i] = { value = inline(x) } end
          table_block(name, flat)
        end
      else
        render(name, v)
      end
    end
  end

  local inv = model.inventory or {}
  if next(inv) == nil then
    S:put(r, 0, "No inventory was recorded.", F.note)
  else
    render("Host", inv)
  end
  S.ws:freeze_panes(1, 0)
  S:fit_columns({}, 60)
end

return M
