-- strata.fleet.attrib: from the pair matrices (R2, R3, R4/R5 where run)
-- and R7's incast to a suspect: the node common to the pairs that fail or
-- fall below the fleet, or the single link, with its evidence.
--
-- A pair is compared with the pairs that do not touch the node under
-- question (leave one node out), not with the median of all pairs: in a
-- small allocation most pairs touch the bad node (a ring of 3: two of
-- three), so the all-pairs median is itself degraded.  A node is a suspect
-- of a test when every measured pair touching it is bad (FAIL, ERROR, or
-- its headline below FLEET.pair_ratio x the median of the pairs not
-- touching it) while a pair without it is good.  A bad pair no suspect
-- node explains is a suspect link (its headline against the median of
-- every other pair) unless it touches a node that is a suspect of any
-- test: then it is more evidence against that node.  R7: a sender whose
-- share of a multi-sender cell is below FLEET.pair_ratio x the cell's
-- median share is evidence against the link sender -> receiver (or the
-- suspect node it names).  The ratio is judged by strata.thresholds like
-- any criterion (the FLEET test of strata.fleet.model); without a
-- FLEET.pair_ratio criterion only FAIL/ERROR pairs count.  On rails (pairs
-- per device, ends "node:device") a node is judged over all its devices'
-- pairs, then, among the pairs no suspect node explains, a NIC by the
-- same leave-one-out over the ends; a link is "g2:rxe1 <-> g3:rxe1".
-- Every cross-rail pair of a test bad while every same-rail pair is good
-- is the fabric's (no path between the rails: a rail-only fabric or
-- missing routing), not any node's, NIC's or link's: a rail finding, and
-- those pairs name no suspect.
local model = require "strata.fleet.model"

local M = {}

local BAD = { FAIL = true, ERROR = true }

local function num(v)
  return type(v) == "number" and require("strata.report.common").fmt(v) or tostring(v)
end

local function rel_of(v, ref, dir)
  if type(v) ~= "number" or type(ref) ~= "number" or ref == 0 then return nil end
  if dir == "max" then return v == 0 and math.huge or ref / v end
  return v / ref
end

-- One pair judged against a reference: { bad = bool, rel =, why = }.
local function judge_pair(p, ref, dir, crit)
  if BAD[p.status] then
    return { bad = true, why = p.status .. (p.reason and (": " .. p.reason) or "") }
  end
  local rel = rel_of(p.value, ref, dir)
  if rel and #crit > 0 then
    local ck, warn = model.judge_ratio(crit, "pair_ratio", rel)
    if ck then return { bad = true, rel = rel, why = ck.why } end
    if warn then return { bad = false, warn = true, rel = rel, why = warn.warn_why } end
  end
  return { bad = false, rel = rel }
end

