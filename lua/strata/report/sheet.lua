-- strata.report.sheet: the sheet toolkit every workbook uses (the run's,
-- the diff's, the fleet's): the workbook with its formats and document
-- properties (open), sheets with unique valid names whose writes count the
-- column widths (new, Sheet:put/put_rows/merge/url/fit_columns), number
-- formats fitted to the values (numfmt), header + rows blocks (grid),
-- declarative column lists (column_table) and charts (chart_block).  A sheet
-- of the run workbook is one file in report/sheets/ (docs/report.md).
local xl = require "strata.report"
local common = require "strata.report.common"
local units = require "strata.units"

local M = {}
local fmt, finite = common.fmt, common.finite
local abs, floor, huge = math.abs, math.floor, math.huge

local MAX_TEXT = 32767        -- Excel's limit on a cell's text
M.CHART_ROWS = 20             -- rows a default-scaled chart covers (x1.3)
M.ROW_LIMIT = 1048576 - 64    -- Excel's rows, less room for a closing note

-- --- formats --------------------------------------------------------------
-- Palette: Office's "good/bad/neutral" fills, a navy for headings.
local C = {
  navy = "#1F3864", blue = "#1F4E78", grey = "#595959", dark = "#404040",
  grid = "#BFBFBF", key_bg = "#F2F2F2", link = "#0563C1",
}
local STATUS_COLORS = common.STATUS_COLORS
local VERDICT_COLORS = {
  PASS = { bg = "#00B050", fg = "#FFFFFF" },
  FAIL = { bg = "#C00000", fg = "#FFFFFF" },
  INCOMPLETE = { bg = "#FFC000", fg = "#000000" },
}

-- Every format the workbook uses, made once (STYLE.md section 5).
local function make_formats(wb)
  local cell = { border = 1, border_color = C.grid, valign = "top" }
  local function with(base, extra)
    local t = {}
    for k, v in pairs(base) do t[k] = v end
    for k, v in pairs(extra or {}) do t[k] = v end
    return t
  end
  local F = {
    title = wb:format { bold = true, font_size = 18, font_color = C.navy },
    h1 = wb:format { bold = true, font_size = 15, font_color = C.navy },
    subtitle = wb:format { italic = true, font_color = C.grey },
    h2 = wb:format { bold = true, font_size = 12, font_color = C.blue },
    header = wb:format { bold = true, font_color = "#FFFFFF",
      bg_color = C.blue, border = 1, border_color = C.grid, wrap = true,
      valign = "vcenter" },
    text = wb:format(cell),
    wrap = wb:format(with(cell, { wrap = true })),
    key = wb:format(with(cell, { bold = true, bg_color = C.key_bg })),
    cover_key = wb:format { bold = true, font_color = C.dark,
                            align = "right" },
    cover_val = wb:format {},
    link = wb:format(with(cell, { underline = true, font_color = C.link })),
    note = wb:format { italic = true, font_color = C.grey },
    count = wb:format(with(cell, { bold = true, font_size = 12,
                                   align = "center", num_format = "0" })),
    msg_bad = wb:format { bold = true, font_size = 12,
      font_color = STATUS_COLORS.FAIL.fg, valign = "vcenter", wrap = true },
    msg_ok = wb:format { bold = true, font_size = 12,
      font_color = STATUS_COLORS.PASS.fg, valign = "vcenter", wrap = true },
    status = {}, verdict = {}, num = {}, bad = {},
  }
  for s, c in pairs(STATUS_COLORS) do
    F.status[s] = wb:format(with(cell, { bold = true, align = "center",
      bg_color = c.bg, font_color = c.fg }))
  end
  F.status_other = wb:format(with(cell, { bold = true, align = "center" }))
  for v, c in pairs(VERDICT_COLORS) do
    F.verdict[v] = wb:format { bold = true, font_size = 22, align = "center",
      valign = "vcenter", bg_color = c.bg, font_color = c.fg, border = 1,
      border_color = C.grid }
  end
  F.verdict_other = wb:format { bold = true, font_size = 22,
    align = "center", valign = "vcenter", bg_color = "#D9D9D9",
    font_color = C.dark }
  -- Number formats: made on first use, then reused.
  F.numfmt = function(nf, bad)
    local cache = bad and F.bad or F.num
    if not cache[nf] then
      cache[nf] = wb:format(with(cell, { num_format = nf,
        bg_color = bad and STATUS_COLORS.FAIL.bg or nil,
        font_color = bad and STATUS_COLORS.FAIL.fg or nil }))
    end
    return cache[nf]
  end
  F.key_num = setmetatable({}, { __index = function(t, nf)
    local f = wb:format(with(cell, { bold = true, bg_color = C.key_bg,
                                     num_format = nf, align = "right" }))
    rawset(t, nf, f)
    return f
  end })
  F.bad_text = wb:format(with(cell, { bg_color = STATUS_COLORS.FAIL.bg,
                                      font_color = STATUS_COLORS.FAIL.fg }))
  F.for_status = function(s) return F.status[s] or F.status_other end
  F.wrapping = { [F.wrap] = true, [F.header] = true }
  return F
