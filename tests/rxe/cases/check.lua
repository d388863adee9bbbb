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

function M.finish()
  print(M.failed == 0 and "ALL PASSED" or ("%d FAILED"):format(M.failed))
  return M.failed == 0 and 0 or 1
end

return M
