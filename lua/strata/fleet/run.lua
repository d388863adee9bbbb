-- strata.fleet.run: `strata run --fleet slurm` - the runbook across the
-- nodes of a Slurm allocation, into one fleet journal and workbook.
--
-- The launcher (where salloc or the sbatch script runs it) never runs a
-- test itself: each node's part runs there as `strata node`, one srun
-- step per node and phase, its work on stdin and its journal records on
-- stdout (no shared filesystem).  The agents (`strata serve`, the far
-- end of the pair and incast rungs) are srun steps too, one per node,
-- killed with their steps at the end.  Every record is journaled here as
-- it arrives, tagged with its node; a node that dies, hangs or never
-- starts is that node's ERROR with the reason, the others stand.
local cjson = require "cjson"
local core = require "strata.core"
local fleet = require "strata.fleet"
local setup = require "strata.setup"
local spec = require "strata.spec"
local runner = require "strata.runner"
local journal = require "strata.journal"
local redact = require "strata.redact"
local slurm = require "strata.fleet.slurm"
local plan = require "strata.fleet.plan"
local node_cmd = require "strata.cmd.node"
local phased = require "strata.fleet.phased"

local M = {}

local TOKEN_ENV = "STRATA_FLEET_TOKEN"

local function deepcopy(v)
  if type(v) ~= "table" then return v end
  local o = {}
  for k, x in pairs(v) do o[k] = deepcopy(x) end
  return o
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function token()
  local f = assert(io.open("/dev/urandom", "rb"))
  local b = f:read(24)
  f:close()
  return (b:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

local function ids(tests)
  local out = {}
  for _, t in ipairs(tests) do out[#out + 1] = t.id end
  return out
end

-- The longest a node may stay silent: the cell deadline of the test it
-- is running (or the next, whichever is longer) plus slack.  The runner
-- kills a cell at its deadline and journals every cell, so a node quiet
-- for longer is hung, not busy.  Tests run in plan order (work.only).
local function idle_after(t, id, slack)
  local meta = t.work.meta
  local i = 0
  for k, m in ipairs(meta) do if m.id == id then i = k end end
  local cur = meta[i] and meta[i].timeout or 0
  local nxt = meta[i + 1] and meta[i + 1].timeout or 0
  return math.max(cur, nxt, 1) + slack
end

-- One run of tasks (one srun step each) through the shared group: lines
-- journaled as they come, deadlines watched, exits accounted.  tasks:
-- { node=, phase=, pair=, work= (document for stdin), idle= (s) }.
-- Agents' events (agent exits) arriving meanwhile go to st.on_agent.
local function step(st, tasks)
  local by_id = {}
  local t0 = core.now()
  local slack = st.fl.idle_slack_s or 60
  for _, t in ipairs(tasks) do
    t.started = core.now()
    t.last = t.started
    t.idle = idle_after(t, nil, slack)
    local argv = slurm.srun(t.node, { st.strata, "node" },
                            { name = "strata-" .. t.phase })
    t.id = st.group:spawn { cmd = argv, stdin = cjson.encode(t.work),
                            env = st.env }
    t.stderr, t.recs = {}, {}
    by_id[t.id] = t
  end
  local left = #tasks
  local function tag(t, rec)
    rec.node = t.node
    rec.phase = t.phase
    rec.pair = t.pair
    rec.pair_devices, rec.rail = t.pair_devices, t.rail
    return rec
  end
  local function node_error(t, reason)
    if t.failed then return end
    t.failed = reason
    st.j:write(tag(t, { type = "node_error", reason = reason,
                        tests = t.work.only, meta = t.work.meta, at = core.utc() }))
  end
  while left > 0 do
    if core.stopping() then
      for _, t in ipairs(tasks) do
        if not t.exited then
          st.group:kill(t.id, "TERM")
          node_error(t, "interrupted")
        end
      end
      st.interrupted = true
    end
    local ev = st.group:next(1.0)
    local now = core.now()
    if ev and by_id[ev.id] then
      local t = by_id[ev.id]
      t.last = now
      if ev.line then
        if ev.stream == "stdout" and ev.line:sub(1, #node_cmd.MARK) == node_cmd.MARK then
          local ok, rec = pcall(cjson.decode, ev.line:sub(#node_cmd.MARK + 1))
          if ok and type(rec) == "table" and rec.type then
            rec = journal.denull(rec)
            if rec.type == "node" then
              t.first = t.first or now
            elseif rec.type == "node_end" then
              t.done = true
              t.node_end = now
            end
            if rec.type == "result" then
              t.results = (t.results or 0) + 1
              t.recs[#t.recs + 1] = rec
              t.idle = idle_after(t, rec.id, slack)
            end
            if rec.type ~= "node_error" or not t.failed then
              if rec.type == "node_error" then t.failed = rec.reason end
              st.j:write(tag(t, rec))
            end
          else
            table.insert(t.stderr, "unreadable record line")
          end
        else
          table.insert(t.stderr, ev.line)
          if #t.stderr > 20 then table.remove(t.stderr, 1) end
        end
      else
        t.exited = true
        t.code = ev.exit
        left = left - 1
        if not t.done then
          node_error(t, ("srun on %s exited (%s) before the node finished%s")
            :format(t.node,
                    ev.signal ~= 0 and ("signal " .. ev.signal) or ("code " .. ev.exit),
                    #t.stderr > 0 and (": " .. table.concat(t.stderr, " | "):sub(-400)) or ""))
        end
      end
    elseif ev and st.agents_by_id[ev.id] then
      st.on_agent(st.agents_by_id[ev.id], ev)
    end
    for _, t in ipairs(tasks) do
      if not t.exited and not t.killed_at and now - t.last > t.idle then
        node_error(t, ("node %s hung: no word for %g s (%s); its step was killed")
          :format(t.node, t.idle, t.first and "after it started" or "it never started"))
        st.group:kill(t.id, "KILL")
        t.killed_at = now
      end
    end
  end
  local wall = core.now() - t0
  local launch = {}
  for _, t in ipairs(tasks) do
    launch[#launch + 1] = { node = t.node, pair = t.pair,
      start_s = t.first and (t.first - t.started) or nil,
      node_s = t.node_end and t.first and (t.node_end - t.first) or nil,
      total_s = (t.node_end or core.now()) - t.started, results = t.results or 0,
      status = t.failed and "ERROR" or "OK" }
  end
  st.j:write { type = "step", phase = tasks[1] and tasks[1].phase, wall_s = wall,
               tasks = launch }
  return tasks
end

-- The agents: `strata serve` on every node, one srun step each; ready
-- once it says "listening" (serve.c).  Returns name -> agent.
local function start_agents(st, nodes)
  local port = (st.fl.agent_port or 18515)
  local agents, pending = {}, 0
  for _, n in ipairs(nodes) do
    local argv = slurm.srun(n.name, { st.strata, "serve", "--port", tostring(port),
                                      "--idle-timeout", "120" },
                            { name = "strata-agent" })
    local a = { node = n.name, addr = n.addr, port = port, lines = {} }
    a.id = st.group:spawn { cmd = argv, env = st.env }
    st.agents_by_id[a.id] = a
    agents[n.name] = a
    pending = pending + 1
  end
  local t0 = core.now()
  local deadline = t0 + (st.fl.agent_start_s or 30)
  while pending > 0 and core.now() < deadline do
    local ev = st.group:next(0.5)
    if ev and st.agents_by_id[ev.id] then
      local a = st.agents_by_id[ev.id]
      local was = a.ready or a.dead
      st.on_agent(a, ev)
      if not was and (a.ready or a.dead) then
        pending = pending - 1
        a.start_s = core.now() - t0
      end
    end
  end
  for _, a in pairs(agents) do
    if not a.ready and not a.dead then
      a.dead = ("agent (strata serve) on %s did not start within %d s%s")
        :format(a.node, st.fl.agent_start_s or 30,
                #a.lines > 0 and (": " .. table.concat(a.lines, " | "):sub(-300)) or "")
      st.j:write { type = "node_error", node = a.node, phase = "agent",
                   reason = a.dead, at = core.utc() }
      st.group:kill(a.id, "KILL")
    end
  end
  local tasks = {}
  for _, n in ipairs(nodes) do
    local a = agents[n.name]
    tasks[#tasks + 1] = { node = a.node, start_s = a.ready and a.start_s or nil,
                          status = a.ready and "OK" or "ERROR", results = 0 }
  end
  st.j:write { type = "step", phase = "agent", wall_s = core.now() - t0, tasks = tasks }
  return agents
end

local function on_agent(st)
  return function(a, ev)
    if ev.line then
      if ev.line:find("listening on", 1, true) then a.ready = true end
      table.insert(a.lines, ev.line)
      if #a.lines > 10 then table.remove(a.lines, 1) end
    elseif not st.stopping_agents then
      a.dead = ("agent (strata serve) on %s exited (%s)%s"):format(a.node,
        ev.signal ~= 0 and ("signal " .. ev.signal) or ("code " .. ev.exit),
        #a.lines > 0 and (": " .. table.concat(a.lines, " | ", math.max(1, #a.lines - 2)))
        or "")
      a.ready = false
      st.j:write { type = "node_error", node = a.node, phase = "agent",
                   reason = a.dead, at = core.utc() }
    end
  end
end

-- Results a phase could not produce (a dead agent, a role) are still
-- results: records saying why, so that the matrix has no holes.
-- (--fleet k8s writes its own with the same function.)
function M.synthetic_result(t, node, phase, status, reason, pair)
  local r = require("strata.model").result(t, 1, nil, { cell = {},
    cell_index = 1, checks = {}, started = core.utc(), duration_s = 0 })
  r.status, r.reason, r.node, r.phase, r.pair = status, reason, node, phase, pair
  return r
end

local function synthetic(st, t, node, phase, status, reason, pair)
  st.j:write(M.synthetic_result(t, node, phase, status, reason, pair))
end

-- What every node gets (--fleet k8s's too): the spec files, thresholds
-- file and profile as loaded here, each { path, text }.
function M.inputs(s, o)
  local files = {}
  for _, f in ipairs(s.files) do
    if f.role == "spec" then files[#files + 1] = { path = f.path, text = read(f.path) } end
  end
  local th = s.thresholds_file and { path = s.thresholds_file, text = read(s.thresholds_file) }
  local prof = o.profile and { path = o.profile, text = read(o.profile) }
  return files, th, prof
end

-- What a node is told of the tests it runs (the fleet model fills the
-- results a dead node never sent from it): id, layer, title, timeout,
-- planned cells.
function M.meta(tests)
  local meta = {}
  for _, t in ipairs(tests) do
    meta[#meta + 1] = { id = t.id, layer = t.layer, title = t.title,
                        timeout = t.timeout or 60, cells = #spec.cells(t) }
  end
  return meta
end

-- --repeat N / --until-pass N: tries per cell and the mode (nil: once).
function M.tries(o)
  local usage = require("strata.args").usage_error
  if o["repeat"] and o.until_pass then
    error(usage("--repeat and --until-pass: one or the other"), 0)
  end
  local v = o["repeat"] or o.until_pass
  if not v then return nil end
  local n = tonumber(v)
  if not n or n < 1 or n % 1 ~= 0 or n > 100 then
    error(usage(("%s %s: a whole number of tries, 1 to 100"):format(
      o["repeat"] and "--repeat" or "--until-pass", v)), 0)
  end
  return math.tointeger(n), o["repeat"] and "repeat" or "until_pass"
end

-- One pair's step: site.rdma.device and the far end's device set to the
-- pair's rail devices when it has them.
local function pair_task(c, p, phase)
  local a, b = p[1], p[2]
  local site = deepcopy(c.base_site)
  site.rdma = site.rdma or {}
  site.rdma.peer = "fleet-" .. b
  c.peer_site(site, { ["fleet-" .. b] = b })
  local extra = { pair = { a, b } }
  if p.dev then
    site.rdma.device = p.dev[1]
    site.peers["fleet-" .. b].device = p.dev[2]
    extra.pair_devices, extra.rail = p.dev, p.rail
  end
  return { node = a, phase = phase, pair = { a, b }, pair_devices = p.dev, rail = p.rail,
           work = c.work(a, "pair", c.tests, site, extra) }
end

-- The pair rungs between node pairs, in rounds of disjoint pairs, each
-- pair driven from its first node against the second's agent (a dead
-- agent: the pair's rows ERROR, saying so); on rails (c.rails) each node
-- pair runs once per device pair (strata.fleet.plan.rail_pairs).  c:
-- agents, base_site, tests, work, peer_site, crit, rails, cross.  Returns
-- measure(list, phase) -> "a->b" -> outcome per test
-- (strata.fleet.phased.outcome, rails folded by phased.rail_outcome):
-- phased decides its next pairs from them, the confirmation re-measures
-- with phase "confirm".
local function pair_measure(st, c)
  return function(list, phase)
    local by_label = {}
    for _, round in ipairs(plan.rounds(plan.rail_pairs(list, c.rails, c.cross))) do
      if st.interrupted then break end
      local tasks, recs = {}, {}
      for _, p in ipairs(round) do
        local a, b = p[1], p[2]
        if c.agents[b].dead then
          local rs = {}
          for _, t in ipairs(c.tests) do
            local r = M.synthetic_result(t, a, phase, "ERROR",
                        ("no far end on %s: %s"):format(b, c.agents[b].dead), { a, b })
            r.pair_devices, r.rail = p.dev, p.rail
            st.j:write(r)
            rs[#rs + 1] = r
          end
          recs[#recs + 1] = { label = a .. "->" .. b, recs = rs, rail = p.rail }
        else
          local t = pair_task(c, p, phase)
          t.label = a .. "->" .. b
          tasks[#tasks + 1] = t
          recs[#recs + 1] = t
        end
      end
      if #tasks > 0 then step(st, tasks) end
      for _, t in ipairs(recs) do
        local l = by_label[t.label] or { same = {}, cross = {} }
        by_label[t.label] = l
        table.insert(t.rail == "cross" and l.cross or l.same, phased.outcome(t.recs, c.crit))
      end
    end
    local outs = {}
    for label, l in pairs(by_label) do outs[label] = phased.rail_outcome(l) end
    return outs
  end
end

-- A suspect must be seen twice: the pairs that are evidence against a
-- suspect of the pairs so far (strata.fleet.attrib on the journal as it
-- stands) are measured once more (site.fleet.pairs.confirm: false turns
-- it off), as phase "confirm"; attrib names a suspect only when its
-- re-measured pairs are bad again (noise seldom strikes the same pair
-- twice, a degraded link does).
local function confirm(st, measure, jpath, pf)
  if pf.confirm == false or st.interrupted then return end
  local fm = require("strata.fleet.model").build(journal.read(jpath))
  local list, seen = {}, {}
  for _, s in ipairs((fm.attribution or {}).suspects or {}) do
    for _, e in ipairs(s.evidence) do
      local k = e.a .. "|" .. e.b
      if not e.cell and not seen[k] then
        seen[k] = true
        list[#list + 1] = { e.na or e.a, e.nb or e.b, dev = e.dev, rail = e.rail }
      end
    end
  end
  st.j:write { type = "confirm", pairs = list }
  if #list == 0 then return end
  io.stderr:write(("strata: %d suspect pair%s measured again to confirm\n")
    :format(#list, #list == 1 and "" or "s"))
  measure(list, "confirm")
end

-- The fleet journal opened beside the workbook, with its run, thresholds
-- and severity records; the criteria as journaled and the fleet's own.
local function open_journal(o, s, argv, alloc, roles, pair_ids, tries, try_mode, acting)
  local host = core.hostname()
  local xlsx = o.output or ("reports/strata-fleet-%s-%s.xlsx"):format(
    (alloc.job or host):gsub("[^%w%-_.]", "_"), core.utc(nil, "%Y%m%dT%H%M%SZ"))
  local dir = xlsx:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then core.mkdir_p(dir) end
  local jpath = (xlsx:gsub("%.xlsx$", "")) .. ".jsonl"
  local j = journal.open(jpath)
  local argv0 = { "strata", "run" }
  for _, a in ipairs(argv) do argv0[#argv0 + 1] = a end
  local node_info = {}
  for _, n in ipairs(alloc.nodes) do
    local f = {}
    for k in pairs(n.features) do f[#f + 1] = k end
    table.sort(f)
    local r = {}
    for role, set in pairs(roles) do if set[n.name] then r[#r + 1] = role end end
    table.sort(r)
    node_info[#node_info + 1] = { name = n.name, addr = n.addr, features = f, roles = r }
  end
  j:write { type = "run", version = STRATA_VERSION, argv = argv0, host = host,
            started = core.utc(), files = s.files, output = xlsx, journal = jpath,
            cwd = core.realpath("."),
            fleet = { scheduler = "slurm", job = alloc.job, nodelist = alloc.nodelist,
                      nodes = node_info, pair_tests = pair_ids,
                      tries = tries, try_mode = try_mode } }
  local crit = {}
  for _, c in ipairs(s.criteria) do
    crit[#crit + 1] = { id = c.id, metric = c.metric, op = c.op, expr = c.expr,
                        ref = c.ref, text = c.text, source = c.source,
                        warn = c.warn and { op = c.warn.op, expr = c.warn.expr,
                                            text = c.warn.text, source = c.warn.source } }
  end
  j:write { type = "thresholds", criteria = crit }
  local fcrit = require("strata.fleet.model").fleet_criteria(crit)
  j:write(require("strata.fleet.act").severity_record(acting))
  return j, jpath, xlsx, crit, fcrit
end

-- What a node is sent for one step (strata node reads it): the inputs
-- every node gets, its tests and its site.
local function worker(s, o, tries, try_mode)
  local files, th, prof = M.inputs(s, o)
  local function work(node, phase, tests, site, extra)
    local meta = M.meta(tests)
    local w = { node = node, phase = phase, files = files, thresholds = th,
                profile = prof, set = o.set, site = site, only = ids(tests), meta = meta,
                tries = tries, try_mode = try_mode }
    for k, v in pairs(extra or {}) do w[k] = v end
    return w
  end
  return work
end

-- 1. per-node rungs, every node at once
local function node_rungs(st, alloc, phases, roles, work, base_site)
  if #phases.node > 0 then
    local tasks = {}
    for _, n in ipairs(alloc.nodes) do
      local tests = {}
      for _, t in ipairs(phases.node) do
        if plan.GPU_LAYERS[t.layer] and not roles.gpu[n.name] then
          synthetic(st, t, n.name, "node", "SKIP",
                    ("%s is not a GPU node (site.fleet.roles.gpu)"):format(n.name))
        else
          tests[#tests + 1] = t
        end
      end
      if #tests > 0 then
        tasks[#tasks + 1] = { node = n.name, phase = "node",
                              work = work(n.name, "node", tests, base_site, { inventory = true }) }
      end
    end
    io.stderr:write(("strata: per-node rungs (%d tests) on %d nodes\n"):format(#phases.node, #tasks))
    step(st, tasks)
  end
end

-- site.peers for a step: each peer key the address of that node's agent.
local function peer_sites(agents, fl)
  local function peer_site(site, peers)
    site.peers = site.peers or {}
    for key, name in pairs(peers) do
      local a = agents[name]
      site.peers[key] = { host = a.addr, port = a.port, token_env = TOKEN_ENV,
                          device = fl.peer_device, gid_index = fl.peer_gid_index }
    end
    return site
  end
  return peer_site
end

-- 3. pairs: rounds of disjoint pairs (phased decides the next pairs
-- from the last ones' outcomes)
local function pair_rungs(st, o, names, phases, roles, measure, fcrit, fl, j)
  if #phases.pair > 0 and #names > 1 and not st.interrupted then
    local pf = fl.pairs or {}
    local mode = o.pairs or pf.mode or "ring"
    local candidates = {}
    for _, n in ipairs(names) do
      if not roles.aistor[n] then candidates[#candidates + 1] = n end
    end
    if mode == "phased" then
      io.stderr:write(("strata: phased pairs over %d nodes (reference, ring, admit)\n")
        :format(#candidates))
      local rec = phased.run(candidates, function(list) return measure(list, "pair") end,
                             fcrit, pf)
      j:write(rec)
      io.stderr:write(("strata: phased: %d pairs, %d admitted, %d refused\n")
        :format(rec.pairs, rec.admitted or 0, rec.refused or 0))
    else
      local pairs_ = plan.pairs(candidates, mode, pf.max or 64)
      io.stderr:write(("strata: %d pairs in %d rounds (%s)\n")
        :format(#pairs_, #plan.rounds(pairs_), mode))
      measure(pairs_, "pair")
    end
  end
end

-- 4. incast: one receiver, the senders from the allocation
local function incast_rung(st, names, phases, roles, work, base_site, agents, peer_site, fl)
  if #phases.incast > 0 and not st.interrupted then
    local inc = fl.incast or {}
    local recv = inc.receiver or names[1]
    local senders = {}
    for _, n in ipairs(names) do
      if n ~= recv and not roles.aistor[n] and #senders < (inc.max_senders or 8) then
        senders[#senders + 1] = n
      end
    end
    local site = deepcopy(base_site)
    site.roce = site.roce or {}
    site.roce.senders = {}
    local live = {}
    for _, n in ipairs(senders) do
      if agents[n] and not agents[n].dead then
        live["fleet-" .. n] = n
        table.insert(site.roce.senders, "fleet-" .. n)
      end
    end
    peer_site(site, live)
    io.stderr:write(("strata: incast into %s from %d senders\n"):format(recv, #site.roce.senders))
    step(st, { { node = recv, phase = "incast",
                 work = work(recv, "incast", phases.incast, site,
                             { senders = senders }) } })
  end
end

-- 5. S3 from every storage client at once against the one endpoint
local function s3_rungs(st, names, phases, roles, work, base_site)
  if #phases.s3 > 0 and not st.interrupted then
    local tasks = {}
    for _, n in ipairs(names) do
      if roles.storage_client[n] then
        -- every client its own keys; every request's latency back
        local site = deepcopy(base_site)
        if type(site.s3) == "table" then
          site.s3.keep_samples = true
          site.s3.key_prefix = (site.s3.key_prefix or "strata/") .. n .. "/"
        end
        tasks[#tasks + 1] = { node = n, phase = "s3",
                              work = work(n, "s3", phases.s3, site) }
      end
    end
    io.stderr:write(("strata: S3 rows from %d clients at once\n"):format(#tasks))
    step(st, tasks)
  end
end

-- 6. cluster-wide rows once, on the first node
local function once_rungs(st, names, phases, work, base_site)
  if #phases.once > 0 and not st.interrupted then
    step(st, { { node = names[1], phase = "once",
                 work = work(names[1], "once", phases.once, base_site) } })
  end
end

-- the agents go with their steps
local function stop_agents(st, j, agents)
  st.stopping_agents = true
  local t_down = core.now()
  for _, a in pairs(agents) do st.group:kill(a.id, "TERM") end
  local deadline = core.now() + 10
  while st.group:running() > 0 and core.now() < deadline do st.group:next(0.5) end
  st.group:close()
  if next(agents) then
    j:write { type = "step", phase = "teardown", wall_s = core.now() - t_down, tasks = {} }
  end
end

-- The end record, then the fleet model, --act, the outputs and the exit
-- code.
local function finish(st, o, j, jpath, xlsx, acting, t_start)
  local wall = core.now() - t_start
  j:write { type = "end", ended = core.utc(), interrupted = st.interrupted or false,
            wall_s = wall }
  j:close()

  local t_book = core.now()
  local fm = require("strata.fleet.model").build(journal.read(jpath))
  require("strata.fleet.act").after(fm, acting, jpath)
  require("strata.fleet.report").write(fm, { xlsx = xlsx, json = o.json, junit = o.junit,
                                             prometheus = o.prometheus })
  local book = core.now() - t_book
  io.stderr:write(require("strata.fleet.report").summary_text(fm))
  io.stderr:write(("strata: wall %.2f s, bookkeeping (model + outputs) %.2f s\n"):format(wall, book))
  io.stderr:write("strata: workbook ", xlsx, "\n")
  return require("strata.verdict").exit_code { verdict = fm.verdict,
                                             run = { interrupted = st.interrupted } }
end

-- The specs, site and criteria every node gets, and the tests --only
-- keeps: s, order; nil when --only keeps none (said on stderr: exit 2).
-- Both launchers (Slurm here, k8s/fleet.lua) start from it.
function M.load_plan(o, paths)
  local s = setup.load { paths = paths, site = o.site, thresholds = o.thresholds,
                         profile = o.profile, set = o.set, fleet = true }
  local order = runner.plan(s.tests, s.by_id, o.only)
  if #order == 0 then
    io.stderr:write("strata: no test matches ", table.concat(o.only or {}, ", "), "\n")
    return nil
  end
  return s, order
end

function M.main(o, paths, argv)
  if o.fleet ~= "slurm" then
    error(require("strata.args").usage_error(
      ("--fleet %s: the scheduler must be slurm or k8s"):format(tostring(o.fleet))), 0)
  end
  local s, order = M.load_plan(o, paths)
  if not s then return 2 end
  local tries, try_mode = M.tries(o)
  local ok, alloc = pcall(slurm.allocation)
  if not ok then
    if slurm.is_usage_error(alloc) then
      io.stderr:write("strata: ", alloc.fleet_usage, "\n")
      return 2
    end
    error(alloc, 0)
  end
  redact.add_from_env(s.site)
  local fl = s.site.fleet or {}
  local roles = plan.roles(fl, alloc.nodes)
  local pair_ids = plan.pair_tests(fl)
  plan.check_mode(o.pairs or (fl.pairs or {}).mode, o.pairs and "--pairs")   -- exit 2 now
  local phases = plan.phases(order, pair_ids)
  local acting = require("strata.fleet.act").setup(o, s)   -- a bad --act: exit 2 now
  local t_start = core.now()

  local j, jpath, xlsx, crit, fcrit = open_journal(o, s, argv, alloc, roles, pair_ids,
                                                   tries, try_mode, acting)
  local names = {}
  for _, n in ipairs(alloc.nodes) do names[#names + 1] = n.name end
  local work = worker(s, o, tries, try_mode)
  local base_site = deepcopy(s.site)
  if base_site.rdma then base_site.rdma.peer = nil end

  local tok = token()
  redact.add(tok)
  local env = { [TOKEN_ENV] = tok, STRATA_SERVE_TOKEN = tok }
  local st = { j = j, fl = fl, env = env, agents_by_id = {},
               group = fleet.group(),
               strata = fl.strata or (core.exe_dir() .. "/strata") }
  st.on_agent = on_agent(st)
  core.trap_signals()
  io.stderr:write(("strata: fleet of %d nodes (%s), job %s, journal %s\n")
    :format(#names, alloc.nodelist, tostring(alloc.job), jpath))

  node_rungs(st, alloc, phases, roles, work, base_site)
  -- agents for the fabric rungs
  local need_agents = (#phases.pair > 0 and #names > 1) or (#phases.incast > 0)
  local agents = {}
  if need_agents and not st.interrupted then
    agents = start_agents(st, alloc.nodes)
  end
  local peer_site = peer_sites(agents, fl)
  local measure = pair_measure(st, { agents = agents, base_site = base_site,
    tests = phases.pair, work = work, peer_site = peer_site, crit = crit,
    rails = plan.rails(s.site.rdma), cross = (fl.pairs or {}).cross_rail == true })
  pair_rungs(st, o, names, phases, roles, measure, fcrit, fl, j)
  incast_rung(st, names, phases, roles, work, base_site, agents, peer_site, fl)
  -- the suspects of the pairs and R7 so far: their pairs measured again
  if #phases.pair > 0 and #names > 1 then confirm(st, measure, jpath, fl.pairs or {}) end
  s3_rungs(st, names, phases, roles, work, base_site)
  once_rungs(st, names, phases, work, base_site)
  stop_agents(st, j, agents)
  return finish(st, o, j, jpath, xlsx, acting, t_start)
end

-- `strata report FLEET.jsonl`: the fleet outputs rebuilt from a fleet
-- journal (after a killed launcher: every record it had is there).
function M.report(recs, o, path)
  local fm = require("strata.fleet.model").build(recs)
  require("strata.fleet.act").from_records(fm, recs)
  local xlsx = o.output or (path:gsub("%.jsonl$", "") .. ".xlsx")
  require("strata.fleet.report").write(fm, { xlsx = xlsx, json = o.json, junit = o.junit,
                                             prometheus = o.prometheus })
  io.stderr:write(require("strata.fleet.report").summary_text(fm))
  io.stderr:write(("strata: %d results of %d nodes from %s -> %s\n"):format(
    #fm.results, #fm.nodes, path, xlsx))
  return 0
end

return M
