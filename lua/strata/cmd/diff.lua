-- strata diff: two runs side by side (docs/cli.md).
local args = require "strata.args"
local command = require "strata.command"
local journal = require "strata.journal"
local verdict = require "strata.verdict"
local compare = require "strata.compare"
local common = require "strata.report.common"

local M = {
  summary = "compare two runs' journals: cells side by side, % change",
  usage = [[
usage: strata diff A.jsonl B.jsonl [-o diff.xlsx] [--tolerance PCT]
The same tests and cells of run A and run B side by side: each test's
headline metric per cell, its change in % (flagged worse/better beyond
the tolerance, default 5, in the direction its criterion judges), verdict
changes, and inventory differences (driver, firmware, MTU, ...).
Exit: 0 nothing got worse, 1 a verdict or a headline metric got worse
beyond the tolerance, 2 usage or unreadable journals.]],
}

local function load(path)
  local ok, recs = pcall(journal.read, path)
  if not ok then error(args.usage_error(("%s: %s"):format(path, tostring(recs))), 0) end
  if #recs == 0 then error(args.usage_error(path .. ": no records"), 0) end
  return verdict.build(recs)
end

function M.main(argv)
  return command.guard(function()
    local o, pos = args.parse(argv, {
      ["-o"] = "output", ["--output"] = "output", ["--tolerance"] = "tolerance",
      ["-h"] = { "help", flag = true }, ["--help"] = { "help", flag = true } })
    if o.help then io.stdout:write(M.usage, "\n") return 0 end
    if #pos ~= 2 then error(args.usage_error("diff takes two journal files"), 0) end
    local tol = tonumber(o.tolerance or 5)
    if not tol or tol < 0 then
      error(args.usage_error("--tolerance must be a percentage >= 0"), 0)
    end
    if o.output and not o.output:match("%.xlsx$") then
      error(args.usage_error("-o must name an .xlsx file: " .. o.output), 0)
    end
    local d = compare.diff(load(pos[1]), load(pos[2]), tol)
    d.path_a, d.path_b = pos[1], pos[2]
    local out = io.stdout
    out:write(("A %s: %s   B %s: %s   (tolerance %s%%)\n"):format(pos[1],
      tostring(d.verdict_a), pos[2], tostring(d.verdict_b), common.fmt(tol)))
    for _, t in ipairs(d.tests) do
      local head = ("%-8s %-8s %s%s"):format(t.id, t.layer, t.status_a,
        t.changed and (" -> " .. t.status_b .. (t.worse and "  VERDICT WORSE"
          or t.better and "  VERDICT BETTER" or ""))
        or "")
      out:write(head, "\n")
      for _, c in ipairs(t.cells) do
        if c.flag and c.flag ~= "within tolerance" or c.pct then
          out:write(("  %-30s %-16s %12s -> %-12s %8s  %s\n"):format(
            c.label ~= "" and c.label or "-", tostring(t.metric or ""),
            common.fmt(c.a), common.fmt(c.b),
            c.pct and ("%+.1f%%"):format(c.pct) or "", c.flag or ""))
        end
      end
    end
    if #d.inventory > 0 then
      out:write(("inventory: %d differences\n"):format(#d.inventory))
      for _, x in ipairs(d.inventory) do
        out:write(("  %-48s %s -> %s\n"):format(x.key, tostring(x.a or "(absent)"),
          tostring(x.b or "(absent)")))
      end
    end
    out:write(("%d worse, %d better beyond %s%%\n"):format(d.regressions,
      d.improvements, common.fmt(tol)))
    if o.output then
      require("strata.report.diffbook").write(o.output, d)
      io.stderr:write("strata: diff workbook ", o.output, "\n")
    end
    return d.regressions > 0 and 1 or 0
  end)
end

return M
