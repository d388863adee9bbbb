-- strata.command: what the command modules (lua/strata/cmd/*.lua) share:
-- the options that load a spec collection, and the guard that turns usage
-- and spec errors into exit code 2.
local args = require "strata.args"
local spec = require "strata.spec"

local M = {}

-- Options of `strata run`; `strata check` takes the same ones.
M.RUN_OPTIONS = {
  ["-o"] = "output", ["--output"] = "output", ["--site"] = "site",
  ["--thresholds"] = "thresholds", ["--set"] = { "set", many = true },
  ["--profile"] = "profile", ["--lab"] = { "lab", flag = true },
  ["--only"] = { "only", many = true }, ["--json"] = "json",
  ["--junit"] = "junit", ["--journal"] = "journal",
  ["--prometheus"] = "prometheus",
  ["--baseline"] = "baseline",
  ["-v"] = { "verbose", flag = true },
  ["--verbose"] = { "verbose", flag = true },
  ["-h"] = { "help", flag = true }, ["--help"] = { "help", flag = true },
}

-- Run fn(); a usage or spec error it raises is printed, exit code 2.
function M.guard(fn)
  local ok, rc = pcall(fn)
  if ok then return rc end
  if args.is_usage_error(rc) or spec.is_error(rc) then
    io.stderr:write("strata: ", tostring(rc), "\n")
    return 2
  end
  error(rc, 0)
end

return M
