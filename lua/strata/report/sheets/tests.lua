-- strata.report.sheets.tests: one sheet per test that has a matrix, tables
-- or notes: its criteria, the cells (or the one cell's metrics), the
-- headline's pivot over the first two parameters with its chart, the
-- tables the test emitted (charted when asked) and its notes.  plan names
-- the sheets first, so that the Summary can link to them.
local sheet = require "strata.report.sheet"
local common = require "strata.report.common"
local verdict = require "strata.verdict"
local model = require "strata.model"
local units = require "strata.units"

local M = {}
local fmt, finite = common.fmt, common.finite
local huge = math.huge

-- Tests that get their own sheet: a matrix, tables or notes.  Sets
-- ctx.test_sheets (the plan) and ctx.detail (test id -> sheet name).
local function plan_tests(ctx, model)
  local by = verdict.by_test(model.results)
  local plan, names = {}, {}
  for _, t in ipairs(model.tests or {}) do
    local rs = by[t.id] or {}
    local extra = false
    for _, r in ipairs(rs) do
      if (r.tables and #r.tables > 0) or (r.notes and #r.notes > 0) then
        extra = true
      end
    end
    if #rs > 1 or extra then
      local name = sheet.unique(ctx, sheet.sheet_title(t.id, t.title))
      plan[#plan + 1] = { test = t, results = rs, name = name,
                          roots = model.spec_roots, baseline = model.baseline }
      names[t.id] = name
    end
  end
  return plan, names
end

function M.plan(ctx, m)
  ctx.test_sheets, ctx.detail = plan_tests(ctx, m)
end

local function sorted_unique(list)
  local seen, out, allnum = {}, {}, true
  for _, v in ipairs(list) do
    if v ~= nil and not seen[v] then
      seen[v] = true
      out[#out + 1] = v
      if type(v) ~= "number" then allnum = false end
    end
  end
  if allnum then table.sort(out) end
  return out, allnum
end

-- Metric names of results (no delta.*), headline first, rest sorted.
local function metric_names(rs, headline)
  local seen, names = {}, {}
  for _, r in ipairs(rs) do
    for k in pairs(r.metrics or {}) do
      if not seen[k] and not k:match("^delta%.") and k ~= headline then
        seen[k] = true
        names[#names + 1] = k
      end
    end
  end
  table.sort(names)
  local has_headline = false
  for _, r in ipairs(rs) do
    if r.metrics and r.metrics[headline] ~= nil then has_headline = true end
  end
  if headline and has_headline then table.insert(names, 1, headline) end
  return names
end

-- The metrics a result's failed checks name (strata.model).
local leaves, failed_metrics = model.leaves, model.failed_metrics

local function unit_of(rs, metric)
  for _, r in ipairs(rs) do
    local u = units.of(r.units, metric)
    if u then return u end
  end
end

local function with_unit(rs, m)
  local u = unit_of(rs, m)
  return u and (m .. " (" .. u .. ")") or m
end


-- The baseline's metrics for a result (run --baseline), or nil.
local function baseline_of(base, res)
  if not base then return nil end
  return (require("strata.compare").lookup(base.index, res.id, res.params,
                                           res.cell))
end

local function write_cells(S, r, t, rs, metrics, base, roots)
  local F = S.ctx.F
  local params = t.params or (rs[1] and rs[1].params) or {}
  local cols = {}
  for _, p in ipairs(params) do cols[#cols + 1] = p end
  for _, m in ipairs(metrics) do cols[#cols + 1] = with_unit(rs, m) end
  -- run --baseline: the headline in the baseline and the change
  local hm = base and metrics[1]
  if hm then
    cols[#cols + 1] = "baseline " .. hm
    cols[#cols + 1] = "vs baseline %"
  end
  local ncore = #cols
  cols[#cols + 1] = "Status"
  cols[#cols + 1] = "Time (s)"
  cols[#cols + 1] = "Failed checks / reason"
  local rows, bad = {}, {}
  local short, np, none = common.shortener(roots), #params, {}
  for i, res in ipairs(rs) do
    local row, cell, values = {}, res.cell or none, res.metrics or none
    for j, p in ipairs(params) do row[j] = cell[p] end
    for j, m in ipairs(metrics) do
      local v = values[m]
      if type(v) == "number" and not finite(v) then v = nil end
      row[np + j] = v
    end
    if hm then
      local bm = baseline_of(base, res)
      local bv = bm and bm[hm]
      row[ncore - 1] = bv
      row[ncore] = require("strata.compare").pct(bv, (res.metrics or {})[hm])
    end
    row[ncore + 1] = res.status
    local d = res.duration_s
    row[ncore + 2] = type(d) == "number" and d == d and d ~= huge and d ~= -huge
      and d or nil
    local why = common.failed_checks(res)
    if #why == 0 and res.reason then why = { res.reason } end
    if #why == 0 then
      -- a cell outside a criterion's where: measured, not judged, said so
      for _, c in ipairs(res.checks or {}) do
        if c.out_of_scope then why[#why + 1] = c.metric .. " " .. c.why end
      end
    end
    row[ncore + 3] = short(table.concat(why, "; "))
    rows[i] = row
    bad[i] = failed_metrics(res)
  end
  -- status coloured, reasons wrapped, failed metrics red
  local colfmt = {
    [ncore + 1] = { by = F.status, num = F.status_other, text = F.status_other },
    [ncore + 3] = { num = F.wrap, text = F.wrap } }
  for k, m in ipairs(metrics) do
    local j, cells = #params + k, {}
    for i, row in ipairs(rows) do
      if bad[i][m] then
        local v = row[j]
        cells[i] = type(v) == "number" and F.numfmt(sheet.numfmt1(v), true)
          or F.bad_text
      end
    end
    colfmt[j] = { cells = cells }
  end
  local last = sheet.grid(S, r, 0, cols, rows, colfmt)
  S.ws:autofilter(r, 0, math.max(last, r), #cols - 1)
  for _, row in ipairs(rows) do
    if row[ncore + 3] ~= "" then S.fixed[ncore + 2] = 56 end
  end
  return last, params
end

-- A single cell: one row per metric (Metric, Value, Unit, Check).
local function write_single(S, r, res, metrics, base)
  local F = S.ctx.F
  local cols = { "Metric", "Value", "Unit", "Check" }
  local bm = base and baseline_of(base, res)
  if base then
    cols[5] = "Baseline"
    cols[6] = "vs baseline %"
  end
  local checks = {}
  for _, top in ipairs(res.checks or {}) do
    leaves(top, top, function(c)
      if c.metric then
        local prev = checks[c.metric]
        local text = c.not_judged and c.why
          or c.ok and ((c.warn and "WARN: " .. tostring(c.warn_why)
          or "ok: " .. tostring(c.text or ""))) or (c.why or c.text or "failed")
        if top ~= c then text = top.metric .. " (" .. top.op .. "): " .. text end
        checks[c.metric] = prev and (prev .. "; " .. text) or text
      end
    end)
  end
  local rows, bad = {}, failed_metrics(res)
  for i, m in ipairs(metrics) do
    local v = (res.metrics or {})[m]
    if type(v) == "number" and not finite(v) then v = nil end
    rows[i] = { m, v, units.of(res.units, m), checks[m] }
    if base then
      local bv = bm and bm[m]
      rows[i][5] = bv
      rows[i][6] = require("strata.compare").pct(bv, v)
    end
  end
  local values = {}
  for i, row in ipairs(rows) do
    local v = row[2]
    local nf = type(v) == "number" and sheet.numfmt1(v) or nil
    if bad[row[1]] then
      values[i] = nf and F.numfmt(nf, true) or F.bad_text
    else
      values[i] = nf and F.numfmt(nf) or F.text
    end
  end
  local last = sheet.grid(S, r, 0, cols, rows, { [2] = { cells = values },
    [4] = { num = F.wrap, text = F.wrap } })
  for _, row in ipairs(rows) do
    if row[4] then S.fixed[3] = 60 end
  end
  S.minw[1] = 14
  return last
end

-- Pivot of the headline over the first two parameters + a chart.
local function write_pivot(S, r, rs, params, headline)
  local F = S.ctx.F
  local p1, p2 = params[1], params[2]
  local xs, numeric_x = sorted_unique((function()
    local l = {}
    for _, res in ipairs(rs) do l[#l + 1] = (res.cell or {})[p1] end
    return l
  end)())
  local ys = { false }
  if p2 then
    local l = {}
    for _, res in ipairs(rs) do l[#l + 1] = (res.cell or {})[p2] end
    ys = sorted_unique(l)
  end
  local value, failed, at, any = {}, {}, {}, false
  for _, res in ipairs(rs) do
    if finite((res.metrics or {})[headline]) then any = true break end
  end
  if not any then return r - 1 end   -- nothing measured: no empty grid
  for _, res in ipairs(rs) do
    local c = res.cell or {}
    local key = tostring(c[p1]) .. "\0" .. (p2 and tostring(c[p2]) or "")
    local v = (res.metrics or {})[headline]
    value[key] = type(v) == "number" and v == v and v ~= huge and v ~= -huge
      and v or nil
    failed[key] = failed_metrics(res)[headline]
    if failed[key] then at[key] = { tostring(c[p1]), p2 and tostring(c[p2]) or "" } end
  end
  local hm = with_unit(rs, headline)
  S:put(r, 0, p2 and ("%s by %s and %s"):format(hm, p1, p2)
          or ("%s by %s"):format(hm, p1), F.h2, true)
  r = r + 1
  local header = { p2 and (p1 .. " \\ " .. p2) or p1 }
  for _, y in ipairs(ys) do
    header[#header + 1] = p2 and (p2 .. "=" .. fmt(y)) or hm
  end
  local rows, nums = {}, {}
  for i, x in ipairs(xs) do
    rows[i] = { x }
    for j, y in ipairs(ys) do
      local v = value[tostring(x) .. "\0" .. (p2 and tostring(y) or "")]
      rows[i][j + 1] = v
      if v then nums[#nums + 1] = v end
    end
  end
  local nf = sheet.numfmt(nums)
  -- x keys bold, values in one format, red where the headline failed
  local anynum = false
  for _, x in ipairs(xs) do
    if type(x) == "number" then anynum = true end
  end
  local colfmt = { { num = anynum and F.key_num[sheet.numfmt(xs)] or nil,
                     text = F.key } }
  local row_of, col_of = {}, {}
  for i, x in ipairs(xs) do row_of[tostring(x)] = i end
  for j, y in ipairs(ys) do
    col_of[p2 and tostring(y) or ""] = j + 1
    colfmt[j + 1] = { num = F.numfmt(nf), text = F.numfmt(nf), cells = {} }
  end
  for key, bad in pairs(failed) do
    local i, j = row_of[at[key][1]], col_of[at[key][2]]
    if bad and i and j then colfmt[j].cells[i] = F.numfmt(nf, true) end
  end
  local last = sheet.grid(S, r, 0, header, rows, colfmt)
  if #xs < 2 or #nums < 2 then return last end
  local series = {}
  for j = 1, #ys do series[j] = j end
  sheet.chart_block(S, { r0 = r, r1 = last, x = 0, ys = series,
    numeric_x = numeric_x, xmin = numeric_x and xs[1] or nil,
    xmax = numeric_x and xs[#xs] or nil, names_from_header = p2 ~= nil,
    title = ("%s vs %s"):format(hm, p1), x_title = p1, y_title = hm,
    y_unit = unit_of(rs, headline), at_row = r - 1, at_col = #header + 1 })
  return math.max(last, r - 1 + sheet.CHART_ROWS)
end

-- A table a test emitted, with its chart when it asked for one.
local function write_emitted(S, r, tb, label)
  local F = S.ctx.F
  local cols = tb.columns or {}
  S:put(r, 0, tostring(tb.name or "table") .. (label ~= "" and
        (" [" .. label .. "]") or ""), F.h2, true)
  r = r + 1
  if #cols == 0 then
    S:put(r, 0, "(a table without columns)", F.note, true)
    return r
  end
  local rows = {}
  for i, row in ipairs(tb.rows or {}) do
    local out = {}
    for j = 1, #cols do
      local v = type(row) == "table" and row[j] or nil
      if type(v) == "number" and not finite(v) then v = nil end
      if type(v) == "table" then v = nil end
      out[j] = v
    end
    rows[i] = out
  end
  local last = sheet.grid(S, r, 0, cols, rows)
  local ch = tb.chart
  if type(ch) ~= "table" or #rows < 1 then return last end
  local x, ys = ch.x, {}
  local ok = math.type(x) == "integer" and x >= 1 and x <= #cols
  for _, y in ipairs(type(ch.y) == "table" and ch.y or { ch.y }) do
    if math.type(y) == "integer" and y >= 1 and y <= #cols then
      ys[#ys + 1] = y - 1
    else
      ok = false
    end
  end
  if not ok or #ys == 0 then
    S:put(last + 1, 0, "Chart not drawn: its x/y column numbers do not "
          .. "match the table's columns.", F.note, true)
    return last + 1
  end
  local numeric, xmin, xmax, monotonic, prev = true, nil, nil, true, nil
  for _, row in ipairs(rows) do
    local v = row[x]
    if type(v) ~= "number" then numeric = false else
      xmin = math.min(xmin or v, v)
      xmax = math.max(xmax or v, v)
      if prev and v < prev then monotonic = false end
      prev = v
    end
  end
  sheet.chart_block(S, { r0 = r, r1 = last, x = x - 1, ys = ys, numeric_x = numeric,
    monotonic = monotonic, xmin = xmin, xmax = xmax, names_from_header = true,
    title = ch.title or tb.name, x_title = ch.x_title or fmt(cols[x]),
    y_title = ch.y_title, y_min = type(ch.y_min) == "number" and ch.y_min or nil,
    zero_y = ch.y_min ~= false,
    y_unit = units.in_text(ch.y_title) or units.in_text(cols[ys[1] + 1]),
    at_row = r - 1, at_col = #cols + 1 })
  return math.max(last, r - 1 + sheet.CHART_ROWS)
end

local function write_test(ctx, p)
  local F, t, rs = ctx.F, p.test, p.results
  local S = sheet.new(ctx, p.name)
  S:put(0, 0, ("%s \u{00B7} %s"):format(t.id, tostring(t.title or "")),
        F.h1, true)
  S.ws:set_row(0, 22)
  S:put(1, 0, t.status, F.for_status(t.status))
  local sub = ("layer %s  \u{00B7}  %d cell%s"):format(tostring(t.layer),
    #rs, #rs == 1 and "" or "s")
  if finite(t.duration_s) then
    sub = sub .. ("  \u{00B7}  %s s"):format(
      fmt(math.floor(t.duration_s * 10 + 0.5) / 10))
  end
  S:put(1, 1, sub, F.subtitle, true)
  local r = 2
  local first = true
  for _, c in ipairs(t.criteria or {}) do
    S:put(r, 0, (first and "Criterion: " or "           ")
          .. common.criterion_text(c, p.roots), F.subtitle, true)
    first = false
    r = r + 1
  end
  if t.reason then
    S:put(r, 0, "Reason: " .. common.short_paths(t.reason, p.roots), F.subtitle, true)
    r = r + 1
  end
  if t.headline then
    S:put(r, 0, "Measured: " .. t.headline, F.subtitle, true)
    r = r + 1
  end
  S.ws:write_url(r, 0, "internal:'Summary'!A1", F.note, "\u{2190} Summary")
  r = r + 2

  local headline = rs[1] and rs[1].headline
  local metrics = metric_names(rs, headline)
  local last, params
  if #rs == 1 then
    S:put(r, 0, "Measured", F.h2, true)
    last = write_single(S, r + 1, rs[1], metrics, p.baseline)
    params = rs[1].params or t.params or {}
  else
    S:put(r, 0, "Cells", F.h2, true)
    last, params = write_cells(S, r + 1, t, rs, metrics, p.baseline, p.roots)
  end
  -- the table's header stays in view (and on every printed page) when the
  -- lines above it are few; else the sheet's title row does
  local hr = r + 1
  if hr <= 12 then
    S.ws:freeze_panes(hr + 1, 0)
    S.ws:setup { repeat_rows = { hr, hr } }
  else
    S.ws:freeze_panes(1, 0)
  end
  r = last + 2
  if #rs > 1 and headline and (#params == 1 or #params == 2) then
    r = write_pivot(S, r, rs, params, headline) + 2
  end
  for _, res in ipairs(rs) do
    local label = res.tables and res.tables[1] and #rs > 1
      and verdict.label(params, res.cell) or ""
    for _, tb in ipairs(res.tables or {}) do
      r = write_emitted(S, r, tb, label) + 2
    end
  end
  local notes = {}
  for _, res in ipairs(rs) do
    local label = res.notes and res.notes[1] and #rs > 1
      and verdict.label(params, res.cell) or ""
    for _, n in ipairs(res.notes or {}) do
      notes[#notes + 1] = (label ~= "" and ("[" .. label .. "] ") or "")
        .. tostring(n)
    end
  end
  if #notes > 0 then
    S:put(r, 0, "Notes", F.h2, true)
    for i, n in ipairs(notes) do S:put(r + i, 0, n, F.note, true) end
  end
  S:fit_columns(S.fixed, 40)
  S.ws:setup { tab_color = (common.STATUS_COLORS[t.status] or {}).bg }
end


function M.write(ctx)
  for _, p in ipairs(ctx.test_sheets) do write_test(ctx, p) end
end

return M
