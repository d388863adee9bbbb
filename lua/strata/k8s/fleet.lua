-- strata.k8s.fleet: `strata run --fleet k8s` - the per-node rungs on
-- every node that runs a strata agent, one fleet journal and workbook
-- (the model and writers of strata.fleet), from inside the cluster
-- (docs/kubernetes.md, "The fleet on Kubernetes").
--
-- The nodes are the agent pods' (strata.k8s.api.agents: the DaemonSet the
-- site rendered).  On each, strata makes one Job pinned to the node
-- (spec.nodeName: no scheduler, so a node strata tainted is checked too)
-- whose pod runs `strata node --work FILE` with its work in a ConfigMap
-- of its own; the pod's log is the `@strata` record stream `strata node`
-- writes under Slurm, read back through the API once the pod ends.
-- Everything it made carries the label strata/run=<run> and is deleted by
-- name when the run ends; nothing else is ever deleted.  Rungs between
-- nodes (pairs, incast), S3 from many clients and the cluster-wide rows
-- are the runner Job's (strata k8s runner); here they are SKIP, saying so.
local cjson = require "cjson"
local core = require "strata.core"
local fleetrun = require "strata.fleet.run"
local journal = require "strata.journal"
local redact = require "strata.redact"
local api = require "strata.k8s.api"
local render = require "strata.k8s.render"
local plan = require "strata.fleet.plan"
local node_cmd = require "strata.cmd.node"

local M = {}

M.WORK_DIR = "/etc/strata/work"

-- A run name usable in object names (DNS-1123, short enough for a Job's
-- pods): strata-<utc>-<4 hex>.
local function run_name()
  local f = assert(io.open("/dev/urandom", "rb"))
  local b = f:read(2)
  f:close()
  return ("strata-%s-%02x%02x"):format(core.utc(nil, "%Y%m%dt%H%M%S"), b:byte(1), b:byte(2))
end

local function objects(ctx, run, i, node, work)
  local ns, k = ctx.ns, ctx.k
  local lab = { ["app.kubernetes.io/name"] = "strata",
                ["app.kubernetes.io/component"] = "node-check", ["strata/run"] = run }
  local cm = { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = ("%s-work-%d"):format(run, i), namespace = ns, labels = lab },
    data = { ["work.json"] = cjson.encode(work) } }
  local pod, meta = render.node_pod(ctx.rctx, k,
    { render.STRATA, "node", "--work", M.WORK_DIR .. "/work.json" },
    { { name = "work", mountPath = M.WORK_DIR, readOnly = true } },
    { { name = "work", configMap = { name = cm.metadata.name } } })
  pod.nodeName = node
  pod.nodeSelector, pod.affinity = nil, nil   -- pinned: no scheduling
  pod.automountServiceAccountToken = false
  for kk, v in pairs(lab) do meta.labels[kk] = v end
  local job = { apiVersion = "batch/v1", kind = "Job",
    metadata = { name = ("%s-node-%d"):format(run, i), namespace = ns, labels = lab },
    spec = { backoffLimit = 0, activeDeadlineSeconds = ctx.deadline,
             ttlSecondsAfterFinished = 3600,
             template = { metadata = meta, spec = pod } } }
  return cm, job
end

