-- strata.fleet.report: the fleet model as one workbook (the Summary with
-- the suspects and the node x rung matrix here; Attribution, Heatmap and
-- Baseline in report_diag; the other sheets one file each in fleet/sheets/,
-- written with the toolkit of report/sheet.lua), JSON and JUnit, each
-- carrying the node; and the Summary as text for the terminal.
local toolkit = require "strata.report.sheet"
local common = require "strata.report.common"
local diag = require "strata.fleet.report_diag"
local config = require "strata.fleet.config"
local plan = require "strata.fleet.plan"

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
    for _, x in ipairs(fm.pairs.by_rail or {}) do
      p(("%s %s rail: %d pairs, %d FAIL/ERROR, %s median %s, worst %s"):format(x.id, x.rail,
        x.pairs, x.bad, x.metric or "headline", x.median and fmt(x.median) or "-",
        x.worst and fmt(x.worst) or "-"))
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

local sheet, header = toolkit.plain, toolkit.header

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


-- The sheets after the Summary and the diagnosis (report_diag), in their
-- order: one file each in fleet/sheets/, each with write(ctx, fm).
M.SHEETS = { "nodes", "cells", "pairs", "incast", "s3", "outliers",
             "orchestration" }

function M.write_workbook(path, fm)
  local wb <close>, ctx = toolkit.open(path, { formats = toolkit.fleet_formats,
    properties = { title = "strata fleet report", subject = "verdict " .. fm.verdict,
                   comments = "written by strata " .. tostring(fm.run.version or "") } })
  write_summary(ctx, fm)
  diag.write_attribution(ctx, fm, sheet, header)
  diag.write_heatmap(ctx, fm, sheet, header)
  diag.write_baseline(ctx, fm, sheet, header)
  for _, name in ipairs(M.SHEETS) do
    require("strata.fleet.sheets." .. name).write(ctx, fm)
  end
  require("strata.fleet.actbook").write_sheet(ctx, fm)
  require("strata.fleet.sheets.thresholds").write(ctx, fm)
  common.close_book(wb, path)
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
                              metric = e.metric, value = e.value, reason = e.reason,
                              rail = e.rail, gpu = e.gpu }
    end
    table.sort(pairs_, function(a, b) return a.id .. a.from .. a.to < b.id .. b.from .. b.to end)
  end
  local results = {}
  for _, r in ipairs(fm.results) do
    results[#results + 1] = { node = r.node, phase = r.phase, pair = r.pair,
                              pair_devices = r.pair_devices, rail = r.rail, id = r.id,
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
           pairs = pairs_, rails = fm.pairs and fm.pairs.by_rail, incast = fm.incast and fm.incast.receiver or nil, s3 = s3,
           outliers = fm.outliers, orchestration = fm.overhead, results = results,
           attribution = diag.json(fm), baseline = diag.baseline_rows(fm),
           s3_clients = diag.s3_clients(fm), configuration = config.json(fm) })
end

-- JUnit: the run's writer (report/junit.lua) with a suite per node (and
-- per node's pairs, incast, S3), each named by its node and the node as
-- its hostname, classnames "<node>.<layer>.<id>"; an earlier try of a
-- cell is no testcase (its last try stands for it).
function M.junit_text(fm)
  local suites, by_key = {}, {}
  for _, r in ipairs(fm.results) do
    if not r.superseded then
      local key = r.node .. (r.phase == "pair" and ".pairs" or r.phase == "incast" and ".incast"
                             or r.phase == "s3" and ".s3" or "")
      if not by_key[key] then
        by_key[key] = { name = key, host = r.node, cases = {} }
        suites[#suites + 1] = by_key[key]
      end
      local label = require("strata.verdict").label(r.params, r.cell)
      table.insert(by_key[key].cases, {
        name = r.id .. (label ~= "" and ("[" .. label .. "]") or "")
          .. (r.pair and (" " .. plan.pair_label(r)) or ""),
        classname = r.node .. "." .. (r.layer or "?") .. "." .. r.id,
        status = r.status, reason = r.reason, time = r.duration_s,
        checks = common.failed_checks(r), metrics = r.metrics, notes = r.notes })
    end
  end
  return require("strata.report.junit").text("strata fleet", suites, fm.run, fm.verdict)
end

function M.write(fm, paths)
  if paths.xlsx then M.write_workbook(paths.xlsx, fm) end
  -- the run's writers: sorted keys, indented, shortest round-trip floats
  if paths.json then
    common.write_model("fleet json", paths.json, fm, function(m)
      return require("strata.report.json").encode(M.json_doc(m)) .. "\n"
    end)
  end
  if paths.junit then common.write_model("fleet junit", paths.junit, fm, M.junit_text) end
  if paths.prometheus then require("strata.fleet.prometheus").write(paths.prometheus, fm) end
end

return M
