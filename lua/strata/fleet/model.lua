-- strata.fleet.model: a fleet journal (records tagged with their node and
-- phase) as the fleet model the fleet writers take.  Each node's own
-- rungs are judged by strata.verdict (cells, roll-ups, headline) on that
-- node's records alone, and the fabric rows by the same module; on top: the node x rung matrix, the lowest failed rung
-- per node and for the fleet, outlier nodes (a cell's headline below
-- node_ratio x the fleet median of the same cell), the pair matrix, the
-- incast and the multi-client S3 rows, and the orchestration timings.
local spec = require "strata.spec"
local verdict = require "strata.verdict"

local M = {}

-- The fleet model's own criteria, declared as a test that never runs:
-- thresholds.lua resolves them with every other test's (the thresholds
-- file, --profile, --set FLEET.node_ratio.min=V), the Thresholds sheet
-- lists them, thresholds.judge judges them.  node_ratio: a node's cell
-- headline over the fleet median of that cell (flipped for a max metric);
-- pair_ratio: a pair's headline over the median of the pairs without the
-- node under question (strata.fleet.attrib); their limits live in
-- specs/thresholds.yaml.
M.TEST = { id = "FLEET", layer = "fleet", title = "Fleet model (outliers)",
           criteria = {}, units = { node_ratio = "x", pair_ratio = "x", admit_ratio = "x" },
           headline = "node_ratio",
           needs = {}, params = {},
           where = debug.getinfo(1, "S").source:gsub("^@", "") .. ":"
                   .. debug.getinfo(1, "l").currentline }