-- Wait for the Job's pod to end; its log's records into the journal.
local function collect(ctx, t)
  local cfg, ns = ctx.cfg, ctx.ns
  local sel = api.query_escape("job-name=" .. t.job)
  local deadline = core.now() + ctx.deadline + 30
  local pod
  while core.now() < deadline do
    local list = api.request(cfg, "GET", ("/api/v1/namespaces/%s/pods?labelSelector=%s")
                             :format(ns, sel))
    pod = (list.items or {})[1]
    local ph = pod and (pod.status or {}).phase
    if ph == "Succeeded" or ph == "Failed" then break end
    core.sleep(ctx.poll)
    pod = nil
  end
  if not pod then
    return ctx.err(t, ("the Job %s's pod on %s did not end within %d s"):format(
      t.job, t.node, ctx.deadline + 30))
  end
  local log = api.request(cfg, "GET", ("/api/v1/namespaces/%s/pods/%s/log")
                          :format(ns, api.query_escape(pod.metadata.name)), nil, { raw = true })
  local done = false
  for line in log:gmatch("[^\n]+") do
    if line:sub(1, #node_cmd.MARK) == node_cmd.MARK then
      local ok, rec = pcall(cjson.decode, line:sub(#node_cmd.MARK + 1))
      if ok and type(rec) == "table" and rec.type then
        rec = journal.denull(rec)
        rec.node, rec.phase = t.node, "node"
        if rec.type == "node_end" then done = true end
        ctx.j:write(rec)
      end
    end
  end
  if not done then
    ctx.err(t, ("pod %s on %s ended (%s) before the node finished"):format(
      pod.metadata.name, t.node, tostring(pod.status.phase)))
  end
end

-- Each node's own rungs as a Job pinned to it (its ConfigMap the work),
-- collected into the journal; then what this run made, and only that,
-- deleted by name.
local function node_jobs(ctx, s, o, run, names, phases, meta, files, th, prof)
  local cfg, made = ctx.cfg, {}
  local tasks = {}
  local ok, err = pcall(function()
    if #phases.node == 0 then return end
    local only = {}
    for _, t in ipairs(phases.node) do only[#only + 1] = t.id end
    local site = cjson.decode(cjson.encode(s.site))
    for i, n in ipairs(names) do
      local work = { node = n, phase = "node", files = files, thresholds = th, profile = prof,
                     set = o.set, site = site, only = only, meta = meta, inventory = true }
      local cm, job = objects(ctx, run, i, n, work)
      api.request(cfg, "POST", ("/api/v1/namespaces/%s/configmaps"):format(ctx.ns), cm)
      made[#made + 1] = ("/api/v1/namespaces/%s/configmaps/%s"):format(ctx.ns, cm.metadata.name)
      api.request(cfg, "POST", ("/apis/batch/v1/namespaces/%s/jobs"):format(ctx.ns), job)
      made[#made + 1] = ("/apis/batch/v1/namespaces/%s/jobs/%s"):format(ctx.ns, job.metadata.name)
      tasks[#tasks + 1] = { node = n, job = job.metadata.name, only = only }
    end
    io.stderr:write(("strata: per-node rungs (%d tests) as %d Jobs\n"):format(#only, #tasks))
    for _, t in ipairs(tasks) do
      local ok2, e2 = pcall(collect, ctx, t)
      if not ok2 then ctx.err(t, tostring(e2)) end
    end
  end)
  if not ok then
    for _, t in ipairs(tasks) do ctx.err(t, tostring(err)) end
    io.stderr:write("strata: ", tostring(err), "\n")
  end
  -- what this run made, and only that, by name (Jobs: their pods with them)
  for i = #made, 1, -1 do
    local okd, ed = pcall(api.request, cfg, "DELETE", made[i], { kind = "DeleteOptions",
      apiVersion = "v1", propagationPolicy = "Background" })
    if not okd then io.stderr:write("strata: cleanup: ", tostring(ed), "\n") end
  end
end

-- The fleet model of the journal, --act (or the severity record alone),
-- the outputs and the exit code.
local function finish(cfg, k, o, run, jpath, xlsx, modes, sevm)
  local fm = require("strata.fleet.model").build(journal.read(jpath))
  local act_rec
  if next(modes) then
    act_rec = require("strata.k8s.act").apply(cfg, sevm, fm, modes, fm.run.started .. " " .. run,
      { prefix = (k.act or {}).prefix })
  else
    act_rec = require("strata.fleet.act").apply(sevm, require("strata.fleet.act").nodes_of(fm), {}, run)
  end
  local f = io.open(jpath, "a")
  if f then f:write(redact.json(act_rec), "\n") f:close() end
  fm.severity, fm.act = require("strata.severity").record(sevm), act_rec
  require("strata.fleet.report").write(fm, { xlsx = xlsx, json = o.json, junit = o.junit,
                                             prometheus = o.prometheus })
  io.stderr:write(require("strata.fleet.report").summary_text(fm))
  io.stderr:write("strata: workbook ", xlsx, "\n")
  return require("strata.verdict").exit_code { verdict = fm.verdict, run = {} }
end

-- Options of the Slurm launcher this one has no use for: its pairs are
-- SKIP here (the runner Job's) and its node Jobs run each cell once.  A
-- usage error (exit 2) rather than an option silently ignored.
local SLURM_ONLY = {
  pairs = "--pairs picks the node pairs R2/R3 run between under --fleet slurm; "
    .. "--fleet k8s runs no pairs (they are SKIP here, the runner Job's: strata k8s runner)",
  ["repeat"] = "--repeat runs the cells of --fleet slurm again; the node Jobs of "
    .. "--fleet k8s run each cell once",
  until_pass = "--until-pass runs the cells of --fleet slurm again; the node Jobs of "
    .. "--fleet k8s run each cell once",
}

function M.main(o, paths, argv)
  for _, k in ipairs { "pairs", "repeat", "until_pass" } do
    if o[k] then error(require("strata.args").usage_error(SLURM_ONLY[k]), 0) end
  end
  local s, order = fleetrun.load_plan(o, paths)
  if not s then return 2 end
  local k = type(s.site.k8s) == "table" and s.site.k8s or nil
  if not k or not k.image then
    error(require("strata.args").usage_error(
      "--fleet k8s needs the site's k8s: section with its image (docs/kubernetes.md)"), 0)
  end
  local modes = require("strata.k8s.act").modes(o.act, o.dry_run)
  local sevm = require("strata.severity").load(o.site, s.site, s.thresholds_file)
  local cfg, why = api.in_cluster()
  if not cfg then
    io.stderr:write("strata: --fleet k8s: ", why, "\n")
    return 2
  end
  redact.add_from_env(s.site)
  local agents = api.agents(cfg, render.AGENT_SELECTOR)
  for _, n in ipairs(agents.not_ready) do
    io.stderr:write(("strata: agent %s not used: %s\n"):format(n.pod, n.why))
  end
  local run = run_name()
  local xlsx = o.output or ("reports/strata-fleet-k8s-%s.xlsx"):format(run)
  local dir = xlsx:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then core.mkdir_p(dir) end
  local jpath = (xlsx:gsub("%.xlsx$", "")) .. ".jsonl"
  local j = journal.open(jpath)
  local argv0 = { "strata", "run" }
  for _, a in ipairs(argv) do argv0[#argv0 + 1] = a end
  local names, info = {}, {}
  for _, n in ipairs(agents.nodes) do
    names[#names + 1] = n.name
    info[#info + 1] = { name = n.name, addr = n.addr, features = {}, roles = {} }
  end
  j:write { type = "run", version = STRATA_VERSION, argv = argv0, host = core.hostname(),
            started = core.utc(), files = s.files, output = xlsx, journal = jpath,
            cwd = core.realpath("."),
            fleet = { scheduler = "k8s", job = run, nodelist = table.concat(names, ","),
                      nodes = info, namespace = cfg.namespace } }
  j:write { type = "thresholds", criteria = require("strata.thresholds").records(s.criteria) }
  j:write { type = "severity", model = require("strata.severity").record(sevm) }

  local phases = plan.phases(order, {})
  local files, th, prof = fleetrun.inputs(s, o)
  local meta, deadline = fleetrun.meta(phases.node), 60
  for _, t in ipairs(meta) do deadline = deadline + t.timeout * t.cells end
  local ctx = { cfg = cfg, ns = cfg.namespace, k = k, j = j, poll = k.poll_s or 2,
                deadline = k.node_deadline_s or deadline,
                rctx = { site = s.site, file = o.site or "site" } }
  function ctx.err(t, reason)
    j:write { type = "node_error", node = t.node, phase = "node", reason = reason,
              tests = t.only, meta = meta, at = core.utc() }
  end
  io.stderr:write(("strata: fleet of %d nodes (%s) in namespace %s, run %s, journal %s\n")
    :format(#names, table.concat(names, ","), cfg.namespace, run, jpath))
  -- the rows this mode leaves to the runner Job, with why
  for ph, list in pairs(phases) do
    if ph ~= "node" then
      for _, t in ipairs(list) do
        j:write(fleetrun.synthetic_result(t, names[1], "node", "SKIP",
          "--fleet k8s runs each node's own rungs; pairs, incast, S3 "
            .. "and cluster-wide rows run in the runner Job (strata k8s runner)"))
      end
    end
  end
  node_jobs(ctx, s, o, run, names, phases, meta, files, th, prof)
  j:write { type = "end", ended = core.utc(), interrupted = false }
  j:close()
  return finish(cfg, k, o, run, jpath, xlsx, modes, sevm)
end

return M
