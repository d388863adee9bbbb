-- strata.site.k8s: `strata site init --fleet k8s --site FILE`: the probe
-- of `strata site init --golden --json` on every node that runs a strata
-- agent, one Job pinned to each (spec.nodeName, as `strata run --fleet
-- k8s` pins its node checks: strata.k8s.fleet), its pod built by
-- strata.k8s.render.node_pod from FILE's k8s: section, the answer read
-- from the pod's log through the API, every Job deleted by name after.
-- Written against the API strata.k8s.api speaks (batch/v1 Job, PodList by
-- labelSelector job-name=, the pod log); never run against a real
-- cluster (docs/kubernetes.md): without an API server it says so.
local cjson = require "cjson"
local core = require "strata.core"
local spec = require "strata.spec"

local M = {}

local function job_of(ctx, i, node)
  local render = require "strata.k8s.render"
  local pod, meta = render.node_pod(ctx.rctx, ctx.k,
    { render.STRATA, "site", "init", "--golden", "--json" }, {}, {})
  pod.nodeName = node
  pod.nodeSelector, pod.affinity = nil, nil   -- pinned: no scheduling
  pod.automountServiceAccountToken = false
  local lab = { ["app.kubernetes.io/name"] = "strata",
                ["app.kubernetes.io/component"] = "site-init", ["strata/run"] = ctx.run }
  for k, v in pairs(lab) do meta.labels[k] = v end
  return { apiVersion = "batch/v1", kind = "Job",
    metadata = { name = ("%s-site-%d"):format(ctx.run, i), namespace = ctx.ns, labels = lab },
    spec = { backoffLimit = 0, activeDeadlineSeconds = ctx.deadline,
             ttlSecondsAfterFinished = 600, template = { metadata = meta, spec = pod } } }
end

-- The Job's pod, once ended, and the MARK line of its log.
local function answer(ctx, job, node)
  local api = require "strata.k8s.api"
  local MARK = require("strata.site.fleet").MARK
  local sel = api.query_escape("job-name=" .. job)
  local deadline = core.now() + ctx.deadline + 30
  while core.now() < deadline do
    local list = api.request(ctx.cfg, "GET", ("/api/v1/namespaces/%s/pods?labelSelector=%s")
                             :format(ctx.ns, sel))
    local pod = (list.items or {})[1]
    local ph = pod and (pod.status or {}).phase
    if ph == "Succeeded" or ph == "Failed" then
      local log = api.request(ctx.cfg, "GET", ("/api/v1/namespaces/%s/pods/%s/log")
        :format(ctx.ns, api.query_escape(pod.metadata.name)), nil, { raw = true })
      for line in log:gmatch("[^\n]+") do
        if line:sub(1, #MARK) == MARK then
          local ok, doc = pcall(cjson.decode, line:sub(#MARK + 1))
          if ok and type(doc) == "table" and type(doc.entries) == "table" then
            return { node = node, entries = doc.entries }
          end
        end
      end
      return nil, ("pod %s ended (%s) without an answer"):format(pod.metadata.name, ph)
    end
    core.sleep(ctx.poll)
  end
  return nil, ("no pod of Job %s ended within %d s"):format(job, ctx.deadline + 30)
end

-- -> answers, failed, what; or nil, nil, why (no API server: SKIP).
function M.collect(o)
  local api = require "strata.k8s.api"
  local cfg, why = api.in_cluster()
  if not cfg then
    return nil, nil, "SKIP: no Kubernetes API server here: " .. why
  end
  if not o.site then
    error(require("strata.args").usage_error("--fleet k8s needs --site FILE with its "
      .. "k8s: section (the image; docs/kubernetes.md)"), 0)
  end
  local site = spec.protect(require("strata.yaml").load_file, o.site)
  local k = type(site) == "table" and site.k8s
  if type(k) ~= "table" or not k.image then
    spec.error(o.site, "--fleet k8s: no k8s: section with its image")
  end
  local agents = api.agents(cfg, require("strata.k8s.render").AGENT_SELECTOR)
  local ctx = { cfg = cfg, ns = cfg.namespace, k = k, poll = k.poll_s or 2,
                deadline = k.node_deadline_s or 120, rctx = { site = site, file = o.site },
                run = ("strata-site-%s"):format(core.utc(nil, "%Y%m%dt%H%M%S")) }
  local answers, failed, made = {}, {}, {}
  local ok, err = pcall(function()
    for i, n in ipairs(agents.nodes) do
      local job = job_of(ctx, i, n.name)
      api.request(cfg, "POST", ("/apis/batch/v1/namespaces/%s/jobs"):format(ctx.ns), job)
      made[#made + 1] = { node = n.name, job = job.metadata.name }
    end
    for _, m in ipairs(made) do
      local a, bad = answer(ctx, m.job, m.node)
      if a then answers[#answers + 1] = a
      else failed[#failed + 1] = { node = m.node, why = bad } end
    end
  end)
  for _, m in ipairs(made) do   -- only what this made, by name
    pcall(api.request, cfg, "DELETE", ("/apis/batch/v1/namespaces/%s/jobs/%s"):format(ctx.ns,
      m.job), { kind = "DeleteOptions", apiVersion = "v1", propagationPolicy = "Background" })
  end
  if not ok then error(err, 0) end
  return answers, failed, ("the agents of namespace %s"):format(tostring(ctx.ns))
end

return M
