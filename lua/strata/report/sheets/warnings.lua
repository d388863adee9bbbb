-- strata.report.sheets.warnings: every check that held its FAIL limit but
-- crossed its warn limit (WARN: docs/specs.md), one row each with the
-- value, both limits and where they came from: what is drifting towards a
-- FAIL, in one place.  Written only when the run warned, so a run without
-- a warning keeps the workbook it had.
local sheet = require "strata.report.sheet"
local common = require "strata.report.common"
local verdict = require "strata.verdict"
local model = require "strata.model"
local units = require "strata.units"

local M = { names = { "Warnings" } }

-- One row per warned check (a group's warned members each their own).
local COLS = {
  { header = "Test", format = "text", get = function(w) return w.res.id end },
  { header = "Layer", format = "text", get = function(w) return w.res.layer end },
  { header = "Cell", format = "text",
    get = function(w) return verdict.label(w.res.params, w.res.cell) end },
  { header = "Metric", format = "text", get = function(w) return w.check.metric end },
  { header = "Value", width = 14, format = "value",
    get = function(w) return w.check.value end },
  { header = "Unit", format = "text",
    get = function(w) return units.of(w.res.units, w.check.metric) end },
  { header = "Limit; warn limit", width = 50, format = "wrap",
    get = function(w) return w.check.text end },
  { header = "Why", width = 40, format = "wrap",
    get = function(w) return w.check.warn_why end },
  { header = "Source", format = "text",
    get = function(w, m) return common.short_source(w.check.source, m.spec_roots) end },
}

local function warned(m)
  local rows = {}
  for _, res in ipairs(m.results or {}) do
    for _, top in ipairs(res.checks or {}) do
      if top.ok and top.warn then
        model.leaves(top, top, function(c)
          if c.warn then rows[#rows + 1] = { res = res, check = c } end
        end)
      end
    end
  end
  return rows
end

function M.write(ctx, m)
  local rows = warned(m)
  if #rows == 0 then return end
  local S = sheet.new(ctx, "Warnings")
  S:put(0, 0, "Warnings", ctx.F.h1, true)
  S:put(1, 0, "Every check that held its limit but crossed its warn limit: the "
        .. "test passed (amber on the Summary); the figure is heading for a FAIL.",
        ctx.F.subtitle, true)
  local hr = 3
  local last = sheet.column_table(S, hr, COLS, rows, m)
  S.ws:freeze_panes(hr + 1, 0)
  S.ws:autofilter(hr, 0, last, #COLS - 1)
  S:fit_columns(sheet.widths(COLS))
  S.ws:setup { tab_color = common.STATUS_COLORS.WARN.bg }
end

return M
