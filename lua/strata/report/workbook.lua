-- strata.report.workbook: the run model -> an .xlsx workbook a lead
-- engineer can send to a stakeholder (layout: docs/report.md).
--
--   require("strata.report.workbook").write("reports/run.xlsx", model)
--
-- Sheets: Summary, one per test with a matrix, tables or notes, Metrics
-- (every measured value), Counters (deltas and sampled series), Thresholds,
-- Inventory, Run.  Raises on any failure (a failed report write is fatal);
-- nothing is left at path when a write fails before the file is created.
local xl = require "strata.report"
local common = require "strata.report.common"
local verdict = require "strata.verdict"
local model = require "strata.model"
local sheets = require "strata.report.xlsheets"

local M = {}

local fmt = common.fmt

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

-- A workbook at path with the formats and the sheet-name registry the
-- sheet helpers (report/xlsheets.lua) take: wb, ctx.  The caller closes it.
function M.open(path, reserved)
  local wb = xl.workbook(path)
  local ctx = { wb = wb, names = {} }
  ctx.F = make_formats(wb)
  ctx.wrapping = ctx.F.wrapping
  for _, n in ipairs(reserved or {}) do ctx.names[n:lower()] = true end
  return wb, ctx
end

-- "2026-11-29T19:00:00Z" -> seconds (for differences only), or nil.
local function iso_seconds(s)
  local y, mo, d, h, mi, sec = tostring(s or ""):match(
    "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+%.?%d*)")
  if not y then return nil end
  return os.time { year = tonumber(y), month = tonumber(mo), day = tonumber(d),
                   hour = tonumber(h), min = tonumber(mi), sec = 0,
                   isdst = false } + tonumber(sec)
end

