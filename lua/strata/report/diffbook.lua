-- strata.report.diffbook: `strata diff A B -o diff.xlsx`: the comparison
-- (strata.compare.diff) as a workbook.  Sheets: Diff (every cell of every
-- test side by side, the headline metric's change in %, verdict changes
-- highlighted), Inventory diff, Runs.
local common = require "strata.report.common"
local sheet = require "strata.report.sheet"

local M = {}

local FLAG_STATUS = { worse = "FAIL", better = "PASS", ["only in A"] = "SKIP",
                      ["only in B"] = "SKIP" }

-- One row per cell; declarative like the Summary (report/workbook.lua).
local COLS = {
  { header = "Test", width = 10, format = "text", get = function(r) return r.t.id end },
  { header = "Layer", width = 10, format = "text", get = function(r) return r.t.layer end },
  { header = "Cell", width = 28, format = "text", get = function(r) return r.c.label end },
  { header = "Metric", width = 22, format = "text", get = function(r) return r.t.metric end },
  { header = "A", width = 12, format = "value", get = function(r) return r.c.a end },
  { header = "B", width = 12, format = "value", get = function(r) return r.c.b end },
  { header = "Change %", width = 10, format = "0.0", get = function(r) return r.c.pct end },
  { header = "Status A", width = 11, format = "status", get = function(r) return r.c.status_a end },
  { header = "Status B", width = 11, format = "status", get = function(r) return r.c.status_b end },
  { header = "Note", width = 40, format = "wrap", get = function(r)
      local n = {}
      if r.c.flag then n[#n + 1] = r.c.flag end
      if r.first and r.t.changed then
        n[#n + 1] = ("test %s -> %s"):format(r.t.status_a, r.t.status_b)
      end
      return #n > 0 and table.concat(n, "; ") or nil end },
}

function M.write(path, d)
  local wb <close>, ctx = sheet.open(path,
    { reserved = { "Diff", "Inventory diff", "Runs" } })
  local F = ctx.F
  local S = sheet.new(ctx, "Diff")
  S:put(0, 0, "strata diff", F.title)
  S:put(1, 0, ("A: %s (%s, %s)   B: %s (%s, %s)   tolerance %s%%"):format(
    tostring(d.path_a), tostring(d.run_a.host), tostring(d.verdict_a),
    tostring(d.path_b), tostring(d.run_b.host), tostring(d.verdict_b),
    common.fmt(d.tolerance)), F.subtitle, true)
  S.ws:set_row(2, 20)
  S:merge(2, 0, 2, #COLS - 1, ("%d worse, %d better beyond the tolerance; %d "
    .. "inventory differences"):format(d.regressions, d.improvements,
    #d.inventory), d.regressions > 0 and F.msg_bad or F.msg_ok)
  local rows = {}
  for _, t in ipairs(d.tests) do
    for i, c in ipairs(t.cells) do rows[#rows + 1] = { t = t, c = c, first = i == 1 } end
    if #t.cells == 0 then rows[#rows + 1] = { t = t, c = { label = "" }, first = true } end
  end
  local hr = 4
  local last = sheet.column_table(S, hr, COLS, rows)
  -- the change and the note in the colour of what happened
  for i, row in ipairs(rows) do
    local st = FLAG_STATUS[row.c.flag]
    if row.first and row.t.changed then st = row.t.worse and "FAIL" or "PASS" end
    if st then
      local v = row.c.pct
      if row.c.flag == "worse" and common.finite(v) then
        S:put(hr + i, 6, v, F.numfmt("0.0", true))
      end
      S:put(hr + i, 9, COLS[10].get(row), F.for_status(st))
    end
  end
  S.ws:freeze_panes(hr + 1, 0)
  S.ws:autofilter(hr, 0, math.max(last, hr), #COLS - 1)
  S.ws:setup { repeat_rows = { hr, hr }, activate = true }
  S:fit_columns(sheet.widths(COLS))

  local I = sheet.new(ctx, "Inventory diff")
  I:put(0, 0, "Inventory differences", F.h1, true)
  local icols = {
    { header = "Key", width = 48, format = "text", get = function(x) return x.key end },
    { header = "A", width = 40, format = "wrap", get = function(x) return x.a end },
    { header = "B", width = 40, format = "wrap", get = function(x) return x.b end },
  }
  if #d.inventory == 0 then
    I:put(2, 0, "The inventories do not differ.", F.note, true)
  else
    sheet.column_table(I, 2, icols, d.inventory)
  end
  I.ws:freeze_panes(3, 0)
  I:fit_columns({ [0] = 48, [1] = 40, [2] = 40 })

  local R = sheet.new(ctx, "Runs")
  R:put(0, 0, "Runs", F.h1, true)
  local facts = { { "Journal", d.path_a, d.path_b }, { "Host", d.run_a.host, d.run_b.host },
    { "Started", d.run_a.started, d.run_b.started },
    { "strata", d.run_a.version, d.run_b.version },
    { "Verdict", d.verdict_a, d.verdict_b } }
  R:put(2, 1, "A", F.header)
  R:put(2, 2, "B", F.header)
  for i, f in ipairs(facts) do
    R:put(2 + i, 0, f[1], F.key)
    R:put(2 + i, 1, f[2] ~= nil and tostring(f[2]) or "", F.wrap)
    R:put(2 + i, 2, f[3] ~= nil and tostring(f[3]) or "", F.wrap)
  end
  R.ws:freeze_panes(1, 0)
  R:fit_columns({ [0] = 12, [1] = 50, [2] = 50 })
  common.close_book(wb, path)
end

return M
