-- strata.k8s.render: the site file's `k8s:` section as Kubernetes
-- manifests (docs/kubernetes.md says what each asks for and why):
--   00 Namespace            01 ServiceAccount (the runner's identity)
--   02 Role + RoleBinding   get/list pods in the namespace (discovery)
--   03 ClusterRole + Binding  get nodes (R8: the node's allocatable RDMA)
--   04-06 ConfigMaps        site file, thresholds, specs
--   07 DaemonSet            `strata serve` agents on the selected nodes
--   08 PersistentVolumeClaim  the results (unless they go to S3)
--   09 Job                  the runner: discovers the agents, runs the
--                           runbook, keeps the workbook
--   10 ConfigMap            the Grafana dashboard (packaging/grafana)
-- Secrets are never inlined: every `*_env` key of the site becomes an
-- environment variable from a Secret key of the same name, every
-- `token_file`/`credentials_file` a file mounted from that Secret.
local yamlout = require "strata.k8s.yamlout"
local spec = require "strata.spec"

local M = {}

M.LABELS = { ["app.kubernetes.io/name"] = "strata" }
M.AGENT_COMPONENT = "agent"
-- The label selector the runner lists agents by (also the DaemonSet's).
M.AGENT_SELECTOR = "app.kubernetes.io/name=strata,app.kubernetes.io/component=agent"
M.SITE_DIR = "/etc/strata/site"
M.THRESHOLDS_DIR = "/etc/strata/thresholds"
M.SPECS_DIR = "/etc/strata/specs"
M.TOKEN_DIR = "/etc/strata/token"
M.RESULTS_DIR = "/results"
M.STRATA = "/strata/bin/strata"   -- where the image (packaging/image) puts it

local L = yamlout.list

local function labels(component)
  local l = {}
  for k, v in pairs(M.LABELS) do l[k] = v end
  if component then l["app.kubernetes.io/component"] = component end
  return l
end

-- Where a site key is, for messages: "site.yaml:12: k8s.image".
local function where(ctx, tbl, key, path)
  local line = ctx.lines and ctx.lines[tbl] and ctx.lines[tbl][key]
  return ("%s%s: %s"):format(ctx.file, line and (":" .. line) or "", path)
end

local function need_string(ctx, tbl, key, path)
  local v = tbl[key]
  if type(v) ~= "string" or v == "" then
    spec.error(where(ctx, tbl, key, path), "must be a non-empty string")
  end
  return v
end

-- Every `*_env` value (an environment variable holding a secret) and every
-- `token_file`/`credentials_file` path in the site, sorted, deduplicated.
function M.secret_refs(site)
  local envs, files, seen = {}, {}, {}
  local function walk(t)
    for k, v in pairs(t) do
      if type(v) == "table" then walk(v)
      elseif type(k) == "string" and type(v) == "string" then
        if k:match("_env$") and not seen["e" .. v] then
          seen["e" .. v] = true
          envs[#envs + 1] = v
        elseif (k == "token_file" or k == "credentials_file") and not seen["f" .. v] then
          seen["f" .. v] = true
          files[#files + 1] = v
        end
      end
    end
  end
  walk(site)
  table.sort(envs)
  table.sort(files)
  return envs, files
end

-- A ConfigMap key for a path (keys allow [-._a-zA-Z0-9] only).
local function cm_key(path) return (path:gsub("/", "__")) end

local function basename(p) return p:match("([^/]+)$") end

local function k8s_site(ctx)
  local k = ctx.site.k8s
  if type(k) ~= "table" then
    spec.error(ctx.file, "no k8s: section (specs/site.example.yaml shows one)")
  end
  return k
end

local function resources(k, ctx, gpus)
  local req = {}
  local res = k.rdma_resource or "rdma/rdma_shared_device_a"
  local n = k.rdma_count or 1
  if math.type(n) ~= "integer" or n < 0 then
    spec.error(where(ctx, k, "rdma_count", "k8s.rdma_count"), "must be an integer >= 0")
  end
  if n > 0 then req[res] = tostring(n) end
  if gpus and gpus > 0 then req["nvidia.com/gpu"] = tostring(gpus) end
  if next(req) == nil then return {} end
  local lim = {}
  for a, b in pairs(req) do lim[a] = b end
  -- extended resources must have limits equal to requests
  return { requests = req, limits = lim }
end

local function gpu_count(ctx, tbl, key, path, def)
  local g = tbl[key]
  if g == nil then return def end
  if math.type(g) ~= "integer" or g < 0 then
    spec.error(where(ctx, tbl, key, path), "must be an integer >= 0")
  end
  return g
end

-- nodeSelector and affinity from k8s.nodes: { selector = {label: value},
-- names = [node, ...] } (names: a required node affinity on
-- kubernetes.io/hostname).
local function placement(ctx, k, pod)
  local nodes = k.nodes or {}
  if type(nodes) ~= "table" then
    spec.error(where(ctx, k, "nodes", "k8s.nodes"), "must be a table")
  end
  if nodes.selector then
    local sel = {}
    for a, b in pairs(nodes.selector) do sel[a] = tostring(b) end
    pod.nodeSelector = sel
  end
  if nodes.names then
    local names = {}
    for _, n in ipairs(nodes.names) do names[#names + 1] = tostring(n) end
    pod.affinity = { nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms = {
        { matchExpressions = { { key = "kubernetes.io/hostname", operator = "In",
                                 values = names } } } } } } }
  end
  if k.tolerations then pod.tolerations = k.tolerations end
end

-- hostNetwork, or a Multus network attachment (annotation on the pod).
local function network(ctx, k, pod, meta)
  local net = k.network or "host"
  if net == "host" then
    pod.hostNetwork = true
    pod.dnsPolicy = "ClusterFirstWithHostNet"
  elseif type(net) == "table" and type(net.multus) == "string" then
    meta.annotations = { ["k8s.v1.cni.cncf.io/networks"] = net.multus }
  else
    spec.error(where(ctx, k, "network", "k8s.network"),
               "must be 'host' or { multus: <namespace/network-attachment> }")
  end
end

local function secret_env(k, envs)
  local out = L {}
  for _, v in ipairs(envs) do
    out[#out + 1] = { name = v, valueFrom = { secretKeyRef = {
      name = k.secret or "strata-secrets", key = v } } }
  end
  return out
end

local function secret_files(k, files, mounts, volumes)
  if #files == 0 then return end
  volumes[#volumes + 1] = { name = "secret-files", secret = {
    secretName = k.secret or "strata-secrets", defaultMode = 256 } }
  for _, f in ipairs(files) do
    mounts[#mounts + 1] = { name = "secret-files", mountPath = f,
                            subPath = basename(f), readOnly = true }
  end
end

local function image(ctx, k)
  return need_string(ctx, k, "image", "k8s.image")
end

local function pod_common(ctx, k, pod)
  if k.image_pull_secret then
    pod.imagePullSecrets = { { name = k.image_pull_secret } }
  end
  placement(ctx, k, pod)
end

local function agent_daemonset(ctx, k, ns)
  local port = k.agent_port or 18515
  local meta = { labels = labels(M.AGENT_COMPONENT) }
  local pod = {
    containers = { {
      name = "agent", image = image(ctx, k),
      command = { M.STRATA, "serve", "--port", tostring(port),
                  "--token-file", M.TOKEN_DIR .. "/token" },
      ports = { { name = "control", containerPort = port } },
      resources = resources(k, ctx, gpu_count(ctx, k, "gpus", "k8s.gpus", 0)),
      securityContext = { capabilities = { add = { "IPC_LOCK" } } },
      volumeMounts = { { name = "token", mountPath = M.TOKEN_DIR, readOnly = true } },
    } },
    volumes = { { name = "token", secret = {
      secretName = k.token_secret or "strata-peer-token",
      items = { { key = "token", path = "token" } }, defaultMode = 256 } } },
  }
  pod_common(ctx, k, pod)
  network(ctx, k, pod, meta)
  return {
    apiVersion = "apps/v1", kind = "DaemonSet",
    metadata = { name = "strata-agent", namespace = ns, labels = labels(M.AGENT_COMPONENT) },
    spec = {
      selector = { matchLabels = labels(M.AGENT_COMPONENT) },
      template = { metadata = meta, spec = pod },
    },
  }
end

local function output(ctx, k)
  local o = k.output or { pvc = "strata-results" }
  if type(o) ~= "table" or (not o.pvc and not o.s3) then
    spec.error(where(ctx, k, "output", "k8s.output"),
               "must be { pvc: <claim name> } or { s3: true }")
  end
  return o
end

local function runner_job(ctx, k, ns)
  local envs, files = M.secret_refs(ctx.site)
  local o = output(ctx, k)
  local run = k.runner or {}
  local cmd = { M.STRATA, "k8s", "runner",
                "--site", M.SITE_DIR .. "/site.yaml",
                "--thresholds", M.THRESHOLDS_DIR .. "/thresholds.yaml",
                "--specs", M.SPECS_DIR, "--results", M.RESULTS_DIR }
  if o.s3 then cmd[#cmd + 1] = "--upload" end
  for _, p in ipairs(run.only or {}) do
    cmd[#cmd + 1] = "--only"
    cmd[#cmd + 1] = tostring(p)
  end
  local env = secret_env(k, envs)
  table.insert(env, 1, { name = "STRATA_NAMESPACE", valueFrom = {
    fieldRef = { fieldPath = "metadata.namespace" } } })
  table.insert(env, 2, { name = "STRATA_NODE", valueFrom = {
    fieldRef = { fieldPath = "spec.nodeName" } } })
  local mounts = {
    { name = "site", mountPath = M.SITE_DIR, readOnly = true },
    { name = "thresholds", mountPath = M.THRESHOLDS_DIR, readOnly = true },
    { name = "specs", mountPath = M.SPECS_DIR, readOnly = true },
    { name = "token", mountPath = M.TOKEN_DIR, readOnly = true },
    { name = "results", mountPath = M.RESULTS_DIR },
  }
  local spec_items = {}
  for _, p in ipairs(ctx.spec_files) do
    spec_items[#spec_items + 1] = { key = cm_key(p.rel), path = p.rel }
  end
  local volumes = {
    { name = "site", configMap = { name = "strata-site" } },
    { name = "thresholds", configMap = { name = "strata-thresholds" } },
    { name = "specs", configMap = { name = "strata-specs", items = spec_items } },
    { name = "token", secret = { secretName = k.token_secret or "strata-peer-token",
      items = { { key = "token", path = "token" } }, defaultMode = 256 } },
    o.pvc and { name = "results", persistentVolumeClaim = { claimName = o.pvc } }
          or { name = "results", emptyDir = {} },
  }
  secret_files(k, files, mounts, volumes)
  local meta = { labels = labels("runner") }
  local pod = {
    serviceAccountName = "strata-runner",
    restartPolicy = "Never",
    containers = { {
      name = "runner", image = image(ctx, k), command = cmd, env = env,
      resources = resources(k, ctx, gpu_count(ctx, run, "gpus", "k8s.runner.gpus", 0)),
      securityContext = { capabilities = { add = { "IPC_LOCK" } } },
      volumeMounts = mounts,
    } },
    volumes = volumes,
  }
  pod_common(ctx, k, pod)
  network(ctx, k, pod, meta)
  return {
    apiVersion = "batch/v1", kind = "Job",
    metadata = { name = "strata-runner", namespace = ns, labels = labels("runner") },
    spec = {
      backoffLimit = 0,
      activeDeadlineSeconds = run.deadline_s or 86400,
      ttlSecondsAfterFinished = run.ttl_s or 604800,
      template = { metadata = meta, spec = pod },
    },
  }
end

-- The pod of a per-node check (the --fleet k8s Jobs, the health
-- CronJob): the agents' resources, network and placement, the site's
-- secrets, STRATA_NODE from spec.nodeName, and a toleration of strata's
-- own taint (PREFIX/verdict), so that a node strata tainted is checked
-- again and can be let back in.  command: the container's argv.
function M.node_pod(ctx, k, command, mounts, volumes)
  local envs, files = M.secret_refs(ctx.site)
  local env = secret_env(k, envs)
  table.insert(env, 1, { name = "STRATA_NODE", valueFrom = {
    fieldRef = { fieldPath = "spec.nodeName" } } })
  table.insert(env, 2, { name = "STRATA_NAMESPACE", valueFrom = {
    fieldRef = { fieldPath = "metadata.namespace" } } })
  mounts, volumes = mounts or {}, volumes or {}
  secret_files(k, files, mounts, volumes)
  local meta = { labels = labels("node-check") }
  local pod = {
    restartPolicy = "Never",
    containers = { {
      name = "check", image = image(ctx, k), command = command, env = env,
      resources = resources(k, ctx, gpu_count(ctx, k, "gpus", "k8s.gpus", 0)),
      securityContext = { capabilities = { add = { "IPC_LOCK" } } },
      volumeMounts = mounts,
    } },
    volumes = volumes,
  }
  pod_common(ctx, k, pod)
  network(ctx, k, pod, meta)
  local prefix = ((k.act or {}).prefix) or "strata"
  local tol = L {}
  for _, t in ipairs(pod.tolerations or {}) do tol[#tol + 1] = t end
  tol[#tol + 1] = { key = prefix .. "/verdict", operator = "Exists", effect = "NoSchedule" }
  pod.tolerations = tol
  return pod, meta
end

-- The health profile on a schedule (k8s.health: { schedule:, nodes: N,
-- textfile_dir:, act: [label, taint] }): a CronJob whose Job is Indexed,
-- N pods, at most one per node (required pod anti-affinity on
-- kubernetes.io/hostname), each running `strata health` on its node and
-- writing the node_exporter textfile the dashboard reads.
local function health_cronjob(ctx, k, ns)
  local h = k.health
  if type(h) ~= "table" then
    spec.error(where(ctx, k, "health", "k8s.health"), "must be { schedule:, nodes: }")
  end
  local sched = need_string(ctx, h, "schedule", "k8s.health.schedule")
  local n = h.nodes
  if math.type(n) ~= "integer" or n < 1 then
    spec.error(where(ctx, h, "nodes", "k8s.health.nodes"), "must be an integer >= 1")
  end
  local dir = h.textfile_dir or "/var/lib/node_exporter/textfile_collector"
  local cmd = { M.STRATA, "health", "--site", M.SITE_DIR .. "/site.yaml",
                "--thresholds", M.THRESHOLDS_DIR .. "/thresholds.yaml",
                "-o", "/tmp/strata-health.xlsx", "--prometheus", "/textfile/strata-health.prom" }
  local acts = {}
  for _, a in ipairs(h.act or {}) do acts[#acts + 1] = tostring(a) end
  if #acts > 0 then cmd[#cmd + 1] = "--k8s-act"; cmd[#cmd + 1] = table.concat(acts, ",") end
  for _, id in ipairs(h.only or {}) do cmd[#cmd + 1] = "--only"; cmd[#cmd + 1] = tostring(id) end
  cmd[#cmd + 1] = M.SPECS_DIR
  local spec_items = {}
  for _, p in ipairs(ctx.spec_files) do
    spec_items[#spec_items + 1] = { key = cm_key(p.rel), path = p.rel }
  end
  local pod, meta = M.node_pod(ctx, k, cmd, {
      { name = "site", mountPath = M.SITE_DIR, readOnly = true },
      { name = "thresholds", mountPath = M.THRESHOLDS_DIR, readOnly = true },
      { name = "specs", mountPath = M.SPECS_DIR, readOnly = true },
      { name = "textfile", mountPath = "/textfile" } }, {
      { name = "site", configMap = { name = "strata-site" } },
      { name = "thresholds", configMap = { name = "strata-thresholds" } },
      { name = "specs", configMap = { name = "strata-specs", items = spec_items } },
      { name = "textfile", hostPath = { path = dir, type = "DirectoryOrCreate" } } })
  pod.serviceAccountName = "strata-runner"
  meta.labels = labels("health")
  pod.affinity = pod.affinity or {}
  pod.affinity.podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { {
    labelSelector = { matchLabels = labels("health") },
    topologyKey = "kubernetes.io/hostname" } } }
  return {
    apiVersion = "batch/v1", kind = "CronJob",
    metadata = { name = "strata-health", namespace = ns, labels = labels("health") },
    spec = {
      schedule = sched, concurrencyPolicy = "Forbid",
      successfulJobsHistoryLimit = 3, failedJobsHistoryLimit = 3,
      jobTemplate = { metadata = { labels = labels("health") }, spec = {
        completionMode = "Indexed", completions = n, parallelism = n,
        backoffLimit = 0, activeDeadlineSeconds = h.deadline_s or 600,
        ttlSecondsAfterFinished = h.ttl_s or 86400,
        template = { metadata = meta, spec = pod } } },
    },
  }
end

-- RBAC asked for, and only then: k8s.act (node labels/taint: get and
-- patch nodes, cluster-wide: nodes are not namespaced) and k8s.fleet
-- (`strata run --fleet k8s` makes and removes its own ConfigMaps and
-- Jobs in the namespace and reads their pods' logs).
local function act_rbac(ns, add)
  local cr = "strata-node-labeller-" .. ns
  add("12-clusterrole-act.yaml", { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "ClusterRole", metadata = { name = cr, labels = labels("runner") },
    rules = { { apiGroups = { "" }, resources = { "nodes" }, verbs = { "get", "patch" } } } })
  add("12-clusterrolebinding-act.yaml", { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "ClusterRoleBinding", metadata = { name = cr, labels = labels("runner") },
    roleRef = { apiGroup = "rbac.authorization.k8s.io", kind = "ClusterRole", name = cr },
    subjects = { { kind = "ServiceAccount", name = "strata-runner", namespace = ns } } })
end

local function fleet_rbac(ns, add, meta)
  add("13-role-fleet.yaml", { apiVersion = "rbac.authorization.k8s.io/v1", kind = "Role",
    metadata = meta("strata-fleet", "runner"),
    rules = {
      { apiGroups = { "" }, resources = { "configmaps" }, verbs = { "create", "delete" } },
      { apiGroups = { "batch" }, resources = { "jobs" }, verbs = { "create", "delete" } },
      { apiGroups = { "" }, resources = { "pods" }, verbs = { "get", "list" } },
      { apiGroups = { "" }, resources = { "pods/log" }, verbs = { "get" } } } })
  add("13-rolebinding-fleet.yaml", { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "RoleBinding", metadata = meta("strata-fleet", "runner"),
    roleRef = { apiGroup = "rbac.authorization.k8s.io", kind = "Role", name = "strata-fleet" },
    subjects = { { kind = "ServiceAccount", name = "strata-runner", namespace = ns } } })
end

-- ctx = { site =, lines =, file = (site path), site_text =,
--         thresholds_text =, spec_files = { {rel =, text =} }, dashboard = }
-- -> list of { file = "07-daemonset-agent.yaml", object = {...} }.
function M.manifests(ctx)
  local k = k8s_site(ctx)
  local ns = need_string(ctx, k, "namespace", "k8s.namespace")
  if not ns:match("^[a-z0-9][-a-z0-9]*$") or ns:match("%-$") or #ns > 63 then
    spec.error(where(ctx, k, "namespace", "k8s.namespace"),
               "'%s' is not a DNS label (RFC 1123: a-z, 0-9, '-', at most 63)", ns)
  end
  local out = {}
  local function add(file, obj) out[#out + 1] = { file = file, object = obj } end
  local function meta(name, component)
    return { name = name, namespace = ns, labels = labels(component) }
  end
  add("00-namespace.yaml", { apiVersion = "v1", kind = "Namespace",
    metadata = { name = ns, labels = labels() } })
  add("01-serviceaccount.yaml", { apiVersion = "v1", kind = "ServiceAccount",
    metadata = meta("strata-runner", "runner") })
  add("02-role.yaml", { apiVersion = "rbac.authorization.k8s.io/v1", kind = "Role",
    metadata = meta("strata-runner", "runner"),
    rules = { { apiGroups = { "" }, resources = { "pods" }, verbs = { "get", "list" } } } })
  add("02-rolebinding.yaml", { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "RoleBinding", metadata = meta("strata-runner", "runner"),
    roleRef = { apiGroup = "rbac.authorization.k8s.io", kind = "Role", name = "strata-runner" },
    subjects = { { kind = "ServiceAccount", name = "strata-runner", namespace = ns } } })
  local cr = "strata-node-reader-" .. ns
  add("03-clusterrole.yaml", { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "ClusterRole", metadata = { name = cr, labels = labels("runner") },
    rules = { { apiGroups = { "" }, resources = { "nodes" }, verbs = { "get" } } } })
  add("03-clusterrolebinding.yaml", { apiVersion = "rbac.authorization.k8s.io/v1",
    kind = "ClusterRoleBinding", metadata = { name = cr, labels = labels("runner") },
    roleRef = { apiGroup = "rbac.authorization.k8s.io", kind = "ClusterRole", name = cr },
    subjects = { { kind = "ServiceAccount", name = "strata-runner", namespace = ns } } })
  add("04-configmap-site.yaml", { apiVersion = "v1", kind = "ConfigMap",
    metadata = meta("strata-site"), data = { ["site.yaml"] = ctx.site_text } })
  add("05-configmap-thresholds.yaml", { apiVersion = "v1", kind = "ConfigMap",
    metadata = meta("strata-thresholds"),
    data = { ["thresholds.yaml"] = ctx.thresholds_text } })
  local sd, bytes = {}, 0
  for _, p in ipairs(ctx.spec_files) do
    sd[cm_key(p.rel)] = p.text
    bytes = bytes + #p.text + #p.rel
  end
  -- the API server refuses a ConfigMap over 1 MiB (kubernetes.io, ConfigMaps)
  if bytes > 1048576 then
    spec.error("specs", "%d bytes of specs: more than a ConfigMap holds (1 MiB); "
               .. "render fewer spec paths", bytes)
  end
  add("06-configmap-specs.yaml", { apiVersion = "v1", kind = "ConfigMap",
    metadata = meta("strata-specs"), data = sd })
  add("07-daemonset-agent.yaml", agent_daemonset(ctx, k, ns))
  local o = output(ctx, k)
  if o.pvc then
    local pvc = { accessModes = { "ReadWriteOnce" },
                  resources = { requests = { storage = tostring(o.size or "1Gi") } } }
    if o.storage_class then pvc.storageClassName = o.storage_class end
    if o.create ~= false then
      add("08-pvc-results.yaml", { apiVersion = "v1", kind = "PersistentVolumeClaim",
        metadata = meta(o.pvc, "runner"), spec = pvc })
    end
  end
  add("09-job-runner.yaml", runner_job(ctx, k, ns))
  if ctx.dashboard then
    add("10-configmap-grafana.yaml", { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "strata-grafana-dashboard", namespace = ns,
                   labels = labels("monitoring") },
      data = { ["strata-rdma.json"] = ctx.dashboard } })
  end
  if k.health then add("11-cronjob-health.yaml", health_cronjob(ctx, k, ns)) end
  if k.act then act_rbac(ns, add) end
  if k.fleet then fleet_rbac(ns, add, meta) end
  return out
end

function M.to_yaml(m) return yamlout.dump(m.object) end

return M
