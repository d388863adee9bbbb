-- strata.cli: parse the command line and dispatch to a command module.
-- Each command is lua/strata/cmd/<name>.lua returning
-- { summary = "...", usage = "...", main = function(args) -> exit code }.
local M = {}

local COMMANDS = { "run", "list", "check", "report", "diff", "serve", "site", "k8s",
                   "lab", "lua", "health" }

local function usage_text()
  local lines = {
    "usage: strata <command> [options]",
    "",
    "commands:",
  }
  for _, name in ipairs(COMMANDS) do
    local ok, cmd = pcall(require, "strata.cmd." .. name)
    if ok then
      lines[#lines + 1] = string.format("  %-8s %s", name, cmd.summary)
    end
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "strata <command> --help shows a command's options."
  lines[#lines + 1] = "Exit codes: 0 all passed (warnings included), 1 a test"
  lines[#lines + 1] = "failed/errored/was blocked, 2 usage, spec, site or threshold"
  lines[#lines + 1] = "file errors, 3 with --strict: nothing failed but a test WARNed"
  lines[#lines + 1] = "(docs/cli.md, \"Exit codes\")."
  return table.concat(lines, "\n") .. "\n"
end

function M.main(args)
  local name = args[1]
  if name == nil or name == "-h" or name == "--help" or name == "help" then
    io.stdout:write(usage_text())
    return name == nil and 2 or 0
  end
  if name == "--version" or name == "version" then
    io.stdout:write("strata ", STRATA_VERSION, "\n")
    return 0
  end
  local ok, cmd = pcall(require, "strata.cmd." .. name)
  if not ok or type(cmd) ~= "table" then
    if not tostring(cmd):find("module 'strata.cmd." .. name .. "' not found", 1, true) then
      error(cmd, 0)
    end
    io.stderr:write("strata: unknown command '", name, "'\n", usage_text())
    return 2
  end
  local rest = {}
  for i = 2, #args do rest[#rest + 1] = args[i] end
  return cmd.main(rest)
end

return M
