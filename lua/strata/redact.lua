-- strata.redact: keep secrets out of every output, and bytes that are not
-- UTF-8 out of every file.  Applied where each output is written, not
-- where text is made: the journal (journal.lua), the workbook, JSON and
-- JUnit (outputs.lua), stderr and stdout (M.guard_stdio), so that nothing
-- a spec or a server produces (a log line, a note, a metric name, a table
-- cell, an error message, an HTTP body quoted in a reason) goes around it.
--
-- What is masked ("***"):
--   * every registered secret value: the credential environment variables,
--     the values the site names through *_env keys, the secret entries of
--     the credential files and the token files the site names, site values
--     under keys that name a secret, the password of user:password@ in site
--     URLs (and each value's percent-encoded form);
--   * whatever looks like one in any text: user:password@ in a URL, the
--     token after "Bearer ";
--   * in tables, the value of any key that names a secret.
local M = {}

local secrets, nsecrets = {}, 0
-- Masking is a function of the text and the secrets registered: records
-- repeat the same keys and values (10 000 results share a few hundred
-- texts), so answers are remembered, forgotten when a secret is added
-- and when the memory holds too many.  Short texts only: a long one is
-- rarely seen twice.
local MEMO_MAX, MEMO_LEN = 8192, 256
local masked, nmasked = {}, 0
local secret_keys, nkeys = {}, 0
local SECRET_KEY = { "secret", "password", "passwd", "token", "credential",
                     "private", "session_key", "access_key", "bearer" }

local function pct(s)
  return (s:gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end

-- Register a secret value to be masked wherever it appears.
function M.add(value)
  if type(value) ~= "string" then return end
  value = value:gsub("^%s+", ""):gsub("%s+$", "")
  if #value < 6 or secrets[value] then return end
  secrets[value] = true
  nsecrets = nsecrets + 1
  masked, nmasked = {}, 0
  local enc = pct(value)
  if enc ~= value then secrets[enc] = true end
end

local function secret_key(k)
  local l = k:lower()
  if l:match("_env$") or l:match("_file$") then return false end
  for _, s in ipairs(SECRET_KEY) do
    if l:find(s, 1, true) then return true end
  end
  return false
end

local function is_secret_key(k)
  if type(k) ~= "string" then return false end
  local v = secret_keys[k]
  if v == nil then
    v = secret_key(k)
    if nkeys >= MEMO_MAX then secret_keys, nkeys = {}, 0 end
    secret_keys[k], nkeys = v, nkeys + 1
  end
  return v
end
M.is_secret_key = is_secret_key

-- A credentials file (AWS INI: "key = value") or a token file (the first
-- line): the values that are secrets.
local function add_file(key, path)
  local f = type(path) == "string" and io.open(path, "r")
  if not f then return end
  local text = f:read("a") or ""
  f:close()
  if key:lower():find("token", 1, true) or key:lower():find("bearer", 1, true) then
    M.add(text:match("^%s*([^\r\n]+)"))
    return
  end
  for k, v in text:gmatch("([%w_%.%-]+)%s*[=:]%s*([^\r\n]+)") do
    if is_secret_key(k) then M.add(v) end
  end
end

-- Register the secrets of the environment and of a site file (see above).
-- Shared subtables (YAML aliases) are walked once.
function M.add_from_env(site)
  for _, name in ipairs { "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                          "AWS_ACCESS_KEY_ID", "STRATA_TOKEN",
                          "STRATA_SERVE_TOKEN" } do
    M.add(os.getenv(name))
  end
  local seen = {}
  local function walk(t)
    if seen[t] then return end
    seen[t] = true
    for k, v in pairs(t) do
      if type(v) == "table" then walk(v)
      elseif type(v) == "string" and type(k) == "string" then
        local l = k:lower()
        if l:match("_env$") then M.add(os.getenv(v))
        elseif l:match("_file$") and (l:find("cred", 1, true)
               or l:find("token", 1, true) or l:find("bearer", 1, true)
               or l:find("secret", 1, true)) then add_file(l, v)
        elseif is_secret_key(k) then M.add(v) end
      end
      if type(v) == "string" then
        local userinfo = v:match("^%a[%w+.-]*://([^/@%s]+)@")
        if userinfo then
          M.add(userinfo)
          M.add(userinfo:match(":(.*)$"))
        end
      end
    end
  end
  if type(site) == "table" then walk(site) end
  M.guard_stdio()
end

-- Bytes that are not UTF-8 become U+FFFD (cjson would copy them as they
-- are, and a JSON line with them is no JSON a strict reader accepts).
local function utf8_clean(s)
  if utf8.len(s) then return s end
  local out, i = {}, 1
  while i <= #s do
    local n, bad = utf8.len(s, i)
    if n then out[#out + 1] = s:sub(i) break end
    out[#out + 1] = s:sub(i, bad - 1)
    out[#out + 1] = "\u{FFFD}"
    i = bad + 1
  end
  return table.concat(out)
end
M.utf8 = utf8_clean

local function mask(s)
  for v in pairs(secrets) do
    local i = 1
    while true do
      local a, b = s:find(v, i, true)
      if not a then break end
      s = s:sub(1, a - 1) .. "***" .. s:sub(b + 1)
      i = a + 3
    end
  end
  -- what looks like a secret whether registered or not
  s = s:gsub("(%a[%w+.-]*://)[^/@%s]+@", "%1***@")
  s = s:gsub("([Bb][Ee][Aa][Rr][Ee][Rr]%s+)[%w%-%._~%+/]+=*", "%1***")
  return s
end

-- Text fit for any output: secrets masked, valid UTF-8.
function M.mask(s)
  local m = masked[s]
  if m then return m end
  m = utf8_clean(mask(s))
  if #s <= MEMO_LEN then
    if nmasked >= MEMO_MAX then masked, nmasked = {}, 0 end
    masked[s], nmasked = m, nmasked + 1
  end
  return m
end

-- v with secrets masked (keys too: a metric's name is a key) and text
-- made UTF-8: a table is copied only where something in it, or below it,
-- changed (most records have nothing to mask: the journal writes one per
-- cell), so the result may share tables with v and is never to be changed
-- in place.  A table met twice is cleaned once; a structure with a cycle
-- is copied whole and the cycle stays a cycle (the encoder then refuses
-- it) instead of recursing for ever.  The walk is core.clean_copy
-- (engine/core/walk_lua.c: it runs for every value of every journal
-- record and of the run model); the memos above answer it first.
local clean_copy = require("strata.core").clean_copy
function M.clean(v)
  return clean_copy(v, masked, secret_keys, M.mask, is_secret_key)
end

-- M.clean(v) as one line of JSON, written as cjson.encode writes it
-- (strata.runner's settings: NaN null, sparse arrays as objects) without
-- the copy: core.clean_json (engine/core/json_lua.c) masks as it writes.
-- The journal writes one per cell.
local clean_json = require("strata.core").clean_json
function M.json(v)
  return clean_json(v, masked, secret_keys, M.mask, is_secret_key)
end

-- stderr and stdout through M.mask, for this process and the cells it
-- forks: every io.stderr:write / io.stdout:write / io.write / print.
local guarded = false
function M.guard_stdio()
  if guarded then return end
  guarded = true
  local function proxy(real)
    local p = {}
    function p.write(self, ...)
      local n = select("#", ...)
      local parts = table.pack(...)
      for i = 1, n do parts[i] = M.mask(tostring(parts[i])) end
      local ok, err = real:write(table.unpack(parts, 1, n))
      if not ok then return nil, err end
      return self
    end
    setmetatable(p, { __index = function(_, name)
      local f = real[name]
      if type(f) ~= "function" then return f end
      return function(self, ...)
        if self == p then return f(real, ...) end
        return f(self, ...)
      end
    end })
    return p
  end
  local out, err = io.stdout, io.stderr
  io.stdout, io.stderr = proxy(out), proxy(err)
  io.write = function(...) return io.stdout:write(...) end
  rawset(_G, "print", function(...)
    local n, parts = select("#", ...), table.pack(...)
    for i = 1, n do parts[i] = tostring(parts[i]) end
    io.stdout:write(table.concat(parts, "\t", 1, n), "\n")
  end)
end

return M
