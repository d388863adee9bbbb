-- tests/lib/check.lua - the check() of the Lua script tests, once.  A test
-- loads it beside itself:
--   local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()
-- check(cond, what, ...) says "ok   what" on stdout or "FAIL what" (what a
-- format when arguments follow it); { quiet = true }: only the failures,
-- on stderr.  check.n counts the failures; check.done(name) says how many
-- and exits, 1 when any failed.
return function(opts)
  local quiet = opts and opts.quiet
  local c = { n = 0 }
  function c.done(name)
    io.stderr:write(name, ": ", c.n == 0 and "ok" or (c.n .. " failure(s)"),
                    "\n")
    os.exit(c.n == 0 and 0 or 1)
  end
  return setmetatable(c, { __call = function(_, cond, what, ...)
    if select("#", ...) > 0 then what = what:format(...) end
    if not cond then
      c.n = c.n + 1
      if quiet then io.stderr:write("FAIL ", what, "\n") end
    end
    if not quiet then print((cond and "ok   " or "FAIL ") .. what) end
    return cond
  end })
end