local function median(xs)
  local v = {}
  for _, x in ipairs(xs) do v[#v + 1] = x end
  table.sort(v)
  local n = #v
  if n == 0 then return nil end
  if n % 2 == 1 then return v[(n + 1) / 2] end
  return (v[n / 2] + v[n / 2 + 1]) / 2
end
M.median = median

-- The percentiles of merged samples, by nearest rank on the sorted
-- samples as engine/core/stats.c computes them for one client.
M.PERCENTILES = { { "p50", 50 }, { "p95", 95 }, { "p99", 99 }, { "p999", 99.9 },
                  { "max", 100 } }
function M.nearest_rank(sorted, p)
  local n = #sorted
  if n == 0 then return nil end
  if p <= 0 then return sorted[1] end
  if p >= 100 then return sorted[n] end
  local rank = math.ceil(p / 100 * n)
  if rank < 1 then rank = 1 end
  return sorted[rank]
end

local function cell_key(r)
  local parts = {}
  for _, p in ipairs(r.params or {}) do
    if r.cell and r.cell[p] ~= nil then parts[#parts + 1] = p .. "=" .. tostring(r.cell[p]) end
  end
  return table.concat(parts, ",")
end
M.cell_key = cell_key

-- The direction of a headline metric: "min" (more is better) unless its
-- criterion is a max (latency, errors).
local function direction(criteria, id, metric)
  return require("strata.model").better(criteria, metric, nil, id) == false
    and "max" or "min"
end

-- The FLEET criteria of a fleet journal's thresholds record, with their
-- limits parsed again (the journal keeps the expression).  A journal
-- written before FLEET was a criterion recorded the tolerance in
-- run.fleet.node_ratio: read as the same criterion.
function M.fleet_criteria(criteria, run)
  local thresholds = require "strata.thresholds"
  local out = {}
  for _, c in ipairs(criteria or {}) do
    if c.id == M.TEST.id then
      local x = {}
      for k, v in pairs(c) do x[k] = v end
      x.limit = thresholds.parse_limit(c.expr, {})
      x.ref = x.ref or x.limit.ref
      x.text = x.text or thresholds.text(x)
      if c.warn then   -- its WARN band (e.g. the lab profile's pair_ratio)
        local w = { id = c.id, metric = c.metric, op = c.warn.op, expr = c.warn.expr,
                    source = c.warn.source, band = "warn",
                    limit = thresholds.parse_limit(c.warn.expr, {}) }
        w.text = c.warn.text or thresholds.text(w)
        x.warn = w
      end
      out[#out + 1] = x
    end
  end
  local old = ((run or {}).fleet or {}).node_ratio
  if #out == 0 and old and old.value then
    local x = { id = M.TEST.id, metric = "node_ratio", op = "min", expr = old.value,
                source = old.source, limit = { kind = "value", value = old.value } }
    x.text = thresholds.text(x)
    out[1] = x
  end
  return out
end

-- {value=, source=, text=} of the node_ratio floor, for the outputs.
function M.ratio_of(crit)
  for _, c in ipairs(crit) do
    if c.metric == "node_ratio" and c.op == "min" then
      return { value = c.limit.value, source = c.source, text = c.text }
    end
  end
  return { source = "no FLEET.node_ratio criterion in the thresholds: outliers not judged" }
end

-- The first FLEET check on metric (node_ratio, pair_ratio) that a ratio
-- fails (thresholds.judge), or nil; and, when none fails, the first past
-- its WARN band (ck.warn, ck.warn_why).
function M.judge_ratio(crit, metric, rel)
  local mine = {}
  for _, c in ipairs(crit) do if c.metric == metric then mine[#mine + 1] = c end end
  local checks = require("strata.thresholds").judge(mine, { metrics = { [metric] = rel } })
  for _, ck in ipairs(checks) do
    if not ck.ok then return ck end
  end
  for _, ck in ipairs(checks) do
    if ck.warn then return nil, ck end
  end
end

M.direction = direction

-- What verdict.test needs to know of a test, from one of its records
-- (a record carries the test's own fields: strata.model's one shape).
local function info_of(r) return require("strata.model").test_info(r) end

-- Pair records as the pair matrix's cells: key "id|a|b" -> { id, a, b,
-- cells, test, status, reason, value, metric, unit } (a test's cells
-- rolled up, its headline the worst cell), and the sorted test IDs.  On
-- rails (a record's pair_devices) a and b are the ends "node:device",
-- na and nb the nodes, dev the devices, rail "same" or "cross"; gpu the
-- PCI address of the GPU memory R4/R5 used on the near end.
local function pair_cells(recs, fm)
  local cells, tests, by = {}, {}, {}
  local endpoint = require("strata.fleet.plan").endpoint
  for _, r in ipairs(recs) do
    local pr, dv = r.pair or {}, r.pair_devices or {}
    local na, nb = pr[1] or r.node, pr[2] or "?"
    local a, b = endpoint(na, dv[1]), endpoint(nb, dv[2])
    local key = r.id .. "|" .. a .. "|" .. b
    if not by[key] then
      by[key] = { id = r.id, a = a, b = b, cells = {} }
      if r.pair_devices then
        local e = by[key]
        e.na, e.nb, e.dev, e.rail = na, nb, { dv[1], dv[2] }, r.rail
      end
      if not tests[r.id] then
        tests[r.id] = true
        tests[#tests + 1] = r.id
      end
    end
    table.insert(by[key].cells, r)
    -- R4/R5: the GPU of the rail the pair ran on (lib/verbsite.lua gpu)
    by[key].gpu = by[key].gpu or (r.metrics or {}).gpu_bus_id
  end
  local crit_by = verdict.by_test(fm.criteria)
  for key, e in pairs(by) do
    local t = verdict.test(info_of(e.cells[1]), e.cells, crit_by[e.id] or {}, fm.ended ~= nil)
    e.test = t
    e.status, e.reason = t.status, t.reason
    e.value, e.metric = t.headline_value, t.headline_metric
    e.unit = e.cells[1].units and e.metric and e.cells[1].units[e.metric]
    cells[key] = e
  end
  table.sort(tests)
  return cells, tests
end

-- The records sorted out: the run, criteria, end and step records into
-- fm; each node's own results, its pair, incast and S3 rows apart.
-- Criteria that name the fleet's baseline (fleet.median.<metric>)
-- judged with it, every cell judged, then its tries (--repeat,
-- --until-pass) made one: the last stands for the cell, FLAKY when the
-- tries disagreed.
local function read_records(fm, records, header, per_node, pair_recs, incast_recs, s3_recs,
                            confirm_recs)
  local pair_ids = {}
  local base = require "strata.fleet.baseline"
  for _, r in ipairs(records) do
    if r.type == "thresholds" then base.rejudge(records, r.criteria) end
  end
  for _, r in ipairs(records) do
    if r.type == "result" and r.node then r.status, r.reason = verdict.cell(r) end
  end
  fm.flaky = require("strata.fleet.tries").collapse(records)
  for _, r in ipairs(records) do
    if r.type == "run" then
      fm.run = r
      header[#header + 1] = r
      for _, id in ipairs((r.fleet or {}).pair_tests
                          or require("strata.fleet.plan").PAIR_TESTS) do
        pair_ids[id] = true
      end
      for _, n in ipairs((r.fleet or {}).nodes or {}) do
        local node = { name = n.name, addr = n.addr, features = n.features or {},
                       roles = n.roles or {}, errors = {} }
        fm.nodes[#fm.nodes + 1] = node
        fm.by_node[n.name] = node
        per_node[n.name] = {}
      end
    elseif r.type == "thresholds" then
      fm.criteria = r.criteria or {}
      header[#header + 1] = r
    elseif r.type == "end" then
      fm.ended = r
    elseif r.type == "step" then
      fm.steps[#fm.steps + 1] = r
    elseif r.type == "phased" then
      fm.phased = r
    elseif r.type == "confirm" then
      fm.confirm_ran = r
    elseif r.node and fm.by_node[r.node] then
      if r.type == "plan" and r.phase == "node" then
        fm.by_node[r.node].plan = r
      elseif r.type == "result" then
        fm.results[#fm.results + 1] = r
        if r.superseded then
          -- an earlier try: on the Cells sheet, not in any roll-up
        elseif r.phase == "pair" then
          if pair_ids[r.id] then pair_recs[#pair_recs + 1] = r end
        elseif r.phase == "confirm" then
          -- a suspect's pair measured again (strata.fleet.attrib)
          if pair_ids[r.id] then confirm_recs[#confirm_recs + 1] = r end
        elseif r.phase == "incast" then
          incast_recs[#incast_recs + 1] = r
        else
          if r.phase == "s3" then s3_recs[#s3_recs + 1] = r end
          table.insert(per_node[r.node], r)
        end
      elseif r.type == "inventory" then
        fm.by_node[r.node].inventory = r.data
      elseif r.type == "node_error" then
        table.insert(fm.by_node[r.node].errors, r)
        fm.errors[#fm.errors + 1] = r
      end
    end
  end
end

-- a node's step that died, hung or never started: its tests without a
-- result are that node's ERROR, with the reason
local function error_results(fm, per_node)
  for _, e in ipairs(fm.errors) do
    if e.phase ~= "pair" and e.phase ~= "confirm" and e.phase ~= "incast"
       and e.phase ~= "agent" then
      local have = {}
      for _, r in ipairs(per_node[e.node]) do
        if r.phase == e.phase then have[r.id] = (have[r.id] or 0) + 1 end
      end
      for _, t in ipairs(e.meta or {}) do
        -- no result, or fewer cells than planned (it died in this test)
        if not have[t.id] or (t.cells and have[t.id] < t.cells) then
          local r = { type = "result", id = t.id, layer = t.layer, title = t.title,
                      cell = {}, cells = t.cells or 1, cell_index = (have[t.id] or 0) + 1,
                      outcome = { kind = "error", why = e.reason }, checks = {},
                      node = e.node, phase = e.phase }
          r.status, r.reason = verdict.cell(r)
          table.insert(per_node[e.node], r)
          fm.results[#fm.results + 1] = r
        end
      end
    end
  end
end

-- each node's own model: statuses, lowest failed rung
local function node_models(fm, header, per_node)
  local seen_col = {}
  for _, node in ipairs(fm.nodes) do
    local recs = {}
    for _, h in ipairs(header) do recs[#recs + 1] = h end
    if node.plan then recs[#recs + 1] = node.plan end
    for _, r in ipairs(per_node[node.name]) do recs[#recs + 1] = r end
    if fm.ended then recs[#recs + 1] = fm.ended end
    node.model = verdict.build(recs)
    node.tests = {}
    for _, t in ipairs(node.model.tests) do
      node.tests[t.id] = t
      if not seen_col[t.id] then
        seen_col[t.id] = true
        fm.columns[#fm.columns + 1] = { id = t.id, layer = t.layer, title = t.title }
      end
    end
    node.lowest_failed = node.model.lowest_failed
    node.cells = per_node[node.name]
  end
  table.sort(fm.columns, function(a, b)
    local ra, rb = spec.LAYER_RANK[a.layer] or 99, spec.LAYER_RANK[b.layer] or 99
    if ra ~= rb then return ra < rb end
    return a.id < b.id
  end)
end

-- a node's verdict: ERROR when its step failed (it may still have
-- results), else its own headline (PASS, INCOMPLETE, FAIL)
local function node_statuses(fm)
  local counts = {}
  for _, node in ipairs(fm.nodes) do
    -- its own step's error first; an agent that died or never started
    -- (the far end of others' pairs) is this node's ERROR too
    local own_err, agent_err
    for _, e in ipairs(node.errors) do
      if e.phase == "agent" then agent_err = agent_err or e.reason
      else own_err = own_err or e.reason end
    end
    own_err = own_err or agent_err
    if own_err then
      node.status, node.reason = "ERROR", own_err
    else
      node.status = node.model.verdict == "NO TESTS" and "SKIP" or node.model.verdict
      node.message = node.model.message
    end
    counts[node.status] = (counts[node.status] or 0) + 1
  end
  fm.node_counts = counts
  return counts
end

-- outliers: per (test, cell) numeric headline across nodes, judged by
-- the FLEET criteria on node_ratio (thresholds file, --profile, --set)
local function outliers(fm)
  local fleet_crit = M.fleet_criteria(fm.criteria, fm.run)
  fm.ratio = M.ratio_of(fleet_crit)
  local cellvals = {}     -- id|cell -> { {node, value} }
  local order = {}
  for _, node in ipairs(fm.nodes) do
    for _, r in ipairs(node.cells) do
      local v = r.headline and r.metrics and r.metrics[r.headline]
      if type(v) == "number" and v == v and r.status ~= "ERROR" then
        local k = r.id .. "|" .. cell_key(r)
        if not cellvals[k] then
          cellvals[k] = { id = r.id, cell = cell_key(r), metric = r.headline,
                          unit = r.unit, vals = {} }
          order[#order + 1] = k
        end
        table.insert(cellvals[k].vals, { node = node.name, value = v })
      end
    end
  end
  fm.outliers = {}
  fm.cell_stats = {}
  for _, k in ipairs(order) do
    local c = cellvals[k]
    local xs = {}
    for _, x in ipairs(c.vals) do xs[#xs + 1] = x.value end
    local med = median(xs)
    local dir = direction(fm.criteria, c.id, c.metric)
    c.median, c.direction = med, dir
    fm.cell_stats[#fm.cell_stats + 1] = c
    if #xs >= 3 and med and med ~= 0 and #fleet_crit > 0 then
      for _, x in ipairs(c.vals) do
        local rel = dir == "max" and (x.value == 0 and math.huge or med / x.value)
                    or x.value / med
        local bad = M.judge_ratio(fleet_crit, "node_ratio", rel)
        if bad then
          local o = { node = x.node, id = c.id, cell = c.cell, metric = c.metric,
                      value = x.value, median = med, ratio = rel, unit = c.unit,
                      direction = dir, why = bad.why, criterion = bad.text,
                      source = bad.source }
          fm.outliers[#fm.outliers + 1] = o
          local n = fm.by_node[x.node]
          n.outliers = n.outliers or {}
          table.insert(n.outliers, o)
        end
      end
    end
  end
end

-- On rails the matrix's rows and columns are the ends "node:device"
-- (node order, then device name), p.nodes the nodes, p.devices the
-- devices seen, p.by_rail the same- and cross-rail summary.
local function rail_names(p, criteria)
  local devs, seen = {}, {}
  for _, e in pairs(p.cells) do
    for _, d in ipairs(e.dev or {}) do
      if not seen[d] then
        seen[d] = true
        devs[#devs + 1] = d
      end
    end
  end
  if #devs == 0 then return end
  table.sort(devs)
  local names = {}
  for _, n in ipairs(p.names) do
    for _, d in ipairs(devs) do names[#names + 1] = n .. ":" .. d end
  end
  p.nodes, p.names, p.devices = p.names, names, devs
  p.by_rail = M.rail_summary(p.cells, criteria)
end

-- Same rail and cross rail apart, per pair test: { {id, rail, pairs, bad
-- (FAIL/ERROR), median, worst, metric, unit} }, sorted by test then rail.
function M.rail_summary(cells, criteria)
  local by, order = {}, {}
  for _, e in pairs(cells) do
    if e.rail then
      local k = e.id .. "|" .. e.rail
      if not by[k] then
        by[k] = { id = e.id, rail = e.rail, pairs = 0, bad = 0, vals = {},
                  metric = e.metric, unit = e.unit }
        order[#order + 1] = k
      end
      local x = by[k]
      x.pairs = x.pairs + 1
      if e.status == "FAIL" or e.status == "ERROR" then x.bad = x.bad + 1 end
      if type(e.value) == "number" and e.status ~= "ERROR" then x.vals[#x.vals + 1] = e.value end
    end
  end
  table.sort(order)
  local out = {}
  for _, k in ipairs(order) do
    local x = by[k]
    x.median = median(x.vals)
    table.sort(x.vals)
    local dir = require("strata.model").better(criteria, x.metric, x.unit, x.id) == false
      and "max" or "min"
    x.worst = dir == "max" and x.vals[#x.vals] or x.vals[1]
    x.vals = nil
    out[#out + 1] = x
  end
  return out
end

-- the pair matrix: a (drives) x b (agent) per pair test, aggregated
-- over its cells, with its headline (the worst cell)
local function pair_matrix(fm, pair_recs, confirm_recs)
  if #pair_recs > 0 or #fm.steps > 0 then
    local p = { names = {} }
    for _, n in ipairs(fm.nodes) do p.names[#p.names + 1] = n.name end
    p.cells, p.tests = pair_cells(pair_recs, fm)
    p.confirm = pair_cells(confirm_recs, fm)
    rail_names(p, fm.criteria)
    fm.pairs = #p.tests > 0 and p or nil
  end
end

-- incast (R7) on its receiver: the results as they are, with senders
local function incast(fm, incast_recs)
  if #incast_recs > 0 then
    local crit_by, by = verdict.by_test(fm.criteria), verdict.by_test(incast_recs)
    local tests, seen = {}, {}
    for _, r in ipairs(incast_recs) do
      if not seen[r.id] then
        seen[r.id] = true
        tests[#tests + 1] = verdict.test(info_of(r), by[r.id], crit_by[r.id] or {}, fm.ended ~= nil)
      end
    end
    fm.incast = { receiver = incast_recs[1].node, results = incast_recs, tests = tests }
  end
end

-- S3 from several clients at once: per (test, cell) the aggregate
-- throughput (sum of bytes over the longest window: the clients ran at
-- the same time) and the latency percentiles of the merged samples
-- when the clients sent them (metrics *.lat_samples_ms are not numbers:
-- see docs/fleet.md), never an average of per-client percentiles
local function s3_rows(fm, s3_recs)
  if #s3_recs > 0 then
    local rows, idx = {}, {}
    for _, r in ipairs(s3_recs) do
      local k = r.id .. "|" .. cell_key(r)
      if not idx[k] then
        idx[k] = { id = r.id, cell = cell_key(r), clients = {}, statuses = {} }
        rows[#rows + 1] = idx[k]
      end
      local row = idx[k]
      table.insert(row.clients, r)
      table.insert(row.statuses, r.status)
    end
    local crit_by = verdict.by_test(fm.criteria)
    for _, row in ipairs(rows) do
      row.status = verdict.test(info_of(row.clients[1]), row.clients,
                                crit_by[row.id] or {}, fm.ended ~= nil).status
      for _, op in ipairs { "get", "put" } do
        local bytes, el, n = 0, 0, 0
        for _, r in ipairs(row.clients) do
          local m = r.metrics or {}
          local b, e = m[op .. ".bytes"], m[op .. ".elapsed_s"]
          if type(b) == "number" and type(e) == "number" and e > 0 then
            bytes, n = bytes + b, n + 1
            if e > el then el = e end
          end
        end
        if n > 0 then
          row[op] = { clients = n, bytes = bytes, window_s = el,
                      gbps = bytes * 8 / el / 1e9 }
          local all, from = {}, 0
          for _, r in ipairs(row.clients) do
            for _, tb in ipairs(r.tables or {}) do
              if tb.name == op .. ".lat_samples_ms" then
                from = from + 1
                for _, x in ipairs(tb.rows or {}) do all[#all + 1] = x[1] end
              end
            end
          end
          if #all > 0 then
            table.sort(all)
            row[op].samples, row[op].sample_clients = #all, from
            for _, pc in ipairs(M.PERCENTILES) do
              row[op]["lat_" .. pc[1] .. "_ms"] = M.nearest_rank(all, pc[2])
            end
          end
        end
      end
    end
    fm.s3 = rows
  end
end

-- the fleet: lowest failed rung over the nodes and the fabric rows
local function lowest_failed(fm, pair_recs, incast_recs)
  local function lower(cur, cand)
    if not cand then return cur end
    if not cur then return cand end
    return (spec.LAYER_RANK[cand.layer] or 99) < (spec.LAYER_RANK[cur.layer] or 99) and cand or cur
  end
  for _, node in ipairs(fm.nodes) do
    if node.lowest_failed then
      fm.lowest_failed = lower(fm.lowest_failed, { layer = node.lowest_failed.layer,
        id = node.lowest_failed.id, status = node.lowest_failed.status, node = node.name })
    end
  end
  for _, r in ipairs(pair_recs) do
    if r.status == "FAIL" or r.status == "ERROR" then
      fm.lowest_failed = lower(fm.lowest_failed, { layer = r.layer, id = r.id,
        status = r.status, node = require("strata.fleet.plan").pair_label(r) or r.node })
    end
  end
  for _, r in ipairs(incast_recs) do
    if r.status == "FAIL" or r.status == "ERROR" then
      fm.lowest_failed = lower(fm.lowest_failed, { layer = r.layer, id = r.id,
        status = r.status, node = r.node })
    end
  end
end

-- the fleet's headline: strata.verdict over every node's tests and the
-- fabric rows; a node whose step or agent failed fails the fleet
local function headline(fm, counts)
  local all = {}
  for _, node in ipairs(fm.nodes) do
    for _, t in ipairs(node.model.tests) do all[#all + 1] = t end
  end
  if fm.pairs then for _, e in pairs(fm.pairs.cells) do all[#all + 1] = e.test end end
  for _, t in ipairs(fm.incast and fm.incast.tests or {}) do all[#all + 1] = t end
  local interrupted = not fm.ended or fm.ended.interrupted
  local expect
  for _, node in ipairs(fm.nodes) do expect = expect or (node.plan and node.plan.expect) end
  fm.verdict, fm.message = verdict.headline(all, expect, interrupted)
  if (counts.ERROR or 0) > 0 then
    local bad = {}
    for _, node in ipairs(fm.nodes) do
      if node.status == "ERROR" then bad[#bad + 1] = node.name end
    end
    fm.verdict = "FAIL"
    fm.message = ("%d node%s ERROR (%s)%s"):format(#bad, #bad == 1 and "" or "s",
      table.concat(bad, ", "), fm.message and ("; " .. fm.message) or "")
  end
end

-- orchestration: per step, the launch latency (srun to the node's
-- first word) and the launcher's time beyond the slowest node's work
local function overhead(fm)
  local ov = { steps = {}, nodes = 0, launch = {} }
  for _, s in ipairs(fm.steps) do
    local slowest = 0
    for _, t in ipairs(s.tasks or {}) do
      if t.node_s and t.node_s > slowest then slowest = t.node_s end
      if t.start_s then ov.launch[#ov.launch + 1] = t.start_s end
    end
    ov.steps[#ov.steps + 1] = { phase = s.phase, tasks = #(s.tasks or {}), wall_s = s.wall_s,
                                slowest_node_s = slowest,
                                overhead_s = s.wall_s - slowest }
  end
  ov.launch_median_s = median(ov.launch)
  local mx = 0
  for _, x in ipairs(ov.launch) do if x > mx then mx = x end end
  ov.launch_max_s = #ov.launch > 0 and mx or nil
  fm.overhead = ov
  fm.wall_s = fm.ended and fm.ended.wall_s
end

-- The fleet model of a fleet journal's records, step by step.
function M.build(records, opts)
  opts = opts or {}
  local fm = { run = {}, criteria = {}, nodes = {}, by_node = {}, columns = {},
               results = {}, steps = {}, errors = {}, pairs = nil }
  local header = {}
  local per_node = {}     -- name -> records for its own rungs
  local pair_recs, incast_recs, s3_recs, confirm_recs = {}, {}, {}, {}
  read_records(fm, records, header, per_node, pair_recs, incast_recs, s3_recs,
               confirm_recs)
  error_results(fm, per_node)
  node_models(fm, header, per_node)
  local counts = node_statuses(fm)
  outliers(fm)
  pair_matrix(fm, pair_recs, confirm_recs)
  incast(fm, incast_recs)
  s3_rows(fm, s3_recs)
  lowest_failed(fm, pair_recs, incast_recs)
  headline(fm, counts)
  overhead(fm)
  fm.attribution = require("strata.fleet.attrib").build(fm)
  fm.baseline = select(2, require("strata.fleet.baseline").stats(records))
  return fm
end

return M
