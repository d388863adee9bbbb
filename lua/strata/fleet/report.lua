-- strata.fleet.report: the fleet model as one workbook (Summary with the
-- suspects and the node x rung matrix, Attribution, Heatmap (report_diag),
-- Nodes, Cells, Pairs, Incast, S3, Outliers, Orchestration, Thresholds), JSON and JUnit, each carrying the node; and the
-- Summary as text for the terminal.
local cjson = require "cjson"
local xl = require "strata.report"
local common = require "strata.report.common"
local diag = require "strata.fleet.report_diag"
local config = require "strata.fleet.config"

local M = {}
local fmt = common.fmt

local function matrix_rows(fm)
  local rows = {}
  for _, n in ipairs(fm.nodes) do
    local row = { node = n.name, status = n.status, reason = n.reason,
                  lowest = n.lowest_failed and (n.lowest_failed.layer .. " ("
                           .. n.lowest_failed.id .. " " .. n.lowest_failed.status .. ")") or "",
                  outliers = n.outliers and #n.outliers or 0, cells = {} }
    for _, c in ipairs(fm.columns) do
      local t = n.tests[c.id]
      row.cells[#row.cells + 1] = t and t.status or "-"   -- not run on this node
    end
    rows[#rows + 1] = row
  end
  return rows
end

local function lowest_text(l)
  if not l then return "none" end
  return ("%s (%s %s%s)"):format(l.layer, l.id, l.status, l.node and (" on " .. l.node) or "")
end

-- The Summary as text (terminal, closing notes).
function M.summary_text(fm)
  local out = {}
  local function p(...) out[#out + 1] = table.concat({ ... }) end
  local f = fm.run.fleet or {}
  p(("fleet %s: %d nodes (%s), Slurm job %s"):format(fm.verdict, #fm.nodes,
    tostring(f.nodelist), tostring(f.job)))
  p("lowest failed rung: ", lowest_text(fm.lowest_failed))
  local hdr = { ("%-8s"):format("node"), ("%-6s"):format("status") }
  for _, c in ipairs(fm.columns) do hdr[#hdr + 1] = ("%-5s"):format(c.id) end
  p(table.concat(hdr, " "), "  lowest failed")
  for _, r in ipairs(matrix_rows(fm)) do
    local line = { ("%-8s"):format(r.node), ("%-6s"):format(r.status) }
    for _, s in ipairs(r.cells) do line[#line + 1] = ("%-5s"):format(s:sub(1, 5)) end
    p(table.concat(line, " "), "  ", r.lowest ~= "" and r.lowest or "-",
      r.outliers > 0 and ("  [%d outlier cells]"):format(r.outliers) or "",
      r.reason and ("  ERROR: " .. r.reason) or "")
  end
  if fm.pairs then
    for _, id in ipairs(fm.pairs.tests) do
      p(id, " pairs:")
      for _, a in ipairs(fm.pairs.names) do
        for _, b in ipairs(fm.pairs.names) do
          local e = fm.pairs.cells[id .. "|" .. a .. "|" .. b]
          if e then
            p(("  %s -> %s  %s%s%s"):format(e.a, e.b, e.status,
              e.value and ("  " .. e.metric .. " = " .. fmt(e.value)) or "",
              e.reason and ("  (" .. e.reason .. ")") or ""))
          end
        end
      end
    end
  end
  out[#out + 1] = diag.text(fm):sub(1, -2)
  out[#out + 1] = config.text(fm):sub(1, -2)
  for _, o in ipairs(fm.outliers or {}) do
    p(("outlier: %s %s [%s] %s = %s vs fleet median %s (x%.2f < %g)"):format(
      o.node, o.id, o.cell, o.metric, fmt(o.value), fmt(o.median), o.ratio, fm.ratio.value or 0))
  end
  return table.concat(out, "\n") .. "\n"
end

-- --- workbook -------------------------------------------------------------

local function formats(wb)
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
  return F
end

local function sheet(ctx, name, widths)
  local ws = ctx.wb:worksheet(name)
  ws:setup { landscape = true, fit_width = 1, fit_height = 0 }
  for c, w in ipairs(widths or {}) do ws:set_column(c - 1, c - 1, w) end
  return ws
end

local function header(ws, F, r, cols)
  for c, h in ipairs(cols) do ws:write(r, c - 1, h, F.header) end
end

local function st(F, s) return F.status[s] or F.text end

local function write_summary(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "Summary", { 20, 11, 26, 9 })
  local f = fm.run.fleet or {}
  ws:write(0, 0, "strata fleet validation", F.title)
  local r = 2
  local function kv(k, v, fmt_)
    ws:write(r, 0, k, F.key)
    ws:write(r, 1, v, fmt_ or F.text)
    r = r + 1
  end
  kv("Verdict", fm.verdict, st(F, fm.verdict == "PASS" and "PASS"
     or fm.verdict == "INCOMPLETE" and "INCOMPLETE" or "FAIL"))
  kv("Why", fm.message or "")
  kv("Lowest failed rung", lowest_text(fm.lowest_failed))
  kv("Nodes", ("%d (%s)"):format(#fm.nodes, tostring(f.nodelist)))
  kv("Slurm job", tostring(f.job))
  kv("Started", tostring(fm.run.started))
  kv("Launched from", tostring(fm.run.host))
  kv("Outlier rule", fm.ratio.value and
     ("a cell's headline below %g x the fleet median of that cell (%s)")
       :format(fm.ratio.value, fm.ratio.source) or fm.ratio.source)
  kv("Node statuses", ("%d PASS, %d FAIL, %d ERROR, %d SKIP"):format(
    fm.node_counts.PASS or 0, fm.node_counts.FAIL or 0, fm.node_counts.ERROR or 0,
    fm.node_counts.SKIP or 0))
  r = diag.write_summary(ws, F, r, fm)
  r = config.write_summary(ws, F, r, fm)
  r = r + 1
  ws:write(r, 0, "Node x rung", F.h2)
  r = r + 1
  local cols = { "Node", "Status", "Lowest failed rung", "Outlier cells" }
  for _, c in ipairs(fm.columns) do cols[#cols + 1] = c.id end
  cols[#cols + 1] = "Why (node ERROR)"
  header(ws, F, r, cols)
  ws:set_row(r, 30)
  ws:freeze_panes(r + 1, 1)
  local first = r + 1
  r = r + 1
  for _, row in ipairs(matrix_rows(fm)) do
    ws:write(r, 0, row.node, F.key)
    ws:write(r, 1, row.status, st(F, row.status))
    ws:write(r, 2, row.lowest, F.text)
    ws:write(r, 3, row.outliers, row.outliers > 0 and F.outlier or F.num)
    for i, s in ipairs(row.cells) do ws:write(r, 3 + i, s, st(F, s)) end
    ws:write(r, 4 + #row.cells, row.reason or "", F.wrap)
    r = r + 1
  end
  for i = 1, #fm.columns do ws:set_column(3 + i, 3 + i, 8) end
  ws:set_column(4 + #fm.columns, 4 + #fm.columns, 70)
  r = r + 1
  ws:write(r, 0, ("Columns: the node's own rungs (%d nodes x %d tests, %d rows from row %d; "
    .. "- = not run on that node, e.g. a cluster-wide row run on the first node only). "
    .. "Pair, incast and multi-client S3 rows: sheets Pairs, Incast, S3."):format(
    #fm.nodes, #fm.columns, #fm.nodes, first + 1), F.note)
end

local function write_nodes(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "Nodes", { 10, 8, 10, 34, 9, 40, 60, 40 })
  header(ws, F, 0, { "Node", "Test", "Layer", "Title", "Status", "Headline",
                     "Reason", "Criterion" })
  ws:freeze_panes(1, 2)
  local r = 1
  for _, n in ipairs(fm.nodes) do
    for _, c in ipairs(fm.columns) do
      local t = n.tests[c.id]
      if t then
        ws:write(r, 0, n.name, F.key)
        ws:write(r, 1, t.id, F.text)
        ws:write(r, 2, t.layer, F.text)
        ws:write(r, 3, t.title, F.wrap)
        ws:write(r, 4, t.status, st(F, t.status))
        ws:write(r, 5, t.headline or "", F.wrap)
        ws:write(r, 6, t.reason or "", F.wrap)
        ws:write(r, 7, t.criterion or "", F.wrap)
        r = r + 1
      end
    end
  end
  ws:autofilter(0, 0, math.max(1, r - 1), 7)
end

local function write_cells(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "Cells", { 10, 8, 12, 8, 26, 9, 18, 12, 60, 6 })
  header(ws, F, 0, { "Node", "Phase", "Pair", "Test", "Cell", "Status",
                     "Headline metric", "Value", "Reason", "Try" })
  ws:freeze_panes(1, 1)
  local r = 1
  for _, x in ipairs(fm.results) do
    ws:write(r, 0, x.node, F.key)
    ws:write(r, 1, x.phase or "", F.text)
    ws:write(r, 2, x.pair and (x.pair[1] .. "->" .. x.pair[2]) or "", F.text)
    ws:write(r, 3, x.id, F.text)
    ws:write(r, 4, require("strata.verdict").label(x.params, x.cell), F.text)
    ws:write(r, 5, x.status, st(F, x.status))
    ws:write(r, 6, x.headline or "", F.text)
    local v = x.headline and x.metrics and x.metrics[x.headline]
    ws:write(r, 7, type(v) == "number" and v or (v ~= nil and tostring(v) or nil), F.num)
    ws:write(r, 8, x.reason or "", F.wrap)
    ws:write(r, 9, x.try and (x.try .. "/" .. tostring(x.tries or "?")) or "", F.text)
    r = r + 1
  end
  ws:autofilter(0, 0, math.max(1, r - 1), 9)
end

local function write_pairs(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "Pairs", { 14 })
  local p = fm.pairs
  ws:write(0, 0, "Pair matrix: row = the node that drives, column = the node whose agent "
    .. "is the far end; the value is the worst cell's headline", F.note)
  local r = 2
  if not p then
    ws:write(r, 0, "No pair rung ran (fewer than 2 nodes, or R2/R3 not selected).", F.note)
    return
  end
  for _, id in ipairs(p.tests) do
    ws:write(r, 0, id, F.h2)
    r = r + 1
    ws:write(r, 0, "from \\ to", F.header)
    for j, b in ipairs(p.names) do ws:write(r, j, b, F.header) end
    r = r + 1
    for _, a in ipairs(p.names) do
      ws:write(r, 0, a, F.key)
      for j, b in ipairs(p.names) do
        local e = p.cells[id .. "|" .. a .. "|" .. b]
        if e then
          local v = e.value ~= nil and fmt(e.value) or e.status
          ws:write(r, j, e.value ~= nil and (v .. " " .. e.status) or e.status, st(F, e.status))
        elseif a == b then
          ws:write(r, j, "-", F.text)
        else
          ws:write(r, j, nil, F.text)
        end
      end
      r = r + 1
    end
    r = r + 1
  end
  ws:write(r, 0, "Pairs", F.h2)
  r = r + 1
  header(ws, F, r, { "Test", "From", "To", "Status", "Metric", "Value", "Reason" })
  r = r + 1
  local keys = {}
  for k in pairs(p.cells) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local e = p.cells[k]
    ws:write(r, 0, e.id, F.text)
    ws:write(r, 1, e.a, F.text)
    ws:write(r, 2, e.b, F.text)
    ws:write(r, 3, e.status, st(F, e.status))
    ws:write(r, 4, e.metric or "", F.text)
    ws:write(r, 5, e.value, F.num)
    ws:write(r, 6, e.reason or "", F.wrap)
    r = r + 1
  end
  ws:set_column(6, 6, 70)
end

local function write_incast(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "Incast", { 10, 8, 26, 9, 18, 12, 60 })
  if not fm.incast then
    ws:write(0, 0, "R7 did not run in this fleet run.", F.note)
    return
  end
  ws:write(0, 0, ("R7 incast into %s; senders: the other nodes' agents, in allocation order")
    :format(fm.incast.receiver), F.note)
  header(ws, F, 2, { "Receiver", "Test", "Cell", "Status", "Headline", "Value", "Reason" })
  local r = 3
  for _, x in ipairs(fm.incast.results) do
    ws:write(r, 0, x.node, F.key)
    ws:write(r, 1, x.id, F.text)
    ws:write(r, 2, require("strata.verdict").label(x.params, x.cell), F.text)
    ws:write(r, 3, x.status, st(F, x.status))
    ws:write(r, 4, x.headline or "", F.text)
    local v = x.headline and x.metrics and x.metrics[x.headline]
    ws:write(r, 5, type(v) == "number" and v or nil, F.num)
    ws:write(r, 6, x.reason or "", F.wrap)
    r = r + 1
  end
end

local function write_s3(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "S3", { 8, 26, 9, 8, 12, 12, 8, 12, 12, 40 })
  if not fm.s3 then
    ws:write(0, 0, "No S3 row ran in this fleet run.", F.note)
    return
  end
  ws:write(0, 0, "S3 from every storage client at once: aggregate = all clients' bytes "
    .. "over the longest client's window (they ran concurrently)", F.note)
  local cols = { "Test", "Cell", "Status", "Op", "Clients", "Aggregate Gbit/s", "Bytes",
                 "Window s", "Samples" }
  for _, pc in ipairs(require("strata.fleet.model").PERCENTILES) do
    cols[#cols + 1] = "merged " .. pc[1] .. " ms"
  end
  cols[#cols + 1] = "Per client (node: status)"
  header(ws, F, 2, cols)
  local r = 3
  for _, row in ipairs(fm.s3) do
    for _, op in ipairs { "get", "put" } do
      local x = row[op]
      if x then
        ws:write(r, 0, row.id, F.text)
        ws:write(r, 1, row.cell, F.text)
        ws:write(r, 2, row.status, st(F, row.status))
        ws:write(r, 3, op:upper(), F.text)
        ws:write(r, 4, x.clients, F.num)
        ws:write(r, 5, x.gbps, F.num)
        ws:write(r, 6, x.bytes, F.num)
        ws:write(r, 7, x.window_s, F.num)
        ws:write(r, 8, x.samples, F.num)
        for i, pc in ipairs(require("strata.fleet.model").PERCENTILES) do
          ws:write(r, 8 + i, x["lat_" .. pc[1] .. "_ms"], F.num)
        end
        local per = {}
        for _, c in ipairs(row.clients) do per[#per + 1] = c.node .. ": " .. c.status end
        ws:write(r, 9 + #require("strata.fleet.model").PERCENTILES, table.concat(per, ", "), F.wrap)
        r = r + 1
      end
    end
  end
  ws:write(r + 1, 0, "Merged percentiles: every client's request latencies pooled, then "
    .. "nearest rank (as engine/core/stats.c does for one client); never an average of "
    .. "per-client percentiles", F.note)
  diag.write_s3_clients(ws, F, r + 3, fm, header)
end

local function write_outliers(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "Outliers", { 10, 8, 26, 18, 12, 12, 8, 10 })
  ws:write(0, 0, fm.ratio.value and ("Nodes whose cell is below %g x the fleet median "
    .. "of the same cell (%s); cells with fewer than 3 nodes are not judged")
      :format(fm.ratio.value, fm.ratio.source) or fm.ratio.source, F.note)
  header(ws, F, 2, { "Node", "Test", "Cell", "Metric", "Value", "Fleet median",
                     "Ratio", "Better is" })
  local r = 3
  for _, o in ipairs(fm.outliers) do
    ws:write(r, 0, o.node, F.key)
    ws:write(r, 1, o.id, F.text)
    ws:write(r, 2, o.cell, F.text)
    ws:write(r, 3, o.metric, F.text)
    ws:write(r, 4, o.value, F.outlier)
    ws:write(r, 5, o.median, F.num)
    ws:write(r, 6, o.ratio, F.num)
    ws:write(r, 7, o.direction == "max" and "lower" or "higher", F.text)
    r = r + 1
  end
  if #fm.outliers == 0 then ws:write(r, 0, "No outlier.", F.note) end
end

local function write_orchestration(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "Orchestration", { 10, 8, 10, 14, 14, 12 })
  local ov = fm.overhead
  ws:write(0, 0, "Steps: one srun per node and phase; launch = srun started to the "
    .. "node's first record; overhead = the step's wall time beyond its slowest node's own work", F.note)
  header(ws, F, 2, { "Phase", "Tasks", "Wall s", "Slowest node s", "Overhead s",
                     "Overhead per task s" })
  local r = 3
  for _, s in ipairs(ov.steps) do
    ws:write(r, 0, s.phase or "", F.text)
    ws:write(r, 1, s.tasks, F.num)
    ws:write(r, 2, s.wall_s, F.num)
    ws:write(r, 3, s.slowest_node_s, F.num)
    ws:write(r, 4, s.overhead_s, F.num)
    ws:write(r, 5, s.tasks > 0 and s.overhead_s / s.tasks or nil, F.num)
    r = r + 1
  end
  r = r + 1
  ws:write(r, 0, "Launch median s", F.key)
  ws:write(r, 1, ov.launch_median_s, F.num)
  ws:write(r + 1, 0, "Launch max s", F.key)
  ws:write(r + 1, 1, ov.launch_max_s, F.num)
  ws:write(r + 2, 0, "Run wall s", F.key)
  ws:write(r + 2, 1, fm.wall_s, F.num)
  r = r + 4
  header(ws, F, r, { "Node", "Phase", "Status", "Launch s", "Node work s", "Results" })
  r = r + 1
  for _, s in ipairs(fm.steps) do
    for _, t in ipairs(s.tasks or {}) do
      ws:write(r, 0, t.node, F.key)
      ws:write(r, 1, s.phase or "", F.text)
      ws:write(r, 2, t.status, st(F, t.status == "OK" and "PASS" or "ERROR"))
      ws:write(r, 3, t.start_s, F.num)
      ws:write(r, 4, t.node_s, F.num)
      ws:write(r, 5, t.results, F.num)
      r = r + 1
    end
  end
end

-- Every criterion of the run as the launcher resolved it (the nodes got
-- the same files and --set), the fleet model's own (FLEET) among them.
local function write_thresholds(ctx, fm)
  local F = ctx.F
  local ws = sheet(ctx, "Thresholds", { 10, 24, 6, 30, 70 })
  ws:write(0, 0, "Every criterion of this run and where it came from (file:line, "
    .. "or --set); FLEET's judge the fleet model (outliers, suspects)", F.note)
  header(ws, F, 2, { "Test", "Metric", "Op", "Limit", "Source" })
  local r = 3
  for _, c in ipairs(fm.criteria or {}) do
    ws:write(r, 0, c.id, F.key)
    ws:write(r, 1, c.metric, F.text)
    ws:write(r, 2, c.op, F.text)
    ws:write(r, 3, c.text or tostring(c.expr), F.text)
    ws:write(r, 4, tostring(c.source), F.text)
    r = r + 1
  end
end

function M.write_workbook(path, fm)
  local wb <close> = xl.workbook(path)
  local ctx = { wb = wb, F = formats(wb) }
  wb:properties { title = "strata fleet report", subject = "verdict " .. fm.verdict,
                  comments = "written by strata " .. tostring(fm.run.version or "") }
  write_summary(ctx, fm)
  diag.write_attribution(ctx, fm, sheet, header)
  diag.write_heatmap(ctx, fm, sheet, header)
  diag.write_baseline(ctx, fm, sheet, header)
  write_nodes(ctx, fm)
  write_cells(ctx, fm)
  write_pairs(ctx, fm)
  write_incast(ctx, fm)
  write_s3(ctx, fm)
  write_outliers(ctx, fm)
  write_orchestration(ctx, fm)
  require("strata.fleet.actbook").write_sheet(ctx, fm)
  write_thresholds(ctx, fm)
  wb:close()
end

-- --- JSON and JUnit -------------------------------------------------------

function M.json_doc(fm)
  local nodes = {}
  for _, n in ipairs(fm.nodes) do
    local tests = {}
    for _, c in ipairs(fm.columns) do
      local t = n.tests[c.id]
      if t then
        tests[#tests + 1] = { id = t.id, layer = t.layer, status = t.status,
                              reason = t.reason, headline = t.headline }
      end
    end
    nodes[#nodes + 1] = { name = n.name, addr = n.addr, roles = n.roles,
                          features = n.features, status = n.status, reason = n.reason,
                          lowest_failed = n.lowest_failed, tests = tests,
                          outliers = n.outliers }
  end
  local pairs_ = {}
  if fm.pairs then
    for _, e in pairs(fm.pairs.cells) do
      pairs_[#pairs_ + 1] = { id = e.id, from = e.a, to = e.b, status = e.status,
                              metric = e.metric, value = e.value, reason = e.reason }
    end
    table.sort(pairs_, function(a, b) return a.id .. a.from .. a.to < b.id .. b.from .. b.to end)
  end
  local results = {}
  for _, r in ipairs(fm.results) do
    results[#results + 1] = { node = r.node, phase = r.phase, pair = r.pair, id = r.id,
                              layer = r.layer, cell = r.cell, status = r.status,
                              reason = r.reason, metrics = r.metrics, checks = r.checks,
                              try = r.try, tries = r.tries, superseded = r.superseded,
                              tries_seen = r.tries_seen, spread = r.spread }
  end
  local s3 = {}
  for _, row in ipairs(fm.s3 or {}) do
    s3[#s3 + 1] = { id = row.id, cell = row.cell, status = row.status,
                    get = row.get, put = row.put }
  end
  return require("strata.fleet.actbook").json(fm, {
           strata = fm.run.version, kind = "fleet", verdict = fm.verdict,
           lowest_failed = fm.lowest_failed, fleet = fm.run.fleet,
           started = fm.run.started, outlier_ratio = fm.ratio, nodes = nodes,
           pairs = pairs_, incast = fm.incast and fm.incast.receiver or nil, s3 = s3,
           outliers = fm.outliers, orchestration = fm.overhead, results = results,
           attribution = diag.json(fm), baseline = diag.baseline_rows(fm),
           s3_clients = diag.s3_clients(fm), configuration = config.json(fm) })
end

local function esc(s, attr) return require("strata.report.junit").escape(s, attr) end

function M.junit_text(fm)
  local out = { '<?xml version="1.0" encoding="UTF-8"?>' }
  local suites = {}
  local by_node = {}
  for _, r in ipairs(fm.results) do
    local key = r.node .. (r.phase == "pair" and ".pairs" or r.phase == "incast" and ".incast"
                           or r.phase == "s3" and ".s3" or "")
    if r.superseded then
      key = nil   -- an earlier try: its cell's last try stands for it
    elseif not by_node[key] then
      by_node[key] = {}
      suites[#suites + 1] = key
    end
    if key then table.insert(by_node[key], r) end
  end
  local total, fails, errs, skips = 0, 0, 0, 0
  local body = {}
  for _, key in ipairs(suites) do
    local cases, f, e, s = {}, 0, 0, 0
    for _, r in ipairs(by_node[key]) do
      local label = require("strata.verdict").label(r.params, r.cell)
      local name = r.id .. (label ~= "" and ("[" .. label .. "]") or "")
        .. (r.pair and (" " .. r.pair[1] .. "->" .. r.pair[2]) or "")
      local c = ('    <testcase classname="%s" name="%s" time="%s">'):format(
        esc(r.node .. "." .. (r.layer or "?") .. "." .. r.id, true), esc(name, true),
        fmt(r.duration_s or 0))
      local why = esc(r.reason or table.concat(common.failed_checks(r), "; "), true)
      if r.status == "FAIL" then
        f = f + 1
        c = c .. ('<failure message="%s"/>'):format(why)
      elseif r.status == "ERROR" then
        e = e + 1
        c = c .. ('<error message="%s"/>'):format(why)
      elseif r.status == "FLAKY" then
        -- Maven Surefire's rerun report: passed, with the failed try
        c = c .. ('<flakyFailure message="%s"/><system-out>FLAKY: %s</system-out>')
          :format(why, why)
      elseif r.status == "SKIP" or r.status == "BLOCKED" then
        s = s + 1
        c = c .. ('<skipped message="%s%s"/>'):format(r.status == "BLOCKED" and "BLOCKED: " or "", why)
      end
      cases[#cases + 1] = c .. "</testcase>"
    end
    body[#body + 1] = ('  <testsuite name="%s" tests="%d" failures="%d" errors="%d" skipped="%d">')
      :format(esc(key, true), #by_node[key], f, e, s)
    for _, c in ipairs(cases) do body[#body + 1] = c end
    body[#body + 1] = "  </testsuite>"
    total, fails, errs, skips = total + #by_node[key], fails + f, errs + e, skips + s
  end
  out[#out + 1] = ('<testsuites name="strata fleet" tests="%d" failures="%d" errors="%d" skipped="%d">')
    :format(total, fails, errs, skips)
  for _, b in ipairs(body) do out[#out + 1] = b end
  out[#out + 1] = "</testsuites>"
  return table.concat(out, "\n") .. "\n"
end

function M.write(fm, paths)
  if paths.xlsx then M.write_workbook(paths.xlsx, fm) end
  if paths.json then
    local ok, text = pcall(cjson.encode, M.json_doc(fm))
    if not ok then error("fleet json: " .. tostring(text), 0) end
    common.write_file("fleet json", paths.json, text .. "\n")
  end
  if paths.junit then common.write_file("fleet junit", paths.junit, M.junit_text(fm)) end
end

return M
