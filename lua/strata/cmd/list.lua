-- strata list: what a spec collection holds, without running anything.
local args = require "strata.args"
local setup = require "strata.setup"
local spec = require "strata.spec"
local runner = require "strata.runner"
local command = require "strata.command"

local M = {
  summary = "list tests: ID, layer, title, needs, matrix size",
  usage = [[
usage: strata list [--only PATTERN]... [PATH...]
PATH: spec files or folders (default: specs/).]],
}

function M.main(argv)
  return command.guard(function()
    local o, paths = args.parse(argv, {
      ["--only"] = { "only", many = true },
      ["-h"] = { "help", flag = true }, ["--help"] = { "help", flag = true } })
    if o.help then io.stdout:write(M.usage, "\n") return 0 end
    local tests, by_id = spec.load(#paths > 0 and paths or setup.default_paths())
    local order = runner.plan(tests, by_id, o.only)
    local w = 6
    for _, t in ipairs(order) do w = math.max(w, #t.id) end
    local fmt = "%-" .. w .. "s %-9s %-44s %-14s %s\n"
    io.stdout:write(fmt:format("ID", "LAYER", "TITLE", "NEEDS", "CELLS"))
    for _, t in ipairs(order) do
      local cells = #spec.cells(t)
      local params = #t.params > 0 and (" (" .. table.concat(t.params, " x ") .. ")") or ""
      io.stdout:write(fmt:format(t.id, t.layer, t.title:sub(1, 44),
        table.concat(t.needs, ","), cells .. params))
    end
    return 0
  end)
end

return M
