-- strata.report.chart_keys: what t.table's chart may say, checked where the
-- spec says it (in the cell's child, at the spec's line), so that a wrong
-- column is the spec's error rather than a silent note in the workbook.
-- The keys are the ones the workbook's chart drawing reads.
local M = {}

local CHART_KEYS = { x = true, y = true, title = true, x_title = true,
                     y_title = true, y_min = true }

-- t.table's chart: x and y are column numbers of that table (1-based); a
-- wrong one raises "t.table 'name': chart: ...".
function M.check(name, columns, chart)
  local function bad(fmt, ...)
    error(("t.table '%s': chart: " .. fmt):format(tostring(name), ...), 0)
  end
  if type(chart) ~= "table" then bad("must be a table { x = n, y = { n } }") end
  for k in pairs(chart) do
    if not CHART_KEYS[k] then bad("unknown key '%s'", tostring(k)) end
  end
  local n = type(columns) == "table" and #columns or 0
  local function col(v, what)
    if math.type(v) ~= "integer" or v < 1 or v > n then
      bad("%s = %s is not a column number 1..%d", what, tostring(v), n)
    end
  end
  col(chart.x, "x")
  local ys = type(chart.y) == "table" and chart.y or { chart.y }
  if #ys == 0 then bad("y names no column") end
  for _, y in ipairs(ys) do col(y, "y") end
  if chart.y_min ~= nil and chart.y_min ~= false and type(chart.y_min) ~= "number" then
    bad("y_min must be a number or false (auto)")
  end
end

return M