end

M.formats = make_formats
M.VERDICT_COLORS = VERDICT_COLORS

-- The fleet workbook's own look: a smaller title, a lighter header blue,
-- fixed column widths (fleet/report.lua and fleet/sheets/).
function M.fleet_formats(wb)
  local F = {
    title = wb:format { bold = true, font_size = 16, font_color = "#1F3864" },
    h2 = wb:format { bold = true, font_size = 12, font_color = "#2F5597" },
    header = wb:format { bold = true, font_color = "#FFFFFF", bg_color = "#2F5597",
                         border = 1, wrap = true, valign = "vcenter" },
    text = wb:format { border = 1, valign = "top" },
    wrap = wb:format { border = 1, valign = "top", wrap = true },
    key = wb:format { bold = true, border = 1 },
    note = wb:format { italic = true, font_color = "#595959" },
    num = wb:format { border = 1, num_format = "0.###" },
    outlier = wb:format { border = 1, bg_color = "#FFEB9C", font_color = "#9C5700",
                          num_format = "0.###" },
    outlier_wrap = wb:format { border = 1, bg_color = "#FFEB9C", font_color = "#9C5700",
                               wrap = true, valign = "top" },
    status = {},
  }
  for s, c in pairs(common.STATUS_COLORS) do
    F.status[s] = wb:format { border = 1, bold = true, align = "center",
                              bg_color = c.bg, font_color = c.fg }
  end
  F.for_status = function(s) return F.status[s] or F.text end
  return F
end

-- A worksheet with fixed column widths (widths[1] is column A), landscape,
-- printed one page wide: the fleet's sheets, written with ws:write.
function M.plain(ctx, name, widths)
  local ws = ctx.wb:worksheet(name)
  ws:setup { landscape = true, fit_width = 1, fit_height = 0 }
  for c, w in ipairs(widths or {}) do ws:set_column(c - 1, c - 1, w) end
  return ws
end

-- A header row of texts at row r from column A.
function M.header(ws, F, r, cols)
  for c, h in ipairs(cols) do ws:write(r, c - 1, h, F.header) end
end

-- A workbook at path with the formats and the sheet-name registry the
-- sheets take: wb, ctx.  o.reserved: names taken first (a link may point
-- at a sheet written later); o.properties: the document properties;
-- o.formats: the format maker (the run's, or fleet_formats).  The caller
-- closes wb (`local wb <close>, ctx = sheet.open(...)`).
function M.open(path, o)
  o = o or {}
  local wb = xl.workbook(path)
  local ctx = { wb = wb, names = {} }
  ctx.F = (o.formats or make_formats)(wb)
  ctx.wrapping = ctx.F.wrapping
  if o.properties then wb:properties(o.properties) end
  for _, n in ipairs(o.reserved or {}) do ctx.names[n:lower()] = true end
  return wb, ctx
end

-- The fixed widths of a declarative column list: { [c - 1] = col.width }.
function M.widths(cols)
  local fixed = {}
  for c, col in ipairs(cols) do fixed[c - 1] = col.width end
  return fixed
end

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

-- A chart of columns ys against column x of a block written at (r0, c0):
-- header row r0, data rows r0+1 .. r1.  Scatter when x is numeric (log
-- axis when it spans decades), else a line chart over categories.
function M.chart_block(S, o)
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

return M