local function values(list)
  local xs = {}
  for _, p in ipairs(list) do
    if type(p.value) == "number" and p.status ~= "ERROR" then xs[#xs + 1] = p.value end
  end
  return xs
end

-- The pairs of each pair test: { [id] = { {a, b, value, status, ...} } }.
local function pairs_by_test(fm)
  local by = {}
  if not fm.pairs then return by end
  for _, e in pairs(fm.pairs.cells) do
    if e.status ~= "SKIP" then
      by[e.id] = by[e.id] or {}
      table.insert(by[e.id], e)
    end
  end
  for _, list in pairs(by) do
    table.sort(list, function(x, y) return x.a .. ">" .. x.b < y.a .. ">" .. y.b end)
  end
  return by
end

local function evidence_of(p, ref, j, dir)
  return { test = p.id, pair = p.a .. "->" .. p.b, a = p.a, b = p.b,
           na = p.na, nb = p.nb, dev = p.dev, rail = p.rail,
           status = p.status, value = p.value, metric = p.metric, unit = p.unit,
           reference = ref, ratio = j.rel, direction = dir, why = j.why }
end

-- Leave-one-out over names: ends(p) gives a pair's two ends (nodes, or
-- "node:device" ends on rails).  Returns suspects name -> evidence, the
-- pairs they explain, and the watched names (every pair in the WARN band).
local function leave_one_out(names, list, ends, crit, dir)
  local found, explained, watch = {}, {}, {}
  for _, n in ipairs(names) do
    local touch, other = {}, {}
    for _, p in ipairs(list) do
      local x, y = ends(p)
      if x == n or y == n then touch[#touch + 1] = p else other[#other + 1] = p end
    end
    local ref = model.median(values(other))
    if #touch > 0 and #other > 0 then
      local good_other = false
      for _, p in ipairs(other) do
        if not BAD[p.status] and type(p.value) == "number" then
          good_other = true
        end
      end
      local ev, all_bad, all_low = {}, true, true
      for _, p in ipairs(touch) do
        local j = judge_pair(p, ref, dir, crit)
        if not j.bad then all_bad = false end
        if not j.bad and not j.warn then all_low = false end
        ev[#ev + 1] = evidence_of(p, ref, j, dir)
      end
      if all_bad and good_other then
        found[n] = ev
        for _, p in ipairs(touch) do explained[p] = true end
      elseif all_low and good_other then
        watch[n] = ev    -- every pair in the WARN band or worse: watched, not named
      end
    end
  end
  return found, explained, watch
end

-- The rail finding of one test's pairs, or nil: every cross-rail pair
-- FAIL/ERROR and every same-rail pair not.  Marks the cross-rail pairs
-- explained.
local function rail_pattern(id, list, explained, dir)
  local same, cross, n = {}, {}, { ERROR = 0, FAIL = 0 }
  for _, p in ipairs(list) do
    if p.rail == "same" then same[#same + 1] = p elseif p.rail == "cross" then cross[#cross + 1] = p end
  end
  if #same == 0 or #cross == 0 then return nil end
  for _, p in ipairs(same) do if BAD[p.status] then return nil end end
  for _, p in ipairs(cross) do
    if not BAD[p.status] then return nil end
    n[p.status] = n[p.status] + 1
  end
  local ev = {}
  for _, p in ipairs(cross) do
    explained[p] = true
    ev[#ev + 1] = evidence_of(p, nil, judge_pair(p, nil, dir, {}), dir)
  end
  local head = n.FAIL == 0 and ("0 of %d pairs connect"):format(#cross)
    or ("0 of %d pairs pass (%d ERROR, %d FAIL)"):format(#cross, n.ERROR, n.FAIL)
  -- one pair's reason as the example, without the spec's "file:line: "
  local why = tostring(cross[1].reason or cross[1].status):gsub("^[%w_/.-]+%.lua:%d+: ", "")
  return { kind = "rail", name = "cross rail", test = id, pairs = #cross, same = #same,
           evidence = ev,
           text = ("%s cross rail: %s, same rail all %d good: a rail-only fabric or missing "
             .. "routing between the rails, not a node or NIC; e.g. %s %s: %s")
             :format(id, head, #same, cross[1].status, ev[1].pair, why:sub(1, 240)) }
end

-- Suspect nodes, NICs (on rails: one device of a node whose every pair is
-- bad while the node's other devices are good) and links of one pair
-- test, and its rail finding.
local function one_test(fm, id, list, crit, names)
  local dir = model.direction(fm.criteria, id, list[1] and list[1].metric)
  local fabric = {}
  local rail = fm.pairs and fm.pairs.devices and rail_pattern(id, list, fabric, dir)
  if rail then
    local rest = {}
    for _, p in ipairs(list) do if not fabric[p] then rest[#rest + 1] = p end end
    list = rest
  end
  local nodes, explained, watch = leave_one_out(names, list,
    function(p) return p.na or p.a, p.nb or p.b end, crit, dir)
  local nics = {}
  if fm.pairs and fm.pairs.devices then
    local rest = {}
    for _, p in ipairs(list) do if not explained[p] then rest[#rest + 1] = p end end
    local more
    nics, more = leave_one_out(fm.pairs.names, rest, function(p) return p.a, p.b end, crit, dir)
    for p in pairs(more) do explained[p] = true end
  end
  local links = {}
  for _, p in ipairs(list) do
    if not explained[p] and #list > 0 then
      local others = {}
      for _, q in ipairs(list) do if q ~= p then others[#others + 1] = q end end
      local ref = model.median(values(others))
      local j = judge_pair(p, ref, dir, crit)
      if j.bad then
        links[#links + 1] = evidence_of(p, ref, j, dir)
      end
    end
  end
  return nodes, links, watch, nics, rail
end

-- R7: per multi-sender cell, each sender's share against the cell's median
-- share.  Returns evidence records against sender -> receiver.
local function incast(fm, crit)
  local out = {}
  if not fm.incast or #crit == 0 then return out end
  for _, r in ipairs(fm.incast.results) do
    local shares = {}
    for k, v in pairs(r.metrics or {}) do
      local who = k:match("^sender%.(.+)%.bw_gbps$")
      if who and type(v) == "number" then
        shares[#shares + 1] = { node = who:gsub("^fleet%-", ""), value = v }
      end
    end
    if #shares >= 2 then
      table.sort(shares, function(x, y) return x.node < y.node end)
      local xs = {}
      for _, s in ipairs(shares) do xs[#xs + 1] = s.value end
      local med = model.median(xs)
      for _, s in ipairs(shares) do
        local rel = rel_of(s.value, med, "min")
        local ck = rel and model.judge_ratio(crit, "pair_ratio", rel)
        if ck then
          out[#out + 1] = { test = r.id, cell = model.cell_key(r),
            pair = s.node .. "->" .. r.node, a = s.node, b = r.node,
            value = s.value, metric = "sender." .. s.node .. ".bw_gbps", unit = "Gbit/s",
            reference = med, ratio = rel, direction = "min", why = ck.why }
        end
      end
    end
  end
  return out
end

-- fm.attribution = { suspects = { {kind = "node"|"nic"|"link", name,
-- evidence, text} }, flaky = { {node, cells = { {id, pair, cell, reason} } } },
-- rails = { {kind = "rail", test, pairs, same, evidence, text} } or nil,
-- rule = text }.
function M.build(fm)
  local crit = {}
  for _, c in ipairs(model.fleet_criteria(fm.criteria, fm.run)) do
    if c.metric == "pair_ratio" then crit[#crit + 1] = c end
  end
  local names = {}
  for _, n in ipairs(fm.nodes) do names[#names + 1] = n.name end
  local by_node, links = {}, {}
  local by = pairs_by_test(fm)
  local ids = {}
  for id in pairs(by) do ids[#ids + 1] = id end
  table.sort(ids)
  local watch, by_nic, rails = {}, {}, {}
  for _, id in ipairs(ids) do
    local nodes, l, w, nics, rail = one_test(fm, id, by[id], crit, names)
    rails[#rails + 1] = rail
    for n, ev in pairs(nics) do
      by_nic[n] = by_nic[n] or {}
      for _, e in ipairs(ev) do table.insert(by_nic[n], e) end
    end
    for n, ev in pairs(w) do
      watch[n] = watch[n] or {}
      for _, e in ipairs(ev) do table.insert(watch[n], e) end
    end
    for n, ev in pairs(nodes) do
      by_node[n] = by_node[n] or {}
      for _, e in ipairs(ev) do table.insert(by_node[n], e) end
    end
    for _, e in ipairs(l) do links[#links + 1] = e end
  end
  -- R7's low senders, then the bad pairs of one test that name a node
  -- (or on rails a NIC) another test found a suspect (R3 through it all
  -- slow, one of its R2 pairs slow): evidence for it; the rest are
  -- suspect links
  for _, e in ipairs(incast(fm, crit)) do links[#links + 1] = e end
  local rest = {}
  for _, e in ipairs(links) do
    local x, y = e.na or e.a, e.nb or e.b
    local n = by_node[x] and x or (by_node[y] and y)
    local nic = by_nic[e.a] and e.a or (by_nic[e.b] and e.b)
    if n then
      table.insert(by_node[n], e)
    elseif nic then
      table.insert(by_nic[nic], e)
    else
      rest[#rest + 1] = e
    end
  end
  links = rest
  local a = { suspects = {}, flaky = {},
              rule = #crit > 0 and ("pairs below %s (%s), or FAIL/ERROR, against the "
                .. "pairs without the node"):format(crit[1].text, crit[1].source)
                or "no FLEET.pair_ratio criterion: only FAIL/ERROR pairs count" }
  for _, n in ipairs(names) do
    local ev = by_node[n]
    if ev then
      local parts = {}
      for _, e in ipairs(ev) do parts[#parts + 1] = M.evidence_text(e) end
      a.suspects[#a.suspects + 1] = { kind = "node", name = n, evidence = ev,
        text = ("node %s: every pair through it is bad: %s"):format(n, table.concat(parts, "; ")) }
    end
  end
  for _, n in ipairs((fm.pairs or {}).devices and fm.pairs.names or {}) do
    local ev = by_nic[n]
    if ev then
      local parts = {}
      for _, e in ipairs(ev) do parts[#parts + 1] = M.evidence_text(e) end
      a.suspects[#a.suspects + 1] = { kind = "nic", name = n, evidence = ev,
        text = ("NIC %s: every pair through it is bad, not every pair through its node: %s")
          :format(n, table.concat(parts, "; ")) }
    end
  end
  -- one link named once (both directions, several tests)
  local link_idx = {}
  for _, e in ipairs(links) do
    local x, y = e.a, e.b
    if x > y then x, y = y, x end
    local name = x .. (e.dev and " <-> " or "-") .. y
    if not link_idx[name] then
      link_idx[name] = { kind = "link", name = name, evidence = {} }
      a.suspects[#a.suspects + 1] = link_idx[name]
    end
    table.insert(link_idx[name].evidence, e)
  end
  for _, s in ipairs(a.suspects) do
    if s.kind == "link" then
      local parts = {}
      for _, e in ipairs(s.evidence) do parts[#parts + 1] = M.evidence_text(e) end
      s.text = ("link %s: %s"):format(s.name, table.concat(parts, "; "))
    end
  end
  -- nodes every pair of some test puts in the WARN band (and not named)
  a.watch = {}
  for _, n in ipairs(names) do
    if watch[n] and not by_node[n] then
      local parts = {}
      for _, e in ipairs(watch[n]) do parts[#parts + 1] = M.evidence_text(e) end
      a.watch[#a.watch + 1] = { kind = "node", name = n, evidence = watch[n],
        text = ("node %s: every pair through it in the WARN band: %s"):format(n,
          table.concat(parts, "; ")) }
    end
  end
  a.rails = #rails > 0 and rails or nil
  M.confirm(fm, a, crit)
  a.flaky = M.flaky_nodes(fm)
  return a
end

-- A suspect must be seen twice: each of its pairs that the launcher
-- measured again (phase "confirm", fm.pairs.confirm) is judged against the
-- same reference; a suspect with a re-measured pair that is good again
-- moves to a.unconfirmed (noise, not a fault), and so does one none of
-- whose pairs could be measured again (R7 evidence alone) when the
-- launcher confirmed (a "confirm" record).  Without that record (confirm
-- off, an older journal) a suspect stands, marked unconfirmed = true.
function M.confirm(fm, a, crit)
  local again = fm.pairs and fm.pairs.confirm or {}
  local keep = {}
  a.unconfirmed = {}
  for _, s in ipairs(a.suspects) do
    -- a pair clears its node only when it measures good again (above the
    -- watch band too): one back in the band is still degraded, not good
    local seen, bad, cleared = 0, 0, 0
    local parts = {}
    for _, e in ipairs(s.evidence) do
      local c = not e.cell and again[e.test .. "|" .. e.a .. "|" .. e.b]
      if c then
        local j = judge_pair(c, e.reference, e.direction, crit)
        e.confirm = { status = c.status, value = c.value, ratio = j.rel, bad = j.bad,
                      watch = j.warn or nil }
        seen = seen + 1
        if j.bad then bad = bad + 1 elseif not j.warn then cleared = cleared + 1 end
        parts[#parts + 1] = ("%s %s %s then %s (x%s)"):format(e.test, e.pair, num(e.value),
          num(c.value), j.rel and ("%.2g"):format(j.rel) or c.status)
      end
    end
    if seen == 0 and fm.confirm_ran then
      s.text = ("%s %s: not confirmed, none of its pairs measured again (R7 evidence only): %s")
        :format(s.kind, s.name, s.text)
      a.unconfirmed[#a.unconfirmed + 1] = s
    elseif seen == 0 then
      s.unconfirmed = true
      keep[#keep + 1] = s
    elseif cleared == 0 and bad > 0 then
      s.confirmed = bad
      s.text = s.text .. (" (confirmed: %d pair%s bad again on a second measurement%s)")
        :format(bad, bad == 1 and "" or "s",
                bad < seen and (", %d in the watch band"):format(seen - bad) or "")
      keep[#keep + 1] = s
    else
      s.text = ("%s %s: not confirmed, good when measured again: %s"):format(s.kind, s.name,
        table.concat(parts, "; "))
      a.unconfirmed[#a.unconfirmed + 1] = s
    end
  end
  a.suspects = keep
end

-- "R2 g1->g2 0.0012 vs 0.025 (x0.05)" / "R2 g1->g2 FAIL: ..."
function M.evidence_text(e)
  local head = e.test .. (e.cell and e.cell ~= "" and ("[" .. e.cell .. "]") or "")
    .. " " .. e.pair
  if e.ratio and e.ratio == e.ratio and e.ratio ~= math.huge then
    return ("%s %s %s vs %s (x%.2g)"):format(head, e.metric or "", num(e.value),
                                           num(e.reference), e.ratio)
  end
  return ("%s %s"):format(head, tostring(e.why or e.status):gsub("\n.*", ""):sub(1, 120))
end

-- Nodes with FLAKY cells (their own, or pairs they drive or answer),
-- named apart from the suspects: { {node, cells} }.
function M.flaky_nodes(fm)
  local by, order = {}, {}
  for _, r in ipairs(fm.flaky or {}) do
    local who = { r.node }
    if r.pair and r.pair[2] then who[2] = r.pair[2] end
    for _, n in ipairs(who) do
      if not by[n] then
        by[n] = { node = n, cells = {} }
        order[#order + 1] = n
      end
      table.insert(by[n].cells, { id = r.id, cell = model.cell_key(r),
        pair = require("strata.fleet.plan").pair_label(r), reason = r.flaky })
    end
  end
  table.sort(order)
  local out = {}
  for _, n in ipairs(order) do out[#out + 1] = by[n] end
  return out
end

return M
