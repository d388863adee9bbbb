-- strata.report.sheets.metrics: every value each cell measured, one row
-- per metric (long format), with the check that judged it.
local sheet = require "strata.report.sheet"
local verdict = require "strata.verdict"
local model = require "strata.model"
local units = require "strata.units"

local M = { names = { "Metrics" } }
local huge = math.huge

-- A result's metric names (no delta.*), headline first, the rest sorted.
local function result_metrics(res, headline)
  local names, values = {}, res.metrics or {}
  for k in pairs(values) do
    if k ~= headline and k:sub(1, 6) ~= "delta." then names[#names + 1] = k end
  end
  if names[2] then table.sort(names) end
  if headline and values[headline] ~= nil then table.insert(names, 1, headline) end
  return names
end

-- The metrics a result's failed (WARNed) checks name (strata.model).
local NONE = {}

local leaves, failed_metrics, warned_metrics =
  model.leaves, model.failed_metrics, model.warned_metrics

function M.write(ctx, model)
  local F = ctx.F
  local S = sheet.new(ctx, "Metrics")
  S:put(0, 0, "Metrics", F.h1, true)
  S:put(1, 0, "Every value each cell measured (counter deltas are on "
        .. "Counters). Check: FAIL where a check on that metric failed, "
        .. (((model.counts or {}).WARN or 0) > 0
            and "WARN where one held past its warn limit, " or "")
        .. "PASS where one passed, blank where the value is only recorded.", F.subtitle, true)
  local hr = 3
  local cols = { "Test", "Layer", "Cell", "Metric", "Value", "Unit",
                 "Check" }
  for j, h in ipairs(cols) do S:put(hr, j - 1, h, F.header) end
  local r = hr
  local rows, value_fmt, full = {}, {}, false
  for _, res in ipairs(model.results or {}) do
    local bad, warned, judged = failed_metrics(res), warned_metrics(res), NONE
    for _, c in ipairs(res.checks or NONE) do
      leaves(c, c, function(l)
        if l.metric then
          if judged == NONE then judged = {} end
          judged[l.metric] = true
        end
      end)
    end
    local label = verdict.label(res.params, res.cell)
    for _, m in ipairs(result_metrics(res, res.headline)) do
      local v = res.metrics[m]
      if r + 1 >= sheet.ROW_LIMIT then
        full = true
        goto full
      end
      r = r + 1
      local i = #rows + 1
      if type(v) == "number" then
        value_fmt[i] = F.numfmt(sheet.numfmt1(v), bad[m] or false)
        if v ~= v or v == huge or v == -huge then v = nil end
      else
        value_fmt[i] = bad[m] and F.bad_text or F.text
      end
      -- FAIL only where a check on this metric failed; blank: recorded
      rows[i] = { res.id, res.layer, label, m, v, units.of(res.units, m),
                  bad[m] and "FAIL" or warned[m] and "WARN"
                  or judged[m] and "PASS" or nil }
    end
  end
  ::full::
  local text = { num = F.text, text = F.text }
  S:put_rows(hr + 1, 0, rows, { text, text, text, text, { cells = value_fmt },
    text, { by = F.status, num = F.text, text = F.text } })
  if full then
    S:put(r + 1, 0, "The sheet is full: run.json has every value.", F.note,
          true)
  end
  S.ws:freeze_panes(hr + 1, 0)
  S.ws:autofilter(hr, 0, math.max(r, hr), #cols - 1)
  S:fit_columns({ [4] = 14 }, 40)
end

return M
