-- strata.cli: placeholder until the runner lands.
local M = {}
function M.main(args)
  io.stdout:write("strata ", STRATA_VERSION, "\n")
  return 0
end
return M
