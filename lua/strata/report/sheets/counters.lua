-- strata.report.sheets.counters: what each counter moved during each test
-- (Counters: the deltas), the sampled series that moved most (Counter
-- charts) and the per-second rates behind them (Counter series, hidden).
local sheet = require "strata.report.sheet"
local common = require "strata.report.common"
local verdict = require "strata.verdict"
local model = require "strata.model"

local M = { names = { "Counters", "Counter charts", "Counter series" } }
local finite = common.finite
local failed_metrics = model.failed_metrics

local MAX_CHARTED = 8         -- series per counters chart (all in the table)
local MAX_SAMPLES = 5000      -- sampled rows per test on Counters (then thinned)

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
  if r + #rows + 4 > sheet.ROW_LIMIT then
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
  local last = sheet.grid(D, hr, 0, cols, rows, nil, true)
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
  sheet.chart_block(D, { r0 = hr, r1 = last, x = 1, ys = ys, numeric_x = true,
    names_from_header = true, markers = false, x_scale = 1.4, zero_y = false,
    title = ("%s counters (per second)"):format(t.id),
    x_title = ("time (s), cells back to back; the %d of %d series that "
               .. "moved most"):format(#charted, #names),
    at_row = cr, at_col = 0, into = C })
  return last + 3, cr + sheet.CHART_ROWS + 2
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

function M.write(ctx, model)
  local F = ctx.F
  local S = sheet.new(ctx, "Counters")
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
      if hr + i >= sheet.ROW_LIMIT then break end
    end
    local colfmt = { { num = F.text, text = F.text } }
    for j, id in ipairs(tests) do
      local cells = {}
      for i, row in ipairs(rows) do
        local v = row[j + 1]
        if type(v) == "number" then
          cells[i] = F.numfmt(sheet.numfmt1(v), failed[id .. "\0" .. series[i]]
                              or false)
        end
      end
      colfmt[j + 1] = { cells = cells }
    end
    last = sheet.grid(S, hr, 0, cols, rows, colfmt)
    S.ws:autofilter(hr, 0, last, #cols - 1)
    S.ws:freeze_panes(hr + 1, 1)
    S.ws:setup { repeat_rows = { hr, hr } }
  end
  S:fit_columns({ [0] = 48 }, 18)

  -- charts on a sheet of their own, pointing at the data sheet
  local C = sheet.new(ctx, "Counter charts")
  C:put(0, 0, "Counter charts", F.h1, true)
  C:put(1, 0, "Per test, the sampled series that moved most (rates per "
        .. "second over each interval).", F.subtitle, true)
  local D = sheet.new(ctx, "Counter series")
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
