-- strata.fleet.report_diag: the fleet workbook's diagnosis (docs/fleet.md,
-- "Attribution"): the suspects and the FLAKY cells on the Summary, the
-- Attribution sheet (every suspect's evidence, the flaky nodes, every try
-- of a retried cell with its spread), the Heatmap sheet (a node x node
-- matrix per pair test, coloured by value), the Baseline sheet (the fleet's
-- median and spread per cell), and the same in JSON and text.
local common = require "strata.report.common"

local M = {}
local fmt = common.fmt

local function num(v) return type(v) == "number" and v == v and v ~= math.huge and v or nil end

-- Lines for the Summary and the terminal: the suspects, then the flaky.
function M.lines(fm)
  local a = fm.attribution or { suspects = {}, flaky = {} }
  local out = {}
  if #a.suspects == 0 then
    out[#out + 1] = { "Suspect", "none (no node or link stands out of the pair matrices and R7)" }
  end
  for _, s in ipairs(a.suspects) do out[#out + 1] = { "Suspect " .. s.kind, s.text } end
  for _, s in ipairs(a.rails or {}) do out[#out + 1] = { "Rail finding", s.text } end
  for _, s in ipairs(a.unconfirmed or {}) do out[#out + 1] = { "Not confirmed", s.text } end
  for _, s in ipairs(a.watch or {}) do out[#out + 1] = { "Watch", s.text } end
  local ph = fm.phased
  if ph then
    local refused = {}
    for _, d in ipairs(ph.nodes or {}) do
      if not d.admitted then refused[#refused + 1] = ("refused %s: %s"):format(d.node, d.why) end
    end
    out[#out + 1] = { "Phased pairs", ("%d (all pairs: %d); %d admitted, %d refused%s")
      :format(ph.pairs or 0, ph.all_pairs or 0, ph.admitted or 0, ph.refused or 0,
              #refused > 0 and ("; " .. table.concat(refused, "; ")) or "") }
  end
  out[#out + 1] = { "FLAKY cells", ("%d (failed a try, passed another: --until-pass/--repeat)")
    :format(#(fm.flaky or {})) }
  for _, f in ipairs(a.flaky) do
    local parts = {}
    for _, c in ipairs(f.cells) do
      parts[#parts + 1] = ("%s%s%s: %s"):format(c.id, c.cell ~= "" and ("[" .. c.cell .. "]") or "",
        c.pair and (" " .. c.pair) or "", c.reason)
    end
    out[#out + 1] = { "Flaky node", ("%s: %s"):format(f.node, table.concat(parts, "; ")) }
  end
  return out
end

function M.text(fm)
  local out = {}
  for _, l in ipairs(M.lines(fm)) do out[#out + 1] = ("%s: %s"):format(l[1]:lower(), l[2]) end
  return table.concat(out, "\n") .. "\n"
end

-- On the Summary, from row r (the kv rows' layout); returns the next row.
function M.write_summary(ws, F, r, fm)
  for _, l in ipairs(M.lines(fm)) do
    local bad = l[1]:match("^Suspect ") or (l[1] == "Flaky node")
      or (l[1] == "Phased pairs" and l[2]:find("refused ", 1, true))
    ws:write(r, 0, l[1], F.key)
    ws:merge(r, 1, r, 3, l[2], bad and F.outlier_wrap or F.wrap)
    if #l[2] > 60 then ws:set_row(r, 15 * math.min(8, math.ceil(#l[2] / 60))) end
    r = r + 1
  end
  return r
end

-- Sheet Attribution: the rule, every suspect's evidence, the flaky nodes,
-- every try of the cells that ran more than once.
function M.write_attribution(ctx, fm, sheet, header)
  local F = ctx.F
  local a = fm.attribution or { suspects = {}, flaky = {}, rule = "" }
  local ws = sheet(ctx, "Attribution", { 8, 12, 8, 14, 16, 12, 12, 8, 60 })
  ws:write(0, 0, "Suspects: the node all of whose pairs are bad against the pairs "
    .. "without it, else the single link; " .. tostring(a.rule), F.note)
  header(ws, F, 2, { "Kind", "Suspect", "Test", "Pair", "Metric", "Value",
                     "Reference", "Ratio", "Why" })
  local r = 3
  for _, s in ipairs(a.suspects) do
    for _, e in ipairs(s.evidence) do
      ws:write(r, 0, s.kind, F.text)
      ws:write(r, 1, s.name, F.key)
      ws:write(r, 2, e.test .. (e.cell and e.cell ~= "" and ("[" .. e.cell .. "]") or ""), F.text)
      ws:write(r, 3, e.pair, F.text)
      ws:write(r, 4, e.metric or "", F.text)
      ws:write(r, 5, num(e.value), F.outlier)
      ws:write(r, 6, num(e.reference), F.num)
      ws:write(r, 7, num(e.ratio), F.num)
      ws:write(r, 8, e.why or e.status or "", F.wrap)
      r = r + 1
    end
  end
  if #a.suspects == 0 then
    ws:write(r, 0, "No suspect.", F.note)
    r = r + 1
  end
  r = M.write_unconfirmed(ws, F, r, a, header)
  r = M.write_rails(ws, F, r, a, header)
  r = M.write_phased(ws, F, r, fm, header)
  r = r + 1
  ws:write(r, 0, "Tries of the cells that ran more than once (FLAKY: failed a try, "
    .. "passed another; its node named apart from the suspects)", F.h2)
  r = r + 1
  header(ws, F, r, { "Node", "Pair", "Test", "Cell", "Status", "Tries",
                     "Min", "Median", "Max" })
  r = r + 1
  local any = false
  for _, x in ipairs(fm.results) do
    if x.tries_seen then
      any = true
      local seen = {}
      for _, t in ipairs(x.tries_seen) do
        seen[#seen + 1] = ("%d %s%s"):format(t.try, t.status,
          num(t.value) and (" " .. fmt(t.value)) or "")
      end
      local sp = x.spread or {}
      ws:write(r, 0, x.node, F.key)
      ws:write(r, 1, require("strata.fleet.plan").pair_label(x) or "", F.text)
      ws:write(r, 2, x.id, F.text)
      ws:write(r, 3, require("strata.verdict").label(x.params, x.cell), F.text)
      ws:write(r, 4, x.status, F.status[x.status] or F.text)
      ws:write(r, 5, table.concat(seen, "; "), F.wrap)
      ws:write(r, 6, num(sp.min), F.num)
      ws:write(r, 7, num(sp.median), F.num)
      ws:write(r, 8, num(sp.max), F.num)
      r = r + 1
    end
  end
  if not any then ws:write(r, 0, "No cell ran more than once.", F.note) end
end

-- On the Attribution sheet: the suspects that were not confirmed (their
-- pairs good when measured again), each pair's two measurements.
function M.write_unconfirmed(ws, F, r, a, header)
  if #(a.unconfirmed or {}) == 0 then return r end
  r = r + 1
  ws:write(r, 0, "Not confirmed: bad once, good when measured again (noise, not named a "
    .. "suspect)", F.h2)
  r = r + 1
  header(ws, F, r, { "Kind", "Name", "Test", "Pair", "Metric", "First", "Again",
                     "Ratio again", "Why first" })
  r = r + 1
  for _, s in ipairs(a.unconfirmed) do
    for _, e in ipairs(s.evidence) do
      local c = e.confirm or {}
      ws:write(r, 0, s.kind, F.text)
      ws:write(r, 1, s.name, F.key)
      ws:write(r, 2, e.test, F.text)
      ws:write(r, 3, e.pair, F.text)
      ws:write(r, 4, e.metric or "", F.text)
      ws:write(r, 5, num(e.value), F.num)
      ws:write(r, 6, num(c.value), F.num)
      ws:write(r, 7, num(c.ratio), F.num)
      ws:write(r, 8, e.why or "", F.wrap)
      r = r + 1
    end
  end
  return r
end

-- On the Attribution sheet: the rail findings (every cross-rail pair of
-- a test bad, every same-rail pair good: the fabric's, no suspect), each
-- cross-rail pair with why.
function M.write_rails(ws, F, r, a, header)
  if not a.rails then return r end
  r = r + 1
  ws:write(r, 0, "Rails: every cross-rail pair bad, every same-rail pair good (the "
    .. "fabric's, not a node's or NIC's: no suspect named from them)", F.h2)
  r = r + 1
  header(ws, F, r, { "Kind", "Rail", "Test", "Pair", "Status", "Pairs", "Same rail good",
                     "", "Why" })
  r = r + 1
  for _, s in ipairs(a.rails) do
    for _, e in ipairs(s.evidence) do
      ws:write(r, 0, s.kind, F.text)
      ws:write(r, 1, s.name, F.key)
      ws:write(r, 2, e.test, F.text)
      ws:write(r, 3, e.pair, F.text)
      ws:write(r, 4, e.status, F.status[e.status] or F.text)
      ws:write(r, 5, s.pairs, F.num)
      ws:write(r, 6, s.same, F.num)
      ws:write(r, 8, e.why or "", F.wrap)
      r = r + 1
    end
  end
  return r
end

-- On the Attribution sheet: the phased pair mode (--pairs phased): each
-- node admitted or refused, at which step, through which pair and why;
-- then every pair it measured with the gate's verdict.
function M.write_phased(ws, F, r, fm, header)
  local ph = fm.phased
  if not ph then return r end
  r = r + 1
  ws:write(r, 0, ("Phased pairs: %d measured (all pairs: %d); reference %s; gate: %s")
    :format(ph.pairs or 0, ph.all_pairs or 0, ph.reference and ph.reference.pair or "none",
            tostring(ph.gate)), F.h2)
  r = r + 1
  header(ws, F, r, { "Node", "Admitted", "Step", "Via", "Why" })
  r = r + 1
  for _, d in ipairs(ph.nodes or {}) do
    ws:write(r, 0, d.node, F.key)
    ws:write(r, 1, d.admitted and "admitted" or "refused",
             d.admitted and F.status.PASS or F.status.FAIL)
    ws:write(r, 2, d.step or "", F.text)
    ws:write(r, 3, d.via or "", F.text)
    ws:write(r, 4, d.why or "", F.wrap)
    r = r + 1
  end
  r = r + 1
  header(ws, F, r, { "Step", "Pair", "Gate", "Why" })
  r = r + 1
  for _, s in ipairs(ph.steps or {}) do
    ws:write(r, 0, s.step, F.text)
    ws:write(r, 1, s.pair, F.key)
    ws:write(r, 2, s.verdict, s.why and F.status.FAIL or F.status.PASS)
    ws:write(r, 3, s.why or "", F.wrap)
    r = r + 1
  end
  return r
end

-- Sheet Heatmap: per pair test the matrix of headline values (row drives,
-- column's agent is the far end), coloured from worst (red) to best
-- (green) in the metric's good direction (Excel's 3 colour scale).
function M.write_heatmap(ctx, fm, sheet, header)
  local F = ctx.F
  local ws = sheet(ctx, "Heatmap", { 14 })
  ws:write(0, 0, "Pair matrices as heatmaps: row = the node that drives, column = the "
    .. "node whose agent is the far end; red = worst, green = best of the matrix", F.note)
  local r = 2
  if not fm.pairs then
    ws:write(r, 0, "No pair rung ran.", F.note)
    return
  end
  local names = fm.pairs.names
  for _, id in ipairs(fm.pairs.tests) do
    local metric, unit, dir
    for _, e in pairs(fm.pairs.cells) do
      if e.id == id and e.metric then metric, unit = e.metric, e.unit end
    end
    dir = require("strata.fleet.model").direction(fm.criteria, id, metric)
    ws:write(r, 0, ("%s: %s%s (%s is better)"):format(id, metric or "headline",
      unit and (" " .. unit) or "", dir == "max" and "lower" or "higher"), F.h2)
    r = r + 1
    local cols = { "drives \\ far end" }
    for _, b in ipairs(names) do cols[#cols + 1] = b end
    header(ws, F, r, cols)
    local first = r + 1
    for i, a in ipairs(names) do
      ws:write(first + i - 1, 0, a, F.key)
      for j, b in ipairs(names) do
        local e = fm.pairs.cells[id .. "|" .. a .. "|" .. b]
        if e and num(e.value) then
          ws:write(first + i - 1, j, e.value, F.num)
        elseif e then
          ws:write(first + i - 1, j, e.status, F.status[e.status] or F.text)
        end
      end
    end
    local last = first + #names - 1
    local worst, best = "#F8696B", "#63BE7B"
    ws:color_scale(first, 1, last, #names, {
      min_color = dir == "max" and best or worst, mid_color = "#FFEB84",
      max_color = dir == "max" and worst or best })
    for j = 1, #names do ws:set_column(j, j, 11) end
    r = last + 2
  end
end

-- The baseline rows worth a line: each test's headline metric and the
-- metrics its criteria name (a node's counters would be thousands).
function M.baseline_rows(fm)
  local want = {}
  for _, r in ipairs(fm.results) do
    if r.headline then want[r.id .. "|" .. r.headline] = true end
  end
  for _, c in ipairs(fm.criteria or {}) do want[c.id .. "|" .. c.metric] = true end
  local out = {}
  for _, b in ipairs(fm.baseline or {}) do
    if want[b.id .. "|" .. b.metric] then out[#out + 1] = b end
  end
  table.sort(out, function(x, y)
    return table.concat({ x.id, x.phase or "", x.cell, x.metric }, "|")
         < table.concat({ y.id, y.phase or "", y.cell, y.metric }, "|")
  end)
  return out
end

-- Sheet Baseline: the fleet as its own baseline, per test, phase, cell
-- and metric over the nodes (the last try of each cell): what a criterion
-- names as fleet.median.<metric>.
function M.write_baseline(ctx, fm, sheet, header)
  local F = ctx.F
  local ws = sheet(ctx, "Baseline", { 8, 8, 26, 22, 6, 12, 12, 12, 10 })
  ws:write(0, 0, "The fleet's own baseline: per test, phase, cell and metric over the "
    .. "nodes; a criterion may name it as fleet.median.<metric>, e.g. "
    .. "R2 bw_gbps: { min: \"0.9 * fleet.median.bw_gbps\" }", F.note)
  header(ws, F, 2, { "Test", "Phase", "Cell", "Metric", "Nodes", "Min", "Median",
                     "Max", "Max/Min" })
  local r = 3
  for _, b in ipairs(M.baseline_rows(fm)) do
    ws:write(r, 0, b.id, F.key)
    ws:write(r, 1, b.phase or "", F.text)
    ws:write(r, 2, b.cell, F.text)
    ws:write(r, 3, b.metric, F.text)
    ws:write(r, 4, b.n, F.num)
    ws:write(r, 5, num(b.min), F.num)
    ws:write(r, 6, num(b.median), F.num)
    ws:write(r, 7, num(b.max), F.num)
    ws:write(r, 8, num(b.min ~= 0 and b.max / b.min or nil), F.num)
    r = r + 1
  end
end

-- S3's straggler view: per row, op and client its own throughput and
-- latency percentiles (nearest rank over its own samples) beside the
-- merged figures; a client below FLEET.node_ratio x the clients' median
-- throughput is a straggler (strata.thresholds.judge), the slowest named.
function M.s3_clients(fm)
  local model = require "strata.fleet.model"
  local crit = model.fleet_criteria(fm.criteria, fm.run)
  local out = {}
  for _, row in ipairs(fm.s3 or {}) do
    for _, op in ipairs { "get", "put" } do
      local cl = {}
      for _, r in ipairs(row.clients) do
        local m = r.metrics or {}
        local b, e = m[op .. ".bytes"], m[op .. ".elapsed_s"]
        if type(b) == "number" and type(e) == "number" and e > 0 then
          local x = { node = r.node, gbps = b * 8 / e / 1e9, status = r.status }
          local all = {}
          for _, tb in ipairs(r.tables or {}) do
            if tb.name == op .. ".lat_samples_ms" then
              for _, v in ipairs(tb.rows or {}) do all[#all + 1] = v[1] end
            end
          end
          table.sort(all)
          x.p50_ms, x.p99_ms = model.nearest_rank(all, 50), model.nearest_rank(all, 99)
          cl[#cl + 1] = x
        end
      end
      if #cl > 0 then
        local xs = {}
        for _, x in ipairs(cl) do xs[#xs + 1] = x.gbps end
        local med = model.median(xs)
        local slow = {}
        for _, x in ipairs(cl) do
          x.vs_median = med and med > 0 and x.gbps / med or nil
          local ck = x.vs_median and #cl >= 3 and model.judge_ratio(crit, "node_ratio", x.vs_median)
          if ck then
            x.straggler = ck.why
            slow[#slow + 1] = x.node
          end
        end
        table.sort(cl, function(a, b) return a.gbps < b.gbps end)
        out[#out + 1] = { id = row.id, cell = row.cell, op = op, clients = cl,
                          median_gbps = med, slowest = cl[1].node, stragglers = slow }
      end
    end
  end
  return out
end

-- Below the S3 sheet's merged rows, from row r.
function M.write_s3_clients(ws, F, r, fm, header)
  local rows = M.s3_clients(fm)
  if #rows == 0 then return r end
  ws:write(r, 0, "Per client (slowest first): its own throughput and latency over its own "
    .. "samples; a straggler is below FLEET.node_ratio x the clients' median (3 or more clients)",
    F.note)
  r = r + 1
  header(ws, F, r, { "Test", "Cell", "Op", "Client", "Gbit/s", "x median", "p50 ms",
                     "p99 ms", "Straggler" })
  r = r + 1
  for _, x in ipairs(rows) do
    for _, c in ipairs(x.clients) do
      ws:write(r, 0, x.id, F.text)
      ws:write(r, 1, x.cell, F.text)
      ws:write(r, 2, x.op:upper(), F.text)
      ws:write(r, 3, c.node, F.key)
      ws:write(r, 4, num(c.gbps), c.straggler and F.outlier or F.num)
      ws:write(r, 5, num(c.vs_median), F.num)
      ws:write(r, 6, num(c.p50_ms), F.num)
      ws:write(r, 7, num(c.p99_ms), F.num)
      ws:write(r, 8, c.straggler or (c.node == x.slowest and "slowest" or ""), F.wrap)
      r = r + 1
    end
  end
  return r
end

-- JSON: the suspects with their evidence, the flaky nodes and cells.
function M.json(fm)
  local a = fm.attribution or { suspects = {}, flaky = {} }
  local suspects = {}
  for _, s in ipairs(a.suspects) do
    suspects[#suspects + 1] = { kind = s.kind, name = s.name, text = s.text,
                                evidence = s.evidence }
  end
  local unconfirmed = {}
  for _, s in ipairs(a.unconfirmed or {}) do
    unconfirmed[#unconfirmed + 1] = { kind = s.kind, name = s.name, text = s.text,
                                      evidence = s.evidence }
  end
  local watch = {}
  for _, s in ipairs(a.watch or {}) do
    watch[#watch + 1] = { kind = s.kind, name = s.name, text = s.text, evidence = s.evidence }
  end
  local rails
  for _, s in ipairs(a.rails or {}) do
    rails = rails or {}
    rails[#rails + 1] = { kind = s.kind, name = s.name, test = s.test, pairs = s.pairs,
                          same = s.same, text = s.text, evidence = s.evidence }
  end
  return { rule = a.rule, suspects = suspects, unconfirmed = unconfirmed, watch = watch,
           rails = rails, flaky_nodes = a.flaky, flaky_cells = #(fm.flaky or {}), phased = fm.phased }
end

return M
