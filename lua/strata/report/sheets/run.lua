-- strata.report.sheets.run: how the run was made: the command line, the
-- host and times, the workbook, the hardware packs, the severity model
-- and what it asks for this host, and every input file with its SHA-256.
local xl = require "strata.report"
local sheet = require "strata.report.sheet"
local common = require "strata.report.common"

local M = { names = { "Run" } }
local duration_text = common.duration_text

local function shell_quote(argv)
  local out = {}
  for _, a in ipairs(argv or {}) do
    a = tostring(a)
    if a == "" or a:find("[^%w%-%._/:=,@+]") then
      a = "'" .. a:gsub("'", "'\\''") .. "'"
    end
    out[#out + 1] = a
  end
  return table.concat(out, " ")
end

-- The severity model the run used (strata.severity) and what it asks
-- for this host; returns the next free row.
local function write_severity(S, F, model, r)
  local sv = require("strata.severity").of_model(model)
  if not sv then return r end
  S:put(r, 0, "Severity", F.h2)
  r = r + 1
  local d = sv.decision
  S:put(r, 0, "Action", F.key)
  S:put(r, 1, d.action .. (d.id and (" (%s %s, rule %d: %s)"):format(
    d.id, d.status, d.rule, d.source) or ""), F.wrap)
  r = r + 1
  S:put(r, 0, "Rules from", F.key)
  S:put(r, 1, sv.source, F.wrap)
  for i, rule in ipairs(sv.rules or {}) do
    r = r + 1
    S:put(r, 0, ("Rule %d"):format(i), F.key)
    S:put(r, 1, require("strata.severity").rule_text(rule), F.wrap)
    S:put(r, 2, rule.source, F.text)
  end
  return r + 1
end

-- The hardware packs the run chose and why (docs/site.md); nil for a
-- journal from before packs.
local function packs_text(packs)
  if packs == nil then return nil end
  if #packs == 0 then
    return "none: no pack in specs/packs/index.yaml holds for the hardware "
      .. "found (or site.packs is [])"
  end
  local parts = {}
  for _, p in ipairs(packs) do
    parts[#parts + 1] = ("%s (%s)"):format(p.name, p.why)
  end
  return table.concat(parts, "; ")
end

function M.write(ctx, model)
  local F, run = ctx.F, model.run or {}
  local S = sheet.new(ctx, "Run")
  S:put(0, 0, "Run", F.h1)
  local rows = {
    { "Command line", shell_quote(run.argv) },
    { "Working directory", run.cwd },
    { "strata version", run.version },
    { "Host", run.host },
    { "Started", run.started },
    { "Ended", run.ended or "(not recorded)" },
    { "Duration", duration_text(run.started, run.ended) },
    { "Interrupted", run.interrupted == true },
    { "Verdict", model.verdict },
    { "Workbook", run.output },
    { "libxlsxwriter", xl.version() },
    { "Hardware packs", packs_text(run.packs) },
  }
  local r = 2
  for _, kv in ipairs(rows) do
    if kv[2] ~= nil then
      S:put(r, 0, kv[1], F.key)
      S:put(r, 1, kv[2], F.wrap)
      r = r + 1
    end
  end
  r = write_severity(S, F, model, r + 1)
  r = r + 1
  S:put(r, 0, "Input files", F.h2)
  r = r + 1
  S:put(r, 0, "Role", F.header)
  S:put(r, 1, "Path", F.header)
  S:put(r, 2, "SHA-256", F.header)
  for _, f in ipairs(run.files or {}) do
    r = r + 1
    S:put(r, 0, f.role, F.text)
    S:put(r, 1, f.path, F.wrap)
    S:put(r, 2, f.sha256, F.text)
  end
  S.ws:freeze_panes(1, 0)
  S:fit_columns({ [0] = 16, [1] = 70, [2] = 68 })
end

return M
