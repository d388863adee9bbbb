-- strata health: the fast health profile on this node, in the shape a
-- scheduler's health hook expects (LBNL NHC's: exit 0 and no output when
-- healthy, a one-line "ERROR ..." and a non-zero exit when not;
-- docs/fleet.md "Health profile").  It is `strata run` of the profile's
-- tests (every cell isolated, with its deadline), then the severity model
-- (strata.severity) on the result and, when asked, scontrol on this node
-- through strata.fleet.act (drain it; resume it if strata drained it).
local args = require "strata.args"
local command = require "strata.command"
local core = require "strata.core"

local M = {
  summary = "the fast health profile on this node (Slurm prolog/health check)",
  usage = [[
usage: strata health [--act drain,resume] [--dry-run] [--node NAME]
                     [--prometheus FILE.prom] [-o FILE.xlsx]
                     [--site FILE] [--profile FILE] [--set K=V]...
                     [--only ID]... [PATH...]
Runs the fast health profile (by default H1 H2 G1 G2 R1: the rungs that
take seconds; --only replaces the list) on this node and applies the
severity model (the site's severity:, else severity.yaml beside the
thresholds file).
  --act drain,resume   drain this node (scontrol, reason "strata ID STATUS
                       health <time>") when the model says drain; resume
                       it when it passes and strata drained it; a node
                       drained for any other reason is never touched
  --dry-run            print the scontrol command, run nothing
  --node NAME          this node's Slurm name (default $SLURMD_NODENAME,
                       else the short host name)
  --prometheus FILE    the result as node_exporter textfile gauges
  --k8s-act label[,taint]  inside a pod: this node's verdict labels and
                       annotations (and strata's NoSchedule taint while
                       the model says drain) through the Kubernetes API
                       (docs/kubernetes.md, "Acting on verdicts")
  -o FILE.xlsx         the workbook (default /tmp/strata-health/NODE.xlsx)
Exit (NHC's convention): 0 the node may run jobs (PASS, or a warning),
1 the model says drain, 2 usage or spec errors.]],
}

-- The default profile: the rungs a node answers in seconds.  A site's
-- golden/consistency test joins with --only (or its own list).
M.PROFILE = { "H1", "H2", "G1", "G2", "R1" }

local OPTIONS = setmetatable({ ["--act"] = "act", ["--dry-run"] = { "dry_run", flag = true },
                               ["--node"] = "node", ["--prometheus"] = "prometheus",
                               ["--k8s-act"] = "k8s_act" },
                             { __index = command.RUN_OPTIONS })

local function node_name(o)
  if o.node then return o.node end
  local n = os.getenv("SLURMD_NODENAME")
  if n and n ~= "" then return n end
  n = os.getenv("STRATA_NODE")
  if n and n ~= "" then return n end
  return (core.hostname():gsub("%..*$", ""))
end

-- The textfile: strata's run gauges (strata.report.prometheus, host = the
-- node) and what the severity model asks of it.
local function write_prom(path, m, node, d)
  m.run.host = node
  local text = require("strata.report.prometheus").text(m)
  text = text .. "# HELP strata_health_action what strata's severity model asks for the node "
    .. "(1 for the action it asks)\n# TYPE strata_health_action gauge\n"
  for _, a in ipairs({ "drain", "warn", "none" }) do
    text = text .. ('strata_health_action{action="%s",host="%s"} %d\n')
      :format(a, node, d.action == a and 1 or 0)
  end
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error("strata health: cannot write " .. tmp .. ": " .. err, 0) end
  f:write(text)
  f:close()
  assert(os.rename(tmp, path))
end

-- This node's verdict on its Node object (strata.k8s.act), as the fleet
-- model would have it: one node, its tests, its lowest failed rung.
local function k8s_act(o, m, sv, node)
  local api = require "strata.k8s.api"
  local kact = require "strata.k8s.act"
  local modes = kact.modes(o.k8s_act, o.dry_run)
  local cfg, why = api.in_cluster()
  if not cfg then
    io.stderr:write("strata health: --k8s-act: ", why, "\n")
    return
  end
  local tests, cols = {}, {}
  for _, t in ipairs(m.tests) do tests[t.id] = t; cols[#cols + 1] = { id = t.id } end
  local fm = { columns = cols, nodes = { { name = node, tests = tests, status = m.verdict,
                                           lowest_failed = m.lowest_failed } } }
  local prefix
  if o.site then
    local site = require("strata.yaml").load_file(o.site)
    prefix = ((site.k8s or {}).act or {}).prefix
  end
  kact.apply(cfg, sv or { rules = {} }, fm, modes,
             "health " .. core.utc(nil, "%Y-%m-%dT%H:%M:%SZ"), { prefix = prefix })
end

function M.main(argv)
  return command.guard(function()
    local o, paths = args.parse(argv, OPTIONS)
    if o.help then io.stdout:write(M.usage, "\n") return 0 end
    local act = require "strata.fleet.act"
    local modes = act.modes(o.act, o.dry_run)
    local node = node_name(o)
    local xlsx = o.output or ("/tmp/strata-health/%s.xlsx"):format(node:gsub("[^%w%-_.]", "_"))
    local run = { "-o", xlsx }
    for _, k in ipairs({ "site", "profile", "thresholds" }) do
      if o[k] then run[#run + 1] = "--" .. k; run[#run + 1] = o[k] end
    end
    for _, kv in ipairs(o.set or {}) do run[#run + 1] = "--set"; run[#run + 1] = kv end
    for _, id in ipairs(o.only or M.PROFILE) do run[#run + 1] = "--only"; run[#run + 1] = id end
    for _, p in ipairs(paths) do run[#run + 1] = p end
    local t0 = core.now()
    -- the run's own lines (progress, verdict) go to stderr: stdout stays
    -- NHC's one line
    local rc = require("strata.cmd.run").main(run)
    if rc == 2 then return 2 end
    local jpath = require("strata.outputs").journal_path(xlsx)
    local m = require("strata.verdict").build(require("strata.journal").read(jpath))
    local sv = require("strata.severity").of_model(m)
    local d = sv and sv.decision or { action = "none" }
    if o.prometheus then write_prom(o.prometheus, m, node, d) end
    if next(modes) then
      local res = act.apply(sv or { rules = {} }, { { name = node, tests = m.tests } }, modes,
                            "health " .. core.utc(nil, "%Y-%m-%dT%H:%M:%SZ"))
      local row = res.nodes[1]
      if row.error then io.stderr:write("strata health: ", row.command, ": ", row.error, "\n")
      elseif row.why then io.stderr:write("strata health: ", node, ": ", row.why, "\n") end
    end
    if o.k8s_act then k8s_act(o, m, sv, node) end
    io.stderr:write(("strata health: %s: %s in %.1f s\n"):format(node, d.action, core.now() - t0))
    if d.action == "drain" then
      io.stdout:write(("ERROR strata: Health check failed: %s %s (%s)%s\n"):format(
        d.id, d.status, d.layer or "node", d.reason and (": " .. tostring(d.reason)) or ""))
      return 1
    end
    if d.action == "warn" then
      io.stdout:write(("WARN strata: %s %s (%s)%s\n"):format(d.id, d.status, d.layer or "node",
        d.reason and (": " .. tostring(d.reason)) or ""))
    end
    return 0
  end)
end

return M
