-- strata check: load and validate specs, site and thresholds; run nothing.
local args = require "strata.args"
local setup = require "strata.setup"
local thresholds = require "strata.thresholds"
local command = require "strata.command"

local M = {
  summary = "validate specs, site and thresholds without running",
  usage = [[
usage: strata check [--site FILE] [--thresholds FILE] [--set K=V]... [PATH...]
Loads everything `strata run` would and reports the first error with its
file:line (exit 2); warns about criteria that refer to site values the
site file lacks.]],
}

function M.main(argv)
  return command.guard(function()
    local o, paths = args.parse(argv, command.RUN_OPTIONS)
    if o.help then io.stdout:write(M.usage, "\n") return 0 end
    local s = setup.load { paths = paths, site = o.site, warn_unknown = true,
                           thresholds = o.thresholds, profile = o.profile,
                           set = o.set }
    local warnings = 0
    thresholds.each(s.criteria, function(c)
      local warn = o.site and not c.members
        and thresholds.check_site_ref(c, s.site)
      if warn then
        io.stderr:write("strata: warning: ", warn, " ", o.site, "\n")
        warnings = warnings + 1
      end
    end)
    local nspec = 0
    for _, f in ipairs(s.files) do
      if f.role == "spec" then nspec = nspec + 1 end
    end
    io.stdout:write(("ok: %d tests in %d files, %d criteria%s%s\n"):format(
      #s.tests, nspec, #s.criteria,
      s.thresholds_file and (" (" .. s.thresholds_file .. ")") or "",
      warnings > 0 and (", " .. warnings .. " warnings") or ""))
    return 0
  end)
end

return M
