-- Tiny assertion helpers for the guest cases (strata lua).
local M = { failed = 0 }

function M.ok(cond, fmt, ...)
  local msg = select("#", ...) > 0 and fmt:format(...) or fmt
  if cond then
    print("ok   " .. msg)
  else
    print("FAIL " .. msg)
    M.failed = M.failed + 1
  end
  return cond
end

-- Call f(...) expecting a raise; returns the message ("" if it passed).
function M.raises(f, ...)
  local ok, err = pcall(f, ...)
  if ok then return nil end
  return tostring(err)
end

-- The incast cases' agents: "HOST:PORT" -> a verbs peer table carrying
-- the shared token read from the first line of tokenfile (also returned).
function M.peers(tokenfile)
  local f = assert(io.open(tokenfile))
  local token = f:read("l")
  f:close()
  return function(hp, name)
    local h, p = hp:match("^(.-):(%d+)$")
    return { name = name, host = h, port = tonumber(p), token = token,
             timeout = 10 }
  end, token
end

function M.finish()
  print(M.failed == 0 and "ALL PASSED" or ("%d FAILED"):format(M.failed))
  return M.failed == 0 and 0 or 1
end

return M
