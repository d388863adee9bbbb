-- strata lua SCRIPT [ARGS...]: run a Lua script with every strata module
-- available (tests, bench drivers, one-off probes). The script's global
-- `arg` holds ARGS; its return value, when an integer, is the exit code.
local M = {
  summary = "run a Lua script with the strata modules (tests, bench)",
  usage = "usage: strata lua SCRIPT [ARGS...]",
}

function M.main(args)
  if not args[1] or args[1] == "--help" then
    io.stderr:write(M.usage, "\n")
    return args[1] and 0 or 2
  end
  local chunk, err = loadfile(args[1])
  if not chunk then
    io.stderr:write("strata: ", err, "\n")
    return 2
  end
  _G.arg = { [0] = args[1] }
  for i = 2, #args do _G.arg[i - 1] = args[i] end
  local rc = chunk(table.unpack(_G.arg))
  return math.type(rc) == "integer" and rc or 0
end

return M
