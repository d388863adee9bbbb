-- RUNBOOK R7: PFC/ECN under incast.  1, 2, 4, 8 senders (`strata serve`
-- agents named by site.roce.senders) x 1, 4, 8, 16, 32 QPs each RDMA-WRITE
-- together into one receiver (this host, or the agent site.roce.receiver
-- names).  Around each cell the receiving host's counters (RDMA port
-- counters, `ethtool -S` of site.roce.interfaces, net, cpu) are read and
-- classified (strata.lib.congestion): drops, PFC pause frames, ECN marks,
-- CNPs, RDMA error counters.  `dcb pfc/ets/app show` is captured once.
-- PASS: no drops, no RDMA error counter rose, no sender failed, no pause,
-- ECN mark or CNP without congestion (1 sender), and controlled
-- degradation: the aggregate keeps >= 80% of the receiver's line rate
-- (incast_ratio; thresholds override).  docs/roce.md has the method.
local verbs = require "strata.verbs"
local counters = require "strata.counters"
local sys = require "strata.sys"
local vs = require "strata.lib.verbsite"
local cg = require "strata.lib.congestion"

local QPS = { 1, 4, 8, 16, 32 }

-- The peer table of site.peers.<name> (token resolved, never reported).
local function peer_named(site, name, key)
  if type(name) ~= "string" then
    error(("%s: entries must be names of site.peers, got %s")
          :format(key, type(name)), 0)
  end
  local p = vs.peer { rdma = { peer = name }, peers = site.peers }
  p.name = name
  return p
end

-- The interfaces whose `ethtool -S` counters to read: the site's, else
-- the netdev behind the RDMA port (explicit = raise when unreadable).
local function interfaces(site)
  local r = site.roce or {}
  if r.interfaces then return r.interfaces, true end
  local o = vs.local_opts(site)
  for _, d in ipairs(verbs.inventory(o.device)) do
    local p = d.ports and d.ports[o.port or 1]
    if p and p.netdev then return { p.netdev }, false end
    break
  end
  return {}, false
end

local function snapshot(ifs)
  return counters.snapshot { sources = { "rdma", "net" }, ethtool = ifs }
end

