-- strata.k8s.act: a verdict on a Kubernetes node, as IBM Autopilot and
-- Google's scanner do it: labels, annotations and (for the severity
-- model's drain) a NoSchedule taint, through the API (docs/kubernetes.md,
-- "Acting on verdicts").  Opt-in: `--act label[,taint]`; `--dry-run`
-- prints the PATCH bodies.
--   labels       PREFIX/verdict = PASS|WARN|FAIL|ERROR|...
--                PREFIX/lowest-failed-rung = <layer> | none
--   annotations  PREFIX/verdict, PREFIX/lowest-failed-rung ("verbs R2 FAIL"),
--                PREFIX/run (when and which run), PREFIX/action (the
--                severity model's: drain, warn, none)
--   taint        key PREFIX/verdict, value FAIL, effect NoSchedule, while
--                the model says drain; removed when it no longer does.
--                Only that key is ever added or removed: a taint strata
--                did not set is never touched.
-- Labels and annotations: PATCH /api/v1/nodes/NAME as a JSON merge patch
-- (RFC 7386, application/merge-patch+json).  spec.taints is an atomic
-- list in the 1.33 schema (x-kubernetes-list-type: atomic): the node is
-- read, the list rebuilt with strata's entry added or removed, and sent
-- with the node's metadata.resourceVersion, so that a concurrent change
-- answers 409 Conflict instead of being overwritten.
local api = require "strata.k8s.api"
local sev = require "strata.severity"

local M = {}

M.DEFAULT_PREFIX = "strata"
M.TAINT_EFFECT = "NoSchedule"
local MODES = { label = true, taint = true, ["dry-run"] = true }

function M.modes(act, dry)
  local out = {}
  for m in tostring(act or ""):gmatch("[^,%s]+") do
    if not MODES[m] then
      error(require("strata.args").usage_error(
        ("--act %s: '%s' is not label, taint or dry-run (--fleet k8s)"):format(act, m)), 0)
    end
    out[m] = true
  end
  if dry then out["dry-run"] = true end
  if out["dry-run"] and not out.label and not out.taint then out.label, out.taint = true, true end
  return out
end

-- A label value: [A-Za-z0-9][-A-Za-z0-9_.]* ending alphanumeric, <= 63
-- (Kubernetes "Labels and Selectors"): "NOT RUN" -> "NOT-RUN".
local function label_value(v)
  v = tostring(v or ""):gsub("[^%w%-_.]", "-"):sub(1, 63)
  v = v:gsub("^[^%w]+", ""):gsub("[^%w]+$", "")
  return v
end
M.label_value = label_value

-- The merge patch of labels and annotations for one node's decision.
function M.label_patch(prefix, node, d, run_id)
  local lf = node.lowest_failed
  local rung = lf and lf.layer or "none"
  -- a node that passes with warnings (strata.verdict keeps it PASS) is
  -- WARN on its label when the model's decision came from a WARN, as
  -- Autopilot's PASS|WARN|EVICT labels tell the two apart
  local verdict = node.status
  if verdict == "PASS" and d.status == "WARN" then verdict = "WARN" end
  local why = lf and ("%s %s %s"):format(lf.layer, lf.id, lf.status) or "none"
  return { metadata = {
    labels = { [prefix .. "/verdict"] = label_value(verdict),
               [prefix .. "/lowest-failed-rung"] = label_value(rung) },
    annotations = { [prefix .. "/verdict"] = tostring(verdict),
                    [prefix .. "/lowest-failed-rung"] = why,
                    [prefix .. "/run"] = run_id,
                    [prefix .. "/action"] = d.action .. (d.id and (" (%s %s)"):format(d.id, d.status) or "") } } }
end

-- The node's taints with strata's added (want) or removed (not want);
-- nil when nothing changes.
function M.taints(node_obj, prefix, want)
  local key = prefix .. "/verdict"
  local out, had = {}, false
  for _, t in ipairs(((node_obj.spec or {}).taints) or {}) do
    if t.key == key then had = true
    else out[#out + 1] = t end
  end
  if want then out[#out + 1] = { key = key, value = "FAIL", effect = M.TAINT_EFFECT } end
  if want == had then return nil end
  return out
end

local function patch(cfg, name, body, get)
  return api.request(cfg, "PATCH", "/api/v1/nodes/" .. api.query_escape(name), body,
                     { content_type = "application/merge-patch+json" }, get)
end

-- Act on the nodes of a fleet model: { type = "act", modes, run, nodes =
-- { {node, action, test, status, op, done, why, command, error} } }.
function M.apply(cfg, sevmodel, fm, modes, run_id, opts, get)
  opts = opts or {}
  local prefix = opts.prefix or M.DEFAULT_PREFIX
  local out = { type = "act", run = run_id, scheduler = "k8s", nodes = {}, modes = {} }
  for m in pairs(modes) do out.modes[#out.modes + 1] = m end
  table.sort(out.modes)
  local log = opts.log or function(s) io.stderr:write(s, "\n") end
  local nodes = require("strata.fleet.act").nodes_of(fm)
  for i, n in ipairs(nodes) do
    local node = fm.nodes[i]
    local d = sev.decide(sevmodel, n.tests, n.status, n.reason)
    local row = { node = n.name, action = d.action, rule = d.rule, source = d.source,
                  test = d.id, status = d.status, done = nil }
    local done, cmds = {}, {}
    local ok, err = pcall(function()
      if modes.label then
        local body = M.label_patch(prefix, node, d, run_id)
        cmds[#cmds + 1] = "PATCH /api/v1/nodes/" .. n.name .. " " .. require("cjson").encode(body)
        if not modes["dry-run"] then patch(cfg, n.name, body, get); done[#done + 1] = "labelled" end
      end
      if modes.taint then
        local obj = api.request(cfg, "GET", "/api/v1/nodes/" .. api.query_escape(n.name), nil, nil, get)
        local t = M.taints(obj, prefix, d.action == "drain")
        if t then
          local body = { metadata = { resourceVersion = (obj.metadata or {}).resourceVersion },
                         spec = { taints = t } }
          cmds[#cmds + 1] = "PATCH /api/v1/nodes/" .. n.name .. " " .. require("cjson").encode(body)
          if not modes["dry-run"] then
            patch(cfg, n.name, body, get)
            done[#done + 1] = d.action == "drain" and "tainted" or "untainted"
          end
        end
      end
    end)
    row.command = table.concat(cmds, "; ")
    row.done = modes["dry-run"] and (#cmds > 0 and "dry-run" or nil)
      or (#done > 0 and table.concat(done, ",") or nil)
    if not ok then row.error = tostring(err) end
    row.why = #cmds == 0 and "nothing to do" or nil
    for _, c in ipairs(cmds) do log((modes["dry-run"] and "strata: would send: " or "strata: ") .. c) end
    if row.error then log("strata: " .. row.error) end
    out.nodes[#out.nodes + 1] = row
  end
  return out
end

return M
