-- strata.redact: keep secrets out of every output.  Two nets: values of
-- keys that name a secret are masked, and any string that contains a
-- registered secret value (S3 keys, bearer tokens read from the
-- environment) has it replaced by "***".
local M = {}

local secrets = {}
local SECRET_KEY = { "secret", "password", "passwd", "token", "credential",
                     "private", "session_key", "access_key" }

-- Register a secret value to be masked wherever it appears.
function M.add(value)
  if type(value) == "string" and #value >= 6 then secrets[value] = true end
end

-- Register the values of environment variables that look like secrets,
-- and of those a site file names through *_env keys.
function M.add_from_env(site)
  for _, name in ipairs { "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
                          "AWS_SESSION_TOKEN", "STRATA_TOKEN" } do
    M.add(os.getenv(name))
  end
  local function walk(t)
    for k, v in pairs(t) do
      if type(v) == "table" then walk(v)
      elseif type(k) == "string" and k:match("_env$") and type(v) == "string" then
        M.add(os.getenv(v))
      end
    end
  end
  if type(site) == "table" then walk(site) end
end

local function is_secret_key(k)
  if type(k) ~= "string" then return false end
  local l = k:lower()
  if l:match("_env$") or l:match("_file$") then return false end
  for _, s in ipairs(SECRET_KEY) do
    if l:find(s, 1, true) then return true end
  end
  return false
end
M.is_secret_key = is_secret_key

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
  return s
end
M.mask = mask

-- A copy of v with secrets masked.
function M.clean(v, depth)
  depth = depth or 0
  if type(v) == "string" then return mask(v) end
  if type(v) ~= "table" or depth > 20 then return v end
  local out = {}
  for k, x in pairs(v) do
    if is_secret_key(k) and type(x) ~= "table" and type(x) ~= "number"
       and type(x) ~= "boolean" then
      out[k] = "***"
    else
      out[k] = M.clean(x, depth + 1)
    end
  end
  return setmetatable(out, getmetatable(v))
end

return M
