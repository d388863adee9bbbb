-- tests/s3/lib.lua: shared by the s3 test scripts (run by `strata lua`).
local M = {}

-- Read a rgw.sh env file (KEY=VALUE lines) into a table.
function M.env(dir)
  local t = {}
  local f = assert(io.open(dir .. "/env"))
  for line in f:lines() do
    local k, v = line:match("^([%w_]+)=(.*)$")
    if k then t[k] = v end
  end
  f:close()
  return t
end

local passed, failed = 0, 0
-- Run one named check; a failure is counted and printed, the rest go on.
function M.check(name, fn)
  local ok, err = pcall(fn)
  if ok then
    passed = passed + 1
    print("ok   " .. name)
  else
    failed = failed + 1
    print("FAIL " .. name .. ": " .. tostring(err))
  end
end

function M.eq(got, want, what)
  if got ~= want then
    error(string.format("%s: got %s, want %s", what or "value",
                        tostring(got), tostring(want)), 2)
  end
end

function M.truthy(v, what)
  if not v then error((what or "condition") .. " is false", 2) end
end

-- Expect fn to raise; return the message.
function M.raises(fn, pattern)
  local ok, err = pcall(fn)
  if ok then error("expected an error matching '" .. pattern .. "'", 2) end
  err = tostring(err)
  if not err:find(pattern) then
    error("error '" .. err .. "' does not match '" .. pattern .. "'", 2)
  end
  return err
end

function M.finish()
  print(string.format("%d passed, %d failed", passed, failed))
  if failed > 0 then os.exit(1) end
end

return M