local function duration_text(a, b)
  local s0, s1 = iso_seconds(a), iso_seconds(b)
  if not s0 or not s1 or s1 < s0 then return nil end
  local s = math.floor(s1 - s0 + 0.5)
  if s < 60 then return ("%d s"):format(s) end
  if s < 3600 then return ("%d min %d s"):format(s // 60, s % 60) end
  return ("%d h %d min"):format(s // 3600, (s % 3600) // 60)
end
M.duration_text = duration_text

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

-- --- Summary ------------------------------------------------------------

-- Criteria of a test, one per line, sources relative to the spec folder.
local function criteria_text(t, model)
  local lines = {}
  for _, c in ipairs(t.criteria or {}) do
    lines[#lines + 1] = common.criterion_text(c, model.spec_roots)
  end
  return #lines > 0 and table.concat(lines, "\n") or "no criterion: recorded"
end
M.criteria_text = criteria_text

-- The Summary's table of tests: one entry per column (header, width, the
-- value of a test, its format).  A new column is one more entry.
-- Formats: text, wrap, status, number (fitted to the value), "0", "0.0",
-- link (to the test's sheet).
local SUMMARY_COLS = {
  { header = "ID", width = 12, format = "text", get = function(t) return t.id end },
  { header = "Layer", width = 10, format = "text",
    get = function(t) return t.layer end },
  { header = "Status", width = 12, format = "status",
    get = function(t) return t.status end },
  { header = "Title", width = 34, format = "wrap",
    get = function(t) return t.title end },
  { header = "Measured", width = 30, format = "wrap",
    get = function(t) return t.headline end },
  { header = "Value", width = 12, format = "number",
    get = function(t) return t.headline_value end },
  { header = "Criterion", width = 50, format = "wrap",
    get = function(t, model) return criteria_text(t, model) end },
  { header = "Reason", width = 46, format = "wrap",
    get = function(t, model) return common.short_paths(t.reason, model.spec_roots) end },
  { header = "vs baseline %", width = 10, format = "0.0",
    when = function(model) return model.baseline ~= nil end,
    get = function(t) return t.vs_baseline end },
  { header = "Cells", width = 7, format = "0",
    get = function(t) return t.cells end },
  { header = "Time (s)", width = 9, format = "0.0",
    get = function(t) return t.duration_s end },
  { header = "Details", format = "link",
    get = function(t, _, detail) return detail[t.id] end },
}
M.SUMMARY_COLS = SUMMARY_COLS

local function write_summary(ctx, model, detail_sheets)
  local F, run = ctx.F, model.run or {}
  local S = sheets.new(ctx, "Summary")
  local ws = S.ws

  S:put(0, 0, "strata validation report", F.title)
  ws:set_row(0, 28)
  local sub = {}
  if run.host then sub[#sub + 1] = tostring(run.host) end
  if run.started then sub[#sub + 1] = tostring(run.started) end
  if run.version then sub[#sub + 1] = "strata " .. tostring(run.version) end
  S:put(1, 0, table.concat(sub, "  \u{00B7}  "), F.subtitle)
  -- site.stamp (the lab's: what its figures are worth)
  if run.stamp then S:put(2, 0, tostring(run.stamp), F.msg_bad) end

  -- The verdict, big, and what it rests on (strata.verdict's message).
  local verdict_ = tostring(model.verdict or "NO VERDICT")
  -- the message wraps across D:G (about 100 bold characters a line)
  local mlen = utf8.len(model.message or "") or #(model.message or "")
  ws:set_row(3, math.max(42, 17 * math.ceil(mlen / 100)))
  S:merge(3, 0, 3, 2, verdict_, F.verdict[verdict_] or F.verdict_other)
  S:merge(3, 3, 3, 6, model.message or "",
          verdict_ == "PASS" and F.msg_ok or F.msg_bad)

  -- Counts per status (left) and the run at a glance (right).
  local counts = verdict.counts(model.tests)
  local r = 5
  for _, s in ipairs(verdict.STATUSES) do
    -- WARN only in a run that has warnings (a run without keeps the
    -- layout it always had)
    if s ~= "WARN" or counts.WARN > 0 then
      S:put(r, 0, s, F.for_status(s))
      S:put(r, 1, counts[s], F.count)
      r = r + 1
    end
  end
  S:put(r, 0, "Total", F.key)
  S:put(r, 1, counts.total, F.count)
  local facts = {
    { "Host", run.host }, { "Started", run.started },
    { "Ended", run.ended or "(not ended)" },
    { "Duration", duration_text(run.started, run.ended) },
    { "strata", run.version }, { "Output", run.output },
  }
  for i, kv in ipairs(facts) do
    S:put(4 + i, 3, kv[1], F.cover_key, true)
    S:put(4 + i, 4, kv[2] ~= nil and tostring(kv[2]) or "", F.cover_val, true)
  end

  -- One row per test.
  local hr = r + 2
  local cols = {}
  for _, col in ipairs(SUMMARY_COLS) do
    if not col.when or col.when(model) then cols[#cols + 1] = col end
  end
  r = sheets.column_table(S, hr, cols, model.tests or {}, model,
                          detail_sheets)
  ws:set_row(hr, 20)
  ws:freeze_panes(hr + 1, 0)
  ws:autofilter(hr, 0, math.max(r, hr), #cols - 1)
  local fixed = {}
  for c, col in ipairs(cols) do fixed[c - 1] = col.width end
  S:fit_columns(fixed, 34)
  ws:setup { landscape = true, fit_width = 1, fit_height = 0,
             repeat_rows = { hr, hr }, hide_gridlines = true,
             tab_color = (VERDICT_COLORS[verdict_] or {}).bg, activate = true,
             footer = "&L&A&RPage &P of &N" }
end

-- --- Run ----------------------------------------------------------------

local function write_run(ctx, model)
  local F, run = ctx.F, model.run or {}
  local S = sheets.new(ctx, "Run")
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
  }
  local r = 2
  for _, kv in ipairs(rows) do
    if kv[2] ~= nil then
      S:put(r, 0, kv[1], F.key)
      S:put(r, 1, kv[2], F.wrap)
      r = r + 1
    end
  end
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

-- --- Thresholds ---------------------------------------------------------



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
        op = model.symbol(c.op, "sheet"), expr = c.expr, source = c.source }
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
    get = function(c) return c.expr ~= nil and fmt(c.expr) or nil end },
  { header = "Resolved", width = 14, format = "value",
    get = function(c, ctx) return c.key and ctx.resolved[c.key] end },
  { header = "Source", format = "text",
    get = function(c, ctx)
      return common.short_source(c.source, ctx.model.spec_roots) end },
}

local function write_thresholds(ctx, model)
  local F = ctx.F
  local S = sheets.new(ctx, "Thresholds")
  S:put(0, 0, "Thresholds", F.h1)
  S:put(1, 0, "Every criterion of this run, what it resolved to, and where "
        .. "it came from (file:line relative to the spec folder, or --set). "
        .. "Resolved is empty for tests that did not run.", F.subtitle, true)
  local hr = 3
  local r = sheets.column_table(S, hr, THRESHOLD_COLS,
                                threshold_rows(model.criteria, "", {}),
                                { model = model, resolved = resolved(model) })
  S.ws:freeze_panes(hr + 1, 0)
  S.ws:autofilter(hr, 0, math.max(r, hr), #THRESHOLD_COLS - 1)
  local fixed = {}
  for c, col in ipairs(THRESHOLD_COLS) do fixed[c - 1] = col.width end
  S:fit_columns(fixed)
end

-- --- Inventory ----------------------------------------------------------

local function is_array(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n > 0 and n == #t
end

local function is_flat(t)
  for _, v in pairs(t) do
    if type(v) == "table" then return false end
  end
  return true
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

-- Preferred first columns for tables of devices, then the rest sorted.
local FIRST = { "name", "addr", "id", "host", "model", "vendor", "device" }

local function inline(v)
  if type(v) ~= "table" then return v end
  local parts = {}
  if is_array(v) then
    for _, x in ipairs(v) do parts[#parts + 1] = fmt(inline(x)) end
    return table.concat(parts, ", ")
  end
  for _, k in ipairs(sorted_keys(v)) do
    parts[#parts + 1] = tostring(k) .. "=" .. fmt(inline(v[k]))
  end
  return table.concat(parts, "; ")
end

local function write_inventory(ctx, model)
  local F = ctx.F
  local S = sheets.new(ctx, "Inventory")
  S:put(0, 0, "Inventory", F.h1)
  local r = 2

  local function kv_block(title, t, keys)
    if #keys == 0 then return end
    S:put(r, 0, title, F.h2)
    r = r + 1
    for _, k in ipairs(keys) do
      local v = t[k]
      if type(v) == "table" then v = inline(v) end
      S:put(r, 0, tostring(k), F.key)
      S:put(r, 1, v, F.wrap)
      r = r + 1
    end
    r = r + 1
  end

  local function table_block(title, list)
    local seen, cols = {}, {}
    for _, row in ipairs(list) do
      for k in pairs(row) do seen[k] = true end
    end
    for _, k in ipairs(FIRST) do
      if seen[k] then cols[#cols + 1] = k seen[k] = nil end
    end
    for _, k in ipairs(sorted_keys(seen)) do cols[#cols + 1] = k end
    S:put(r, 0, title, F.h2)
    r = r + 1
    for c, k in ipairs(cols) do S:put(r, c - 1, tostring(k), F.header) end
    for _, row in ipairs(list) do
      r = r + 1
      for c, k in ipairs(cols) do
        local v = inline(row[k])
        S:put(r, c - 1, v, F.text)
      end
    end
    r = r + 2
  end

  local function render(title, t)
    local scalars, nested = {}, {}
    for _, k in ipairs(sorted_keys(t)) do
      local v = t[k]
      if type(v) ~= "table" or (is_array(v) and is_flat(v)) then
        scalars[#scalars + 1] = k
      elseif next(v) ~= nil then
        nested[#nested + 1] = k
      end
    end
    kv_block(title, t, scalars)
    for _, k in ipairs(nested) do
      local v, name = t[k], (title == "Host" and "" or title .. ".") .. k
      if is_array(v) and #v > 0 then
        local records = true
        for _, x in ipairs(v) do
          if type(x) ~= "table" or is_array(x) then records = false end
        end
        if records then table_block(name, v) else
          local flat = {}
          for i, x in ipairs(v) do flat[i] = { value = inline(x) } end
          table_block(name, flat)
        end
      else
        render(name, v)
      end
    end
  end

  local inv = model.inventory or {}
  if next(inv) == nil then
    S:put(r, 0, "No inventory was recorded.", F.note)
  else
    render("Host", inv)
  end
  S.ws:freeze_panes(1, 0)
  S:fit_columns({}, 60)
end

-- --- entry point --------------------------------------------------------

local function check_model(model)
  if type(model) ~= "table" then
    error("report.workbook: model must be a table, got " .. type(model), 0)
  end
  for _, k in ipairs { "tests", "results" } do
    if model[k] ~= nil and type(model[k]) ~= "table" then
      error(("report.workbook: model.%s must be a list"):format(k), 0)
    end
  end
end

-- Write the workbook for model at path; raises on failure.
function M.write(path, model)
  if type(path) ~= "string" or path == "" then
    error("report.workbook: output path must be a non-empty string", 0)
  end
  check_model(model)
  local wb <close> = xl.workbook(path)
  local ctx = { wb = wb, names = {} }
  ctx.F = make_formats(wb)
  ctx.wrapping = ctx.F.wrapping
  local run = model.run or {}
  wb:properties {
    title = "strata validation report" .. (run.host and (": " .. run.host) or ""),
    subject = "verdict " .. tostring(model.verdict or "none"),
    comments = "written by strata " .. tostring(run.version or ""),
  }
  -- Names first: the Summary links to the test sheets.
  for _, n in ipairs { "Summary", "Metrics", "Counters", "Counter charts",
                      "Counter series", "Thresholds",
                      "Inventory", "Run" } do
    ctx.names[n:lower()] = true
  end
  local plan, detail = sheets.plan_tests(ctx, model)
  write_summary(ctx, model, detail)
  for _, p in ipairs(plan) do sheets.write_test(ctx, p) end
  sheets.write_metrics(ctx, model)
  sheets.write_counters(ctx, model)
  write_thresholds(ctx, model)
  write_inventory(ctx, model)
  write_run(ctx, model)
  wb:close()
end

return M
