-- strata report: rebuild the workbook (and JSON/JUnit) from a journal,
-- e.g. after a run was killed.
local args = require "strata.args"
local journal = require "strata.journal"
local verdict = require "strata.verdict"
local outputs = require "strata.outputs"
local command = require "strata.command"

local M = {
  summary = "rebuild the workbook from a run's journal (.jsonl)",
  usage = [[
usage: strata report JOURNAL.jsonl [-o FILE.xlsx] [--json FILE] [--junit FILE]
                     [--prometheus FILE.prom]
--prometheus: node_exporter textfile format (docs/report.md).
Default workbook: the journal's path with .xlsx instead of .jsonl.]],
}

function M.main(argv)
  return command.guard(function()
    local o, pos = args.parse(argv, {
      ["-o"] = "output", ["--output"] = "output", ["--json"] = "json",
      ["--junit"] = "junit", ["--prometheus"] = "prometheus",
      ["-h"] = { "help", flag = true }, ["--help"] = { "help", flag = true } })
    if o.help then io.stdout:write(M.usage, "\n") return 0 end
    if #pos ~= 1 then error(args.usage_error("report takes one journal file"), 0) end
    local recs = journal.read(pos[1])
    if #recs == 0 then
      io.stderr:write("strata: ", pos[1], ": no records\n")
      return 2
    end
    if recs[1].type == "run" and recs[1].fleet then
      return require("strata.fleet.run").report(recs, o, pos[1])
    end
    local m = verdict.build(recs)
    local xlsx = o.output or (pos[1]:gsub("%.jsonl$", "") .. ".xlsx")
    outputs.write(m, { xlsx = xlsx, json = o.json, junit = o.junit,
                       prometheus = o.prometheus })
    io.stderr:write(("strata: %d results from %s -> %s\n"):format(#m.results,
      pos[1], xlsx))
    return 0
  end)
end

return M
