-- strata.report.sheets.summary: the first sheet: the verdict, big, and
-- what it rests on, the counts per status, the run at a glance, and one
-- row per test (SUMMARY_COLS: a new column is one more entry) linking to
-- the test's own sheet.
local sheet = require "strata.report.sheet"
local common = require "strata.report.common"
local verdict = require "strata.verdict"

local M = { names = { "Summary" } }
local duration_text = common.duration_text
local VERDICT_COLORS = sheet.VERDICT_COLORS

-- Criteria of a test, one per line, sources relative to the spec folder.
local function criteria_text(t, model)
  local lines = {}
  for _, c in ipairs(t.criteria or {}) do
    lines[#lines + 1] = common.criterion_text(c, model.spec_roots)
  end
  return #lines > 0 and table.concat(lines, "\n") or "no criterion: recorded"
end

-- What the site's scale: cut in a test, from its cells' notes ("scaled by
-- the site (scale.max_object_mb): object size 4096 MiB -> 64 MiB"): the
-- Summary's Title says it beside the RUNBOOK's full-size title, so a
-- scaled row never reads as the full-size one (docs/specs.md, section 8).
-- nil when nothing was cut.
local SCALED = "^scaled by the site %(([^)]*)%): (.*)$"
local SCALED_SHOWN = 3            -- cuts named on the Summary; the rest on
                                  -- the test's own sheet
local function scaled_text(t, model)
  local cuts, seen = {}, {}
  for _, r in ipairs(model.results or {}) do
    if r.id == t.id then
      for _, n in ipairs(r.notes or {}) do
        local _, what = tostring(n):match(SCALED)
        if what and not seen[what] then
          seen[what] = true
          cuts[#cuts + 1] = what
        end
      end
    end
  end
  if #cuts == 0 then return nil end
  local shown = { table.unpack(cuts, 1, SCALED_SHOWN) }
  local more = #cuts - #shown
  return "scaled: " .. table.concat(shown, "; ")
    .. (more > 0 and ("; %d more on its sheet"):format(more) or "")
end

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
    get = function(t, model)
      local cut = scaled_text(t, model)
      return cut and (("%s (%s)"):format(t.title or "", cut)) or t.title
    end },
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

-- Characters of bold 12-point text a line of the merged A:G holds (their
-- fixed widths, 160 characters of the default font, less a margin).
local STAMP_LINE = 110

function M.write(ctx, model)
  local detail_sheets = ctx.detail
  local F, run = ctx.F, model.run or {}
  local S = sheet.new(ctx, "Summary")
  local ws = S.ws

  S:put(0, 0, "strata validation report", F.title)
  ws:set_row(0, 28)
  local sub = {}
  if run.host then sub[#sub + 1] = tostring(run.host) end
  if run.started then sub[#sub + 1] = tostring(run.started) end
  if run.version then sub[#sub + 1] = "strata " .. tostring(run.version) end
  S:put(1, 0, table.concat(sub, "  \u{00B7}  "), F.subtitle)
  -- site.stamp (the lab's: what its figures are worth), merged across A:G
  -- with a row tall enough for it: wrapped in column A alone it was ten
  -- lines in a 15-point row, which LibreOffice draws over the title rows
  -- and the verdict (docs/report.md, "Checked in LibreOffice")
  if run.stamp then
    local text = tostring(run.stamp)
    local len = utf8.len(text) or #text
    ws:set_row(2, math.max(20, 17 * math.ceil(len / STAMP_LINE)))
    S:merge(2, 0, 2, 6, text, F.msg_bad)
  end

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
  r = sheet.column_table(S, hr, cols, model.tests or {}, model,
                          detail_sheets)
  ws:set_row(hr, 20)
  ws:freeze_panes(hr + 1, 0)
  ws:autofilter(hr, 0, math.max(r, hr), #cols - 1)
  S:fit_columns(sheet.widths(cols), 34)
  ws:setup { landscape = true, fit_width = 1, fit_height = 0,
             repeat_rows = { hr, hr }, hide_gridlines = true,
             tab_color = (VERDICT_COLORS[verdict_] or {}).bg, activate = true,
             footer = "&L&A&RPage &P of &N" }
end

return M
