-- Shared by the host tests (run with ./build/strata lua): a tiny check
-- library and the fixture HTTP server.
local M = { failures = 0 }

function M.check(cond, fmt, ...)
  if not cond then
    M.failures = M.failures + 1
    local info = debug.getinfo(2, "Sl")
    io.stderr:write(("%s:%d: check failed: %s\n"):format(
      info.short_src, info.currentline, fmt and fmt:format(...) or "?"))
  end
  return cond
end

-- pcall(fn, ...) must raise an error containing every one of the plain
-- strings in want; returns the message.
function M.raises(want, fn, ...)
  local ok, err = pcall(fn, ...)
  local msg = tostring(err)
  if ok then
    M.check(false, "expected an error containing %q, got success", want[1])
    return nil
  end
  for _, w in ipairs(want) do
    M.check(msg:find(w, 1, true), "error %q lacks %q", msg, w)
  end
  return msg
end

M.now = require("strata.core").now
M.dir = arg[0]:match("^(.*)/[^/]*$") or "."
M.fixtures = M.dir .. "/../../fixtures/host"

-- Start fixtures/host/http_fixture.py; returns base URL and a stop().
function M.http_fixture(env)
  local script = M.fixtures .. "/http_fixture.py"
  local prefix = ""
  for k, v in pairs(env or {}) do prefix = prefix .. ("%s='%s' "):format(k, v) end
  local f = assert(io.popen(prefix .. "exec /usr/bin/python3 " .. script ..
                            " --lifetime 120", "r"))
  local line = f:read("l") or ""
  local port, pid = line:match("^PORT (%d+) PID (%d+)")
  assert(port, "fixture server did not start: " .. line)
  return "http://127.0.0.1:" .. port, function()
    os.execute("kill " .. pid .. " 2>/dev/null")
    f:close()
  end
end

function M.finish(name)
  if M.failures > 0 then
    io.stderr:write(("%s: %d failures\n"):format(name, M.failures))
    return 1
  end
  print(name .. ": ok")
  return 0
end

return M
