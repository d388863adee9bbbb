-- strata.report.xlsheets: the workbook's data sheets (one per test, Metrics,
-- Counters) and the sheet helper they share with workbook.lua: unique
-- valid names, cell writes that track column widths, number formats.
local xl = require "strata.report"
local common = require "strata.report.common"
local verdict = require "strata.verdict"
local model = require "strata.model"
local units = require "strata.units"

local M = {}
local fmt, finite = common.fmt, common.finite
local abs, floor, huge = math.abs, math.floor, math.huge

local MAX_TEXT = 32767        -- Excel's limit on a cell's text
local CHART_ROWS = 20         -- rows a default-scaled chart covers (x1.3)
local MAX_CHARTED = 8         -- series per counters chart (all in the table)
local MAX_SAMPLES = 5000      -- sampled rows per test on Counters (then thinned)
local ROW_LIMIT = 1048576 - 64  -- Excel's rows, less room for a closing note
M.ROW_LIMIT = ROW_LIMIT

-- --- sheet helper -------------------------------------------------------

local Sheet = {}
Sheet.__index = Sheet

-- A valid name not yet used (Excel compares names without case).
function M.unique(ctx, base)
  local name = xl.sheet_name(base)
  -- a cut title can end in a stray quote or separator: drop it
  local trimmed = name:gsub("[%s\"'&,;:%-]+$", "")
  if trimmed ~= "" then name = trimmed end
  if name:lower() == "history" then name = name .. "_" end
  local n = 1
  while ctx.names[name:lower()] do
    n = n + 1
    local suffix = (" (%d)"):format(n)
    -- cut on a character boundary so that name + suffix fits in 31
    local keep = 31 - #suffix
    local cut = utf8.offset(base, keep + 1) or (#base + 1)
    name = xl.sheet_name(base:sub(1, cut - 1) .. suffix)
  end
  ctx.names[name:lower()] = true
  return name
end

-- Words a short title does not end on.
local DANGLING = { ["and"] = true, ["or"] = true, ["of"] = true, ["vs"] = true,
  ["the"] = true, ["a"] = true, ["on"] = true, ["to"] = true, ["for"] = true,
  ["with"] = true, ["in"] = true, ["x"] = true, ["over"] = true,
  ["into"] = true, ["from"] = true, ["by"] = true, ["every"] = true }

-- "<ID> <short title>" within Excel's 31 characters, never cut mid-word:
-- the title up to a subtitle mark (": ", " (", " - "), then as many whole
-- words as fit, without a dangling "and"/"vs"/... or punctuation at the
-- end.  Characters Excel forbids ([]:*?/\) become spaces or "-".
function M.sheet_title(id, title)
  id = tostring(id)
  title = tostring(title or ""):gsub("[/\\]", "-"):gsub("[%[%]%*%?]", " ")
  local full = id .. " " .. title
  if utf8.len(full) and utf8.len(full) <= 31 and not full:find(":") then
    return full
  end
  local head = title:match("^(.-):%s") or title:match("^(.-)%s%(")
    or title:match("^(.-)%s%-%s") or title
  head = head:gsub(":", " ")
  local out = id
  for word in head:gmatch("%S+") do
    local try = out .. " " .. word
    if (utf8.len(try) or #try) > 31 then break end
    out = try
  end
  -- trailing joiners and punctuation read as a cut
  while true do
    local last = out:match("(%S+)$")
    local stripped = out:gsub("[%s,;&%-]+$", "")
    if stripped ~= out then
      out = stripped
    elseif last and DANGLING[last:lower()] and out ~= id then
      out = out:sub(1, #out - #last):gsub("%s+$", "")
    else
      break
    end
  end
  return out
end

local function clean(v)
  if type(v) ~= "string" then return v end
  v = common.utf8_clean(v)
  if #v > MAX_TEXT then
    local cut = utf8.offset(v, MAX_TEXT - 1) or MAX_TEXT - 1
    v = v:sub(1, cut - 1) .. "\u{2026}"
  end
  return v
end

-- The worksheet named name (reserved with M.unique or a fixed name).  Its
-- writes (ws:put, ws:put_rows: engine/report/report_layout_lua.c) count
-- each column's width and remember the wrapped texts for fit_columns.
function M.new(ctx, name)
  ctx.names[name:lower()] = true
  local S = setmetatable({ ws = ctx.wb:worksheet(name), name = name,
    ctx = ctx, fixed = {}, minw = {} }, Sheet)
  S.ws:layout { wrapping = ctx.wrapping, clean = clean }
  S.ws:setup { landscape = true }
  return S
end

-- Write v (number, string, boolean, nil -> blank; NaN -> blank; a table
-- -> blank) at r, c; nothing when v is nil and there is no format.
-- nowidth: do not count it for the column's width (cover texts).
function Sheet:put(r, c, v, f, nowidth)
  self.ws:put(r, c, v, f, nowidth)
end

-- rows[i][j] at (r + i - 1, c + j - 1) for j = 1 .. #cols, cols[j] saying
-- how column j picks a cell's format: cells[i], by[value], else num (a
-- number) or text (the rest); nowidth as for put.
function Sheet:put_rows(r, c, rows, cols)
  self.ws:put_rows(r, c, rows, cols)
end

function Sheet:merge(r0, c0, r1, c1, text, f)
  self.ws:merge(r0, c0, r1, c1, clean(tostring(text or "")), f)
end

function Sheet:url(r, c, url, f, text)
  self.ws:write_url(r, c, url, f, clean(text))
  self.ws:widen(c, text)
end

-- Column widths from what was written: fixed[c] wins, else between 6 and
-- maxw (default 50) characters.  Then rows with wrapped text get the
-- height their longest cell needs (viewers do not all compute it).
function Sheet:fit_columns(fixed, maxw)
  local final, total = {}, 0
  for c, w in pairs(self.ws:widths()) do
    local width = fixed and fixed[c] or
      math.max(6, self.minw[c] or 0, math.min(w + 2, maxw or 50))
    final[c] = width
    total = total + width
    self.ws:set_column(c, c, width)
  end
  -- printed one page wide; a very wide sheet two pages wide (one would
  -- shrink it past reading)
  self.ws:setup { fit_width = total <= 360 and 1 or 2, fit_height = 0 }
  for r, n in pairs(self.ws:wrapped_lines(final, 8.43)) do
    self.ws:set_row(r, 15 * math.min(n, 20))
  end
end

-- The number format of values whose largest magnitude is maxabs, all
-- whole or not.
local function numfmt_for(maxabs, allint)
  if allint then return "#,##0" end
  if maxabs >= 1000 then return "#,##0.0" end
  if maxabs >= 10 then return "#,##0.0#" end
  if maxabs >= 0.01 or maxabs == 0 then return "0.0##" end
  return "0.00E+00"
end

-- A number format that suits every value in values (finite numbers).
function M.numfmt(values)
  local maxabs, allint = 0, true
  for _, v in ipairs(values) do
    if finite(v) then
      if allint and v ~= floor(v) then allint = false end
      local a = abs(v)
      if a > maxabs then maxabs = a end
    end
  end
  return numfmt_for(maxabs, allint)
end

-- M.numfmt{ v } without the list.
function M.numfmt1(v)
  if type(v) ~= "number" or v ~= v or v == huge or v == -huge then
    return "#,##0"
  end
  return numfmt_for(abs(v), v == floor(v))
end

-- Write a header row and rows (lists of values) at row r, col c0; number
-- columns get one format each, the rest F.text; colfmt[j] (optional) may
-- override column j's: { cells = {[i] = format}, by = {[value] = format},
-- num =, text = } (Sheet:put_rows).  Returns the last row written.
local function grid(S, r, c0, columns, rows, colfmt, narrow_header)
  local F = S.ctx.F
  for j, h in ipairs(columns) do
    S:put(r, c0 + j - 1, fmt(h), F.header, narrow_header and j > 2)
  end
  local spec = {}
  for j = 1, #columns do
    local c = colfmt and colfmt[j] or {}
    local num = c.num
    if not num then
      local any, maxabs, allint = false, 0, true
      for _, row in ipairs(rows) do
        local v = row[j]
        if type(v) == "number" then
          any = true
          if v == v and v ~= huge and v ~= -huge then
            if allint and v ~= floor(v) then allint = false end
            local a = abs(v)
            if a > maxabs then maxabs = a end
          end
        end
      end
      num = any and F.numfmt(numfmt_for(maxabs, allint)) or nil
    end
    spec[j] = { cells = c.cells, by = c.by, num = num, text = c.text or F.text }
  end
  S:put_rows(r + 1, c0, rows, spec)
  return r + #rows
end
M.grid = grid

-- Write the cell at r, c of column col (a declarative column: header,
-- width, get, format) for value v.  Formats: text, wrap, status, number
-- (fitted to the value), value (number or text), a number format ("0",
-- "0.0"), link (to a sheet of this workbook).
function M.put_col(S, r, c, col, v)
  local F = S.ctx.F
  local f = col.format
  if f == "status" then
    S:put(r, c, v, F.for_status(v))
  elseif f == "wrap" then
    S:put(r, c, v, F.wrap)
  elseif f == "link" then
    if v then
      S:url(r, c, ("internal:'%s'!A1"):format(v:gsub("'", "''")), F.link, v)
    else
      S:put(r, c, nil, F.text)
    end
  elseif f == "value" and type(v) ~= "number" then
    S:put(r, c, v ~= nil and fmt(v) or nil, F.text)
  elseif f == "number" or f == "value" or f == "0" or f == "0.0" then
    v = common.finite(v) and v or nil
    S:put(r, c, v, F.numfmt((f == "number" or f == "value") and M.numfmt({ v or 0 }) or f))
  else
    S:put(r, c, v, F.text)
  end
end

-- A header row at hr and one row per item below it, from a declarative
-- column list: column j holds col.get(item, ...) in col.format.  Returns
-- the last row written.
function M.column_table(S, hr, cols, items, ...)
  for j, col in ipairs(cols) do S:put(hr, j - 1, col.header, S.ctx.F.header) end
  local r = hr
  for _, item in ipairs(items) do
    r = r + 1
    for j, col in ipairs(cols) do M.put_col(S, r, j - 1, col, col.get(item, ...)) end
  end
  return r
end

-- --- per-test sheets ----------------------------------------------------

-- Tests that get their own sheet: a matrix, tables or notes.
function M.plan_tests(ctx, model)
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
      local name = M.unique(ctx, M.sheet_title(t.id, t.title))
      plan[#plan + 1] = { test = t, results = rs, name = name,
                          roots = model.spec_roots, baseline = model.baseline }
      names[t.id] = name
    end
  end
  return plan, names
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

-- metric_names{ res } without the lists: one result's metrics.
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

-- A chart of columns ys against column x of a block written at (r0, c0):
-- header row r0, data rows r0+1 .. r1.  Scatter when x is numeric (log
-- axis when it spans decades), else a line chart over categories.
local function chart_block(S, o)
  -- categories (h2d, d2h) as columns; numbers as lines, or as points
  -- alone when x goes back (rows of several GPUs' sweeps one after another)
  local ch
  if not o.numeric_x then
    ch = S.ctx.wb:chart("column")
  elseif o.monotonic == false then
    ch = S.ctx.wb:chart("scatter")
  else
    ch = S.ctx.wb:chart("scatter_straight_with_markers")
  end
  for _, y in ipairs(o.ys) do
    ch:series { categories = { S.ws, o.r0 + 1, o.x, o.r1, o.x },
                values = { S.ws, o.r0 + 1, y, o.r1, y },
                name = o.names_from_header and { S.ws, o.r0, y } or nil,
                marker = o.markers == false and "none" or nil }
  end
  ch:title(o.title)
  local xa = { title = o.x_title, gridlines = false }
  if o.numeric_x and o.xmax and o.xmax >= 10000 then
    xa.num_format = "#,##0"
  end
  if o.numeric_x and o.xmin and o.xmin > 0 and o.xmax / o.xmin >= 100 then
    xa.log_base = 10
    xa.gridlines = true
  end
  ch:axis("x", xa)
  -- bandwidths, rates and sizes from zero (a 55.317 vs 55.323 GB/s bar on
  -- a 55.317..55.323 axis reads as a 2x gap) unless the spec says y_min
  local ya = { title = o.y_title, gridlines = true }
  if o.y_min ~= nil then
    ya.min = o.y_min
  elseif o.zero_y ~= false and units.zero_based(o.y_unit) then
    ya.min = 0
  end
  ch:axis("y", ya)
  ch:legend(#o.ys > 1 and "bottom" or "none")
  local into = o.into or S
  into.ws:insert_chart(o.at_row, o.at_col, ch, { x_scale = o.x_scale or 1.4,
    y_scale = o.y_scale or 1.3, description = o.title })
end
M.chart_block = chart_block

local write_single

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
        cells[i] = type(v) == "number" and F.numfmt(M.numfmt1(v), true)
          or F.bad_text
      end
    end
    colfmt[j] = { cells = cells }
  end
  local last = grid(S, r, 0, cols, rows, colfmt)
  S.ws:autofilter(r, 0, math.max(last, r), #cols - 1)
  for _, row in ipairs(rows) do
    if row[ncore + 3] ~= "" then S.fixed[ncore + 2] = 56 end
  end
  return last, params
end

-- A single cell: one row per metric (Metric, Value, Unit, Check).
function write_single(S, r, res, metrics, base)
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
        local text = c.ok and ((c.warn and "WARN: " .. tostring(c.warn_why)
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
    local nf = type(v) == "number" and M.numfmt1(v) or nil
    if bad[row[1]] then
      values[i] = nf and F.numfmt(nf, true) or F.bad_text
    else
      values[i] = nf and F.numfmt(nf) or F.text
    end
  end
  local last = grid(S, r, 0, cols, rows, { [2] = { cells = values },
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
  local nf = M.numfmt(nums)
  -- x keys bold, values in one format, red where the headline failed
  local anynum = false
  for _, x in ipairs(xs) do
    if type(x) == "number" then anynum = true end
  end
  local colfmt = { { num = anynum and F.key_num[M.numfmt(xs)] or nil,
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
  local last = grid(S, r, 0, header, rows, colfmt)
  if #xs < 2 or #nums < 2 then return last end
  local series = {}
  for j = 1, #ys do series[j] = j end
  chart_block(S, { r0 = r, r1 = last, x = 0, ys = series,
    numeric_x = numeric_x, xmin = numeric_x and xs[1] or nil,
    xmax = numeric_x and xs[#xs] or nil, names_from_header = p2 ~= nil,
    title = ("%s vs %s"):format(hm, p1), x_title = p1, y_title = hm,
    y_unit = unit_of(rs, headline), at_row = r - 1, at_col = #header + 1 })
  return math.max(last, r - 1 + CHART_ROWS)
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
  local last = grid(S, r, 0, cols, rows)
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
  chart_block(S, { r0 = r, r1 = last, x = x - 1, ys = ys, numeric_x = numeric,
    monotonic = monotonic, xmin = xmin, xmax = xmax, names_from_header = true,
    title = ch.title or tb.name, x_title = ch.x_title or fmt(cols[x]),
    y_title = ch.y_title, y_min = type(ch.y_min) == "number" and ch.y_min or nil,
    zero_y = ch.y_min ~= false,
    y_unit = units.in_text(ch.y_title) or units.in_text(cols[ys[1] + 1]),
    at_row = r - 1, at_col = #cols + 1 })
  return math.max(last, r - 1 + CHART_ROWS)
end

function M.write_test(ctx, p)
  local F, t, rs = ctx.F, p.test, p.results
  local S = M.new(ctx, p.name)
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

-- --- Metrics: every measured value, long format -------------------------

function M.write_metrics(ctx, model)
  local F = ctx.F
  local S = M.new(ctx, "Metrics")
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
      if r + 1 >= ROW_LIMIT then
        full = true
        goto full
      end
      r = r + 1
      local i = #rows + 1
      if type(v) == "number" then
        value_fmt[i] = F.numfmt(M.numfmt1(v), bad[m] or false)
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

-- --- Counters: deltas and sampled series --------------------------------

-- The series that move most (max - min), at most n, constant ones left out.
local function most_moving(values, names, n)
  local scored = {}
  for _, name in ipairs(names) do
    local lo, hi = math.huge, -math.huge
    for _, v in ipairs(values[name] or {}) do
      if finite(v) then lo = math.min(lo, v) hi = math.max(hi, v) end
    end
    if hi > lo then scored[#scored + 1] = { name = name, range = hi - lo } end
  end
  table.sort(scored, function(a, b)
    if a.range ~= b.range then return a.range > b.range end
    return a.name < b.name
  end)
  local out = {}
  for i = 1, math.min(n, #scored) do out[i] = scored[i].name end
  return out
end
M.most_moving = most_moving

-- The sampled series of one test on the data sheet D at row r, and its
-- chart (the series that moved most) on the chart sheet C at row cr.
-- Returns the next free rows of both.
local function write_series(D, r, t, rs, C, cr)
  local F = D.ctx.F
  local seen, names = {}, {}
  for _, res in ipairs(rs) do
    for k in pairs((res.series or {}).values or {}) do
      if not seen[k] then seen[k] = true names[#names + 1] = k end
    end
  end
  if #names == 0 then return r, cr end
  table.sort(names)
  -- cells back to back on one time axis; a long run is thinned to every
  -- step-th sample (each cell's last sample kept), run.json has them all
  local total = 0
  for _, res in ipairs(rs) do
    total = total + #((res.series or {}).t or {})
  end
  local step = math.max(1, math.ceil(total / MAX_SAMPLES))
  local rows, offset, all = {}, 0, {}
  for _, k in ipairs(names) do all[k] = {} end
  for _, res in ipairs(rs) do
    local s = res.series
    if s and s.t and #s.t > 0 then
      local label = verdict.label(res.params, res.cell)
      local tlast = 0
      for i, tv in ipairs(s.t) do
        if (i - 1) % step == 0 or i == #s.t then
          local row = { label ~= "" and label or t.id, offset + tv }
          for j, k in ipairs(names) do
            local v = ((s.values or {})[k] or {})[i]
            if finite(v) then
              row[2 + j] = v
              all[k][#all[k] + 1] = v
            end
          end
          rows[#rows + 1] = row
        end
        tlast = tv
      end
      local dt = #s.t > 1 and (s.t[#s.t] - s.t[#s.t - 1]) or 1
      offset = offset + tlast + dt
    end
  end
  if #rows == 0 then return r, cr end
  if r + #rows + 4 > ROW_LIMIT then
    D:put(r, 0, ("%s: sampled counters left out, the sheet is full "
          .. "(run.json has them)."):format(t.id), F.note, true)
    return r + 1, cr
  end
  D:put(r, 0, ("%s \u{00B7} %s: per-second rates"):format(t.id,
        tostring(t.title or "")), F.h2, true)
  r = r + 1
  if step > 1 then
    D:put(r, 0, ("One sample in %d shown (%d in all); run.json has them "
          .. "all."):format(step, total),
          F.note, true)
    r = r + 1
  end
  local charted = most_moving(all, names, MAX_CHARTED)
  local cols = { "Cell", "t (s)" }
  for _, k in ipairs(names) do cols[#cols + 1] = k end
  local hr = r
  local last = grid(D, hr, 0, cols, rows, nil, true)
  for j = 3, #cols do D.minw[j - 1] = 14 end
  C:put(cr, 0, ("%s \u{00B7} %s"):format(t.id, tostring(t.title or "")),
        F.h2, true)
  cr = cr + 1
  if #charted == 0 then
    C:put(cr, 0, "No counter moved during this test.", F.note, true)
    return last + 3, cr + 2
  end
  local idx = {}
  for j, k in ipairs(names) do idx[k] = j + 1 end
  local ys = {}
  for _, k in ipairs(charted) do ys[#ys + 1] = idx[k] end
  chart_block(D, { r0 = hr, r1 = last, x = 1, ys = ys, numeric_x = true,
    names_from_header = true, markers = false, x_scale = 1.4, zero_y = false,
    title = ("%s counters (per second)"):format(t.id),
    x_title = ("time (s), cells back to back; the %d of %d series that "
               .. "moved most"):format(#charted, #names),
    at_row = cr, at_col = 0, into = C })
  return last + 3, cr + CHART_ROWS + 2
end

-- Counter deltas of the whole run: one row per series, one column per
-- test that sampled it (the delta over all its cells).
local function delta_pivot(model)
  local tests, col_of, series, by = {}, {}, {}, {}
  for _, res in ipairs(model.results or {}) do
    for k, v in pairs(res.metrics or {}) do
      local name = k:match("^delta%.(.+)$")
      if name and type(v) == "number" and finite(v) then
        if not col_of[res.id] then
          tests[#tests + 1] = res.id
          col_of[res.id] = #tests
        end
        if not by[name] then
          by[name] = {}
          series[#series + 1] = name
        end
        by[name][res.id] = (by[name][res.id] or 0) + v
      end
    end
  end
  table.sort(series)
  return tests, series, by
end

function M.write_counters(ctx, model)
  local F = ctx.F
  local S = M.new(ctx, "Counters")
  S:put(0, 0, "Counters", F.h1, true)
  S:put(1, 0, "What each counter moved during each test (the delta over "
        .. "all its cells; red: a check on it failed). Charts: Counter "
        .. "charts; the sampled rates: Counter series.", F.subtitle, true)
  local tests, series, by = delta_pivot(model)
  local failed = {}
  for _, res in ipairs(model.results or {}) do
    for m in pairs(failed_metrics(res)) do
      local name = m:match("^delta%.(.+)$")
      if name then failed[res.id .. "\0" .. name] = true end
    end
  end
  local hr = 3
  local last = hr
  if #series == 0 then
    S:put(hr, 0, "No test sampled counters.", F.note, true)
  else
    local cols = { "Counter" }
    for _, id in ipairs(tests) do cols[#cols + 1] = id end
    local rows = {}
    for i, name in ipairs(series) do
      local row = { name }
      for j, id in ipairs(tests) do row[j + 1] = by[name][id] end
      rows[i] = row
      if hr + i >= ROW_LIMIT then break end
    end
    local colfmt = { { num = F.text, text = F.text } }
    for j, id in ipairs(tests) do
      local cells = {}
      for i, row in ipairs(rows) do
        local v = row[j + 1]
        if type(v) == "number" then
          cells[i] = F.numfmt(M.numfmt1(v), failed[id .. "\0" .. series[i]]
                              or false)
        end
      end
      colfmt[j + 1] = { cells = cells }
    end
    last = grid(S, hr, 0, cols, rows, colfmt)
    S.ws:autofilter(hr, 0, last, #cols - 1)
    S.ws:freeze_panes(hr + 1, 1)
    S.ws:setup { repeat_rows = { hr, hr } }
  end
  S:fit_columns({ [0] = 48 }, 18)

  -- charts on a sheet of their own, pointing at the data sheet
  local C = M.new(ctx, "Counter charts")
  C:put(0, 0, "Counter charts", F.h1, true)
  C:put(1, 0, "Per test, the sampled series that moved most (rates per "
        .. "second over each interval).", F.subtitle, true)
  local D = M.new(ctx, "Counter series")
  D:put(0, 0, "Counter series", F.h1, true)
  D:put(1, 0, "The sampled per-second rates behind Counter charts (not "
        .. "printed; run.json has every sample).", F.subtitle, true)
  local by_test = verdict.by_test(model.results)
  local r, cr = 3, 3
  for _, t in ipairs(model.tests or {}) do
    r, cr = write_series(D, r, t, by_test[t.id] or {}, C, cr)
  end
  if cr == 3 then C:put(3, 0, "No test sampled counters.", F.note, true) end
  C.ws:freeze_panes(1, 0)
  D.ws:freeze_panes(1, 0)
  D:fit_columns(D.fixed, 40)
  D.ws:setup { hidden = true }
end

return M
