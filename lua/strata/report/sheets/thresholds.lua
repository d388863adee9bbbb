-- strata.report.sheets.thresholds: every criterion of the run (a row per
-- limit, its WARN band below it, a group and then its members), what it
-- resolved to and where it came from.
local sheet = require "strata.report.sheet"
local common = require "strata.report.common"
local model = require "strata.model"

local M = { names = { "Thresholds" } }
local fmt = common.fmt

-- One value for what a limit resolved to: a number, "lo ... hi", a literal.
local function resolved_value(c)
  if c.limit_lo and c.limit_hi and c.limit_lo ~= c.limit_hi then
    return fmt(c.limit_lo) .. " \u{2026} " .. fmt(c.limit_hi)
  elseif c.limit_lo then
    return c.limit_lo
  end
  return c.limit_other
end

-- The Thresholds sheet's rows from criteria (the thresholds record's, or a
-- test's resolved ones): one per limit, its WARN band on the row below
-- ("warn >="), a group as a row naming what must hold, then its members
-- named "group: member".  Each row's key matches its resolved twin.
local function threshold_rows(crits, prefix, out)
  for _, c in ipairs(crits or {}) do
    local name = prefix .. tostring(c.metric)
    if c.members then
      out[#out + 1] = { id = c.id, metric = name, op = model.GROUPS[c.op].text,
        expr = ("%s of the %d below"):format(c.op == "any_of" and "one"
          or "each", #c.members), source = c.source }
      threshold_rows(c.members, name .. ": ", out)
    else
      local key = tostring(c.id) .. "\0" .. name .. "\0" .. tostring(c.op)
      out[#out + 1] = { id = c.id, metric = name, key = key, crit = c,
        op = model.symbol(c.op, "sheet"), expr = c.expr, source = c.source,
        where = model.where_text(c.where) }
      if c.warn then
        out[#out + 1] = { id = c.id, metric = name, key = key .. "\0warn",
          crit = c.warn, op = "warn " .. model.symbol(c.op, "sheet"),
          expr = c.warn.expr, source = c.warn.source }
      end
    end
  end
  return out
end

-- What each criterion resolved to in the run (the tests' roll-ups).
local function resolved(model)
  local out = {}
  for _, t in ipairs(model.tests or {}) do
    for _, row in ipairs(threshold_rows(t.criteria, "", {})) do
      if row.key then out[row.key] = resolved_value(row.crit) end
    end
  end
  return out
end

local THRESHOLD_COLS = {
  { header = "Test", format = "text", get = function(c) return c.id end },
  { header = "Metric", format = "text", get = function(c) return c.metric end },
  { header = "Op", format = "text", get = function(c) return c.op end },
  { header = "Limit", width = 36, format = "wrap",
    get = function(c)   -- with the cells it judges (a where), if not all
      return c.expr ~= nil and (fmt(c.expr) .. (c.where or "")) or nil end },
  { header = "Resolved", width = 14, format = "value",
    get = function(c, ctx) return c.key and ctx.resolved[c.key] end },
  { header = "Source", format = "text",
    get = function(c, ctx)
      return common.short_source(c.source, ctx.model.spec_roots) end },
}

function M.write(ctx, model)
  local F = ctx.F
  local S = sheet.new(ctx, "Thresholds")
  S:put(0, 0, "Thresholds", F.h1)
  S:put(1, 0, "Every criterion of this run, what it resolved to, and where "
        .. "it came from (file:line relative to the spec folder, or --set). "
        .. "Resolved is empty for tests that did not run.", F.subtitle, true)
  local hr = 3
  local r = sheet.column_table(S, hr, THRESHOLD_COLS,
                                threshold_rows(model.criteria, "", {}),
                                { model = model, resolved = resolved(model) })
  S.ws:freeze_panes(hr + 1, 0)
  S.ws:autofilter(hr, 0, math.max(r, hr), #THRESHOLD_COLS - 1)
  S:fit_columns(sheet.widths(THRESHOLD_COLS))
end

return M
