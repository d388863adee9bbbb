-- strata check: load and validate specs, site and thresholds; run nothing.
local args = require "strata.args"
local setup = require "strata.setup"
local thresholds = require "strata.thresholds"
local command = require "strata.command"
local model = require "strata.model"

local M = {
  summary = "validate specs, site and thresholds without running",
  usage = [[
usage: strata check [--criteria] [--site FILE] [--thresholds FILE]
                    [--profile FILE] [--set K=V]... [PATH...]
Loads everything `strata run` would and reports the first error with its
file:line (exit 2), and every TODO `strata site init` left in the site
file; warns about criteria that refer to site values the site file lacks.
--criteria prints the resolved criteria, one per line: test, metric,
operator, tier (FAIL, or WARN for a band), the limit as written, its value
(with --site, a site reference resolved), and the file:line it came from.]],
}

local OPTIONS = setmetatable({ ["--criteria"] = { "criteria", flag = true } },
                             { __index = command.RUN_OPTIONS })

-- What a limit comes to before anything runs: a number or literal as
-- written, a site reference read from the site file (when one is given),
-- and what only a run can know said so.
local function resolved(c, site, has_site)
  local l = c.limit
  if l.kind ~= "ref" then return thresholds.fmt_value(l.value) end
  if l.site then
    if not has_site then return "needs --site" end
    local v = thresholds.site_get(site, l.site)
    if v == nil then return ("site.%s not set"):format(l.site) end
    if l.factor ~= 1 and type(v) == "number" then v = v * l.factor end
    return thresholds.fmt_value(v)
  end
  if l.baseline then return "at run time (--baseline)" end
  if l.test then return ("at run time (%s, same cell)"):format(l.test) end
  return ("at run time (this result's %s)"):format(l.own)
end

-- The table's rows: a limit, its WARN band below it, a group as a row
-- then its members named "group: member" (as the Thresholds sheet names
-- them).  The limit is cut from the criterion's own text ("metric op
-- limit"), the operator is strata.model's.
local function rows(list, prefix, site, has_site, out)
  for _, c in ipairs(list) do
    local name = prefix .. tostring(c.metric)
    if c.members then
      out[#out + 1] = { c.id, name, model.GROUPS[c.op].text, "FAIL",
        ("%s of the %d below"):format(c.op == "any_of" and "one" or "each",
          #c.members), "-", tostring(c.source) }
      rows(c.members, name .. ": ", site, has_site, out)
    else
      for _, x in ipairs { { c, "FAIL" }, { c.warn, "WARN" } } do
        local k = x[1]
        if k then
          local op = model.symbol(k.op, "text")
          local rhs = k.text:sub(#tostring(k.metric) + #op + 3)
          out[#out + 1] = { c.id, name, op, x[2], rhs,
                            resolved(k, site, has_site), tostring(k.source) }
        end
      end
    end
  end
  return out
end

local function print_table(r)
  local head = { "test", "metric", "op", "tier", "limit", "resolved", "source" }
  local w = {}
  for i, h in ipairs(head) do w[i] = utf8.len(h) end
  for _, row in ipairs(r) do
    for i, v in ipairs(row) do w[i] = math.max(w[i], utf8.len(v) or #v) end
  end
  local function line(row)
    local cells = {}
    for i, v in ipairs(row) do
      cells[i] = i < #row and (v .. (" "):rep(w[i] - (utf8.len(v) or #v))) or v
    end
    io.stdout:write(table.concat(cells, "  "), "\n")
  end
  line(head)
  for _, row in ipairs(r) do line(row) end
end

function M.main(argv)
  return command.guard(function()
    local o, paths = args.parse(argv, OPTIONS)
    if o.help then io.stdout:write(M.usage, "\n") return 0 end
    local s = setup.load { paths = paths, site = o.site, warn_unknown = true,
                           todo_error = true,
                           thresholds = o.thresholds, profile = o.profile,
                           set = o.set,
                           -- the fleet model's FLEET criteria too, so a
                           -- --set FLEET... shows what a fleet run uses
                           fleet = true }
    local warnings = 0
    -- the site keys strata knows: an unset one is not judged, another a typo
    local ok, example = pcall(require("strata.yaml").load_file,
                              STRATA_HOME .. "/specs/site.example.yaml")
    thresholds.each(s.criteria, function(c)
      local warn = o.site and not c.members
        and thresholds.check_site_ref(c, s.site, ok and example or nil)
      if warn then
        io.stderr:write("strata: warning: ", warn, " ", o.site, "\n")
        warnings = warnings + 1
      end
    end)
    -- with --criteria stdout is the table alone (a pack's rows name its
    -- file as their source)
    local out = o.criteria and io.stderr or io.stdout
    for _, p in ipairs(s.packs or {}) do
      out:write(("hardware pack %s: %s\n"):format(p.name, p.why))
    end
    if o.criteria then
      thresholds.each(s.criteria, function(c)
        if not c.text then thresholds.set_text(c) end
      end)
      print_table(rows(s.criteria, "", s.site, o.site ~= nil, {}))
    end
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
