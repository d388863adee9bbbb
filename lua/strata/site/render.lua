-- strata.site.render: the site file `strata site init` writes, as text in
-- the shape of specs/site.example.yaml, each filled value followed by a
-- comment saying where it came from, each unknown one a TODO; and the
-- merge into a file that exists: only keys the file lacks are added (a
-- section it lacks at its end, a key into its section), so every line the
-- user wrote stays byte for byte; a TODO is never added again.  And the TODOs of a loaded site table:
-- `strata check` names them, a run leaves them out.
local yamlout = require "strata.k8s.yamlout"

local M = {}

-- The value a TODO key holds until it is filled.
M.TODO = "TODO"

-- Sections in the order of specs/site.example.yaml.
local ORDER = { "site", "host", "gpu", "rdma", "peers", "storage", "s3",
                "s3rdma", "nccl", "golden" }
local RANK = {}
for i, s in ipairs(ORDER) do RANK[s] = i end

local scalar = yamlout.scalar

-- { a = 1, b = "x" } -> "{ a: 1, b: x }" (keys sorted: one spelling)
local function flow(map)
  local keys = {}
  for k in pairs(map) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do
    parts[#parts + 1] = k .. ": " .. scalar(map[k])
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

local function pad(s, col)
  return #s < col and (s .. (" "):rep(col - #s)) or (s .. " ")
end

-- The lines of one key of a section: "  key: value  # from".
local function key_lines(e)
  local key = e.path:match("%.(.+)$")
  if e.todo then
    return { pad("  " .. key .. ": " .. M.TODO, 30) .. "# TODO: " .. e.todo }
  end
  local v = e.value
  if type(v) == "table" then
    local out = { pad("  " .. key .. ":", 30) .. "# " .. e.from }
    for _, item in ipairs(v) do
      out[#out + 1] = "    - " .. (type(item) == "table" and flow(item)
                                    or scalar(item))
    end
    return out
  end
  return { pad("  " .. key .. ": " .. scalar(v), 30) .. "# " .. e.from }
end

-- Entries grouped by section, sections in ORDER then by name.
local function sections(entries)
  local by, names = {}, {}
  for _, e in ipairs(entries) do
    local s = e.path:match("^([^.]+)%.")
    if not by[s] then by[s] = {} names[#names + 1] = s end
    table.insert(by[s], e)
  end
  table.sort(names, function(a, b)
    local ra, rb = RANK[a] or 99, RANK[b] or 99
    if ra ~= rb then return ra < rb end
    return a < b
  end)
  return names, by
end

local function section_text(name, list)
  local lines = { name .. ":" }
  for _, e in ipairs(list) do
    for _, l in ipairs(key_lines(e)) do lines[#lines + 1] = l end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- A new site file from entries.  header: the comment lines at its top.
function M.text(entries, header)
  local parts = { header }
  local names, by = sections(entries)
  for _, name in ipairs(names) do
    parts[#parts + 1] = section_text(name, by[name])
  end
  return table.concat(parts, "\n")
end

-- Split text into lines, keeping whether it ended with a newline.
local function split(text)
  local lines = {}
  for l in (text .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("(.-)\n") do
    lines[#lines + 1] = l
  end
  return lines
end

-- The index of a block section's header line ("name:" alone, or with a
-- comment), and of its last indented line; nil when the section is not a
-- block mapping at the top level (absent, or written in flow style).
local function block_span(lines, name)
  local head
  for i, l in ipairs(lines) do
    if l:match("^" .. name:gsub("%p", "%%%0") .. ":%s*$")
       or l:match("^" .. name:gsub("%p", "%%%0") .. ":%s+#") then
      head = i
      break
    end
  end
  if not head then return nil end
  local last = head
  for i = head + 1, #lines do
    local l = lines[i]
    if l:match("^[^%s#]") then break end
    if l:match("^%s+%S") then last = i end
  end
  return head, last
end

-- Merge entries into the text of an existing site file (its table: doc).
-- Returns the new text and the list of what was added ("gpu.count", ...)
-- and what could not be ("gpu: written in flow style").
function M.merge(text, doc, entries)
  -- TODOs are asked once, in a new file: a TODO the user deleted (no
  -- peer: loopback; no s3 section: no S3 tests) is an answer, not a gap
  local facts = {}
  for _, e in ipairs(entries) do
    if not e.todo then facts[#facts + 1] = e end
  end
  entries = facts
  local lines = split(text)
  local added, skipped = {}, {}
  local names, by = sections(entries)
  local appended = {}
  for _, name in ipairs(names) do
    local have = doc[name]
    if have == nil then
      appended[#appended + 1] = section_text(name, by[name])
      for _, e in ipairs(by[name]) do added[#added + 1] = e.path end
    elseif type(have) == "table" then
      local missing = {}
      for _, e in ipairs(by[name]) do
        if have[e.path:match("%.(.+)$")] == nil then
          missing[#missing + 1] = e
        end
      end
      if #missing > 0 then
        local _, last = block_span(lines, name)
        if not last then
          skipped[#skipped + 1] = name .. ": not a block mapping at the top"
            .. " level (flow style?): its missing keys were not added"
        else
          local new = {}
          for _, e in ipairs(missing) do
            for _, l in ipairs(key_lines(e)) do new[#new + 1] = l end
            added[#added + 1] = e.path
          end
          for k = #new, 1, -1 do table.insert(lines, last + 1, new[k]) end
        end
      end
    else
      skipped[#skipped + 1] = name .. ": not a mapping in this file"
    end
  end
  if #added == 0 then return text, added, skipped end
  local out = table.concat(lines, "\n") .. "\n"
  if #appended > 0 then
    out = out .. "\n# added by strata site init\n"
      .. table.concat(appended, "\n")
  end
  return out, added, skipped
end

-- The TODOs left in a loaded site: { path = "s3.endpoint", line = n }
-- for every string value that starts with TODO (lines: yaml.load_file's).
function M.todos(site, lines)
  local out = {}
  local function walk(t, prefix)
    local keys = {}
    for k in pairs(t) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
      local v, path = t[k], prefix .. tostring(k)
      if type(v) == "table" then
        walk(v, path .. ".")
      elseif type(v) == "string" and v:match("^TODO") then
        out[#out + 1] = { path = path, line = lines and lines[t]
                          and lines[t][k], parent = t, key = k }
      end
    end
  end
  walk(site, "")
  table.sort(out, function(a, b)
    if (a.line or 0) ~= (b.line or 0) then return (a.line or 0) < (b.line or 0) end
    return a.path < b.path
  end)
  return out
end

-- Leave a site's TODOs out of it (a run goes on as if they were not
-- written: the tests that need them SKIP or leave the check not judged),
-- and a section left empty by it.  Returns the TODOs.
function M.strip_todos(site, lines)
  local list = M.todos(site, lines)
  for _, t in ipairs(list) do t.parent[t.key] = nil end
  for k, v in pairs(site) do
    if type(v) == "table" and next(v) == nil then site[k] = nil end
  end
  return list
end

return M