-- dcb pfc / ets / app show, once (the first cell that runs).
local function capture_dcb(t, ifs)
  local rows, absent = {}, nil
  for _, ifname in ipairs(ifs) do
    for _, what in ipairs { "pfc", "ets", "app" } do
      local cmd = { "dcb", what, "show", "dev", ifname }
      local r = sys.run { cmd = cmd, timeout = 10 }
      if r.code == 127 then absent = r.exec_error or "not found" break end
      local text = (r.code == 0 and r.stdout or r.stderr):gsub("%s+$", "")
      local n = 0
      for line in (text .. "\n"):gmatch("(.-)\n") do
        rows[#rows + 1] = { table.concat(cmd, " "), r.code, line }
        n = n + 1
      end
      if n == 0 then rows[#rows + 1] = { table.concat(cmd, " "), r.code, "" } end
    end
    if absent then break end
  end
  if absent then
    t.note("dcb (iproute2) is not installed: PFC/ETS/APP settings not "
           .. "captured (" .. absent .. ")")
  elseif #rows > 0 then
    t.table("DCB settings", { "command", "exit", "output" }, rows)
  end
end

test {
  id = "R7", layer = "roce", title = "PFC/ECN under incast",
  needs = { "R1" },
  tags = { "rdma", "roce", "congestion", "pfc", "ecn" },
  timeout = 300,
  matrix = { senders = { 1, 2, 4, 8 }, qps = QPS,
             order = { "senders", "qps" } },
  sample = { interval = 0.2, sources = { "cpu", "net", "rdma", "ethtool" } },
  headline = "bw_gbps",
  units = { bw_gbps = "Gbit/s", min_gbps = "Gbit/s", max_gbps = "Gbit/s",
            line_rate_gbps = "Gbit/s", start_skew_ms = "ms" },
  run = function(t)
    local site = t.site
    local r = site.roce or {}
    local n, qps = t.cell.senders, t.cell.qps
    local names = r.senders
    if type(names) ~= "table" or #names == 0 then
      t.skip("no senders: site.roce.senders lists no peers")
    end
    if #names < n then
      t.skip(("%d senders needed, site.roce.senders lists %d")
             :format(n, #names))
    end
    if not vs.in_list(r.qps, qps) then
      t.skip(("%d QPs is not in site.roce.qps"):format(qps))
    end
    local senders = {}
    for i = 1, n do
      senders[i] = peer_named(site, names[i], "site.roce.senders")
    end
    local receiver = r.receiver and
                     peer_named(site, r.receiver, "site.roce.receiver") or nil
    local rate, src = r.line_rate_gbps, "site.roce.line_rate_gbps"
    if not rate then rate, src = vs.line_rate(site, verbs) end
    if not rate then
      error("no line rate: set site.roce.line_rate_gbps or "
            .. "site.rdma.line_rate_gbps", 0)
    end

    local ifs, explicit = interfaces(site)
    local first = n == 1
    for _, q in ipairs(QPS) do
      if vs.in_list(r.qps, q) then first = first and q == qps break end
    end
    if first then capture_dcb(t, ifs) end

    local ok0, c0 = pcall(snapshot, ifs)
    if not ok0 then
      if explicit then error(c0, 0) end
      t.note(("ethtool counters of %s not read: %s")
             :format(table.concat(ifs, ","), tostring(c0)))
      ifs = {}
      c0 = snapshot(ifs)
    end
    local o = vs.local_opts(site)
    o.senders, o.receiver, o.qps = senders, receiver, qps
    o.size = r.size or 65536
    o.tx_depth = r.tx_depth
    o.timeout = r.timeout_s
    vs.set_qp_timeout(site, o, #senders * qps)  -- every sender's QPs share the receiver's wire
    if r.duration_s then
      o.duration = t.scale.seconds(r.duration_s, "duration (s)")
    else o.iters = t.scale.count(r.iters or 5000, "iterations") end
    local res = verbs.incast(o)
    local c1 = snapshot(ifs)

    local s = cg.summarize(counters.delta(c0, c1), vs.is_error_counter)
    local congested = n > 1
    local m = {
      bw_gbps = res.bw_gbps, min_gbps = res.min_gbps,
      max_gbps = res.max_gbps, fairness = res.fairness,
      line_rate_gbps = rate, incast_ratio = res.bw_gbps / rate,
      bytes = res.bytes, window_s = res.window_s,
      start_skew_ms = res.start_skew_ms, clock_err_us = res.clock_err_us,
      sender_errors = res.errors,
      drops = s.drops, pfc_pause_frames = s.pause_frames,
      xon_frames = s.xon_frames, ecn_marks = s.ecn_marks, cnp = s.cnp,
      rdma_errors = s.rdma_errors, congested = congested,
      pause_without_congestion = congested and 0
        or (s.pause_frames + s.ecn_marks + s.cnp),
    }
    local rows = {}
    for i, ps in ipairs(res.per_sender) do
      rows[i] = { ps.name, ps.agent, ps.bw_gbps, ps.bytes, ps.duration_s,
                  ps.clock_err_us, ps.error or "" }
      m["sender." .. ps.name .. ".bw_gbps"] = ps.bw_gbps
    end
    t.table("Senders", { "sender", "agent", "Gbit/s", "bytes", "seconds",
                         "clock +-us", "error" }, rows)
    if #s.rows > 0 then
      t.table("Congestion counters", { "counter", "kind", "delta" }, s.rows)
    end
    local missing = {}
    for _, k in ipairs { "pause", "ecn", "cnp", "drop" } do
      if not s.present[k] then missing[#missing + 1] = k end
    end
    if #missing > 0 then
      t.note(("no %s counters on this host (%s): %s cannot be verified "
              .. "here (software RoCE has none)")
             :format(table.concat(missing, "/"),
                     #ifs > 0 and table.concat(ifs, ",") or "no interface",
                     table.concat(missing, "/")))
    end
    if receiver then
      t.note("the receiver is " .. receiver.name .. ": the counters are "
             .. "this host's, not the receiver's")
    end
    t.note(("%d sender(s) x %d QPs x %d B WRITE into %s (%s); line rate "
            .. "%.3g Gbit/s (%s); clock offset +-%.0f us")
           :format(n, qps, o.size, res.receiver, res.rx_device, rate, src,
                   res.clock_err_us))
    return m
  end,
}
