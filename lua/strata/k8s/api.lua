-- strata.k8s.api: the Kubernetes REST API from inside a pod, and agent
-- discovery as a node-list provider (the shape strata.fleet's Slurm
-- allocation has: { nodes = { {name=, addr=, hostname=, features=} } }).
--
-- In-cluster configuration is what client-go's rest.InClusterConfig reads
-- (kubernetes/client-go rest/config.go): KUBERNETES_SERVICE_HOST and
-- KUBERNETES_SERVICE_PORT, the bearer token at
-- /var/run/secrets/kubernetes.io/serviceaccount/token, the cluster CA at
-- .../ca.crt; the pod's namespace is .../namespace.  Requests:
--   GET /api/v1/namespaces/{ns}/pods?labelSelector=...   (PodList)
--   GET /api/v1/nodes/{name}                             (Node)
-- The transfer is C (strata.k8s -> engine/counters http_get); the token
-- never enters Lua.
local cjson = require "cjson"

local M = {}

M.SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

local read_file = require("strata.sys").try_read

-- { base =, token_file =, ca_bundle =, namespace = } for this pod, or nil
-- and why (outside a cluster: the caller SKIPs or exits 2 with it).
-- opts.sa_dir and opts.base override (tests, or kubectl proxy).
function M.in_cluster(opts)
  opts = opts or {}
  -- STRATA_K8S_SA_DIR: a token projected elsewhere (and the tests)
  local dir = opts.sa_dir or os.getenv("STRATA_K8S_SA_DIR") or M.SA_DIR
  local base = opts.base
  if not base then
    local host = os.getenv("KUBERNETES_SERVICE_HOST")
    local port = os.getenv("KUBERNETES_SERVICE_PORT")
    if not host or host == "" or not port or port == "" then
      return nil, "not inside a Kubernetes pod (KUBERNETES_SERVICE_HOST/PORT are not set)"
    end
    if host:find(":", 1, true) then host = "[" .. host .. "]" end
    base = "https://" .. host .. ":" .. port
  end
  local token = dir .. "/token"
  if not read_file(token) then
    return nil, "no service account token at " .. token
      .. " (automountServiceAccountToken off?)"
  end
  local ns = opts.namespace or os.getenv("STRATA_NAMESPACE")
  if not ns or ns == "" then
    ns = (read_file(dir .. "/namespace") or ""):match("^%s*(%S+)")
  end
  local ca = dir .. "/ca.crt"
  return { base = base, token_file = token,
           ca_bundle = read_file(ca) and ca or nil, namespace = ns,
           timeout = opts.timeout or 10 }
end

-- Percent-encoding of a query value (RFC 3986 unreserved kept).
local function qs(s)
  return (s:gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end
M.query_escape = qs

-- method path [body] -> decoded object.  A non-2xx answer raises with
-- the Kubernetes Status message ("pods is forbidden: User ... cannot
-- list") as { k8s_status = code, msg = text } (tostring: the text).
-- body: a table (sent as JSON with content_type, default
-- application/json) or nil.  opts.raw: return the body text (pod logs).
local ApiError = { __tostring = function(e) return e.msg end }
function M.request(cfg, method, path, body, opts, get)
  opts = opts or {}
  get = get or require("strata.k8s").get
  local status, text = get { url = cfg.base .. path, token_file = cfg.token_file,
                             ca_bundle = cfg.ca_bundle, timeout = opts.timeout or cfg.timeout,
                             method = method ~= "GET" and method or nil,
                             body = body and cjson.encode(body) or nil,
                             content_type = body and (opts.content_type or "application/json")
                                            or nil }
  if status >= 200 and status <= 299 and opts.raw then return text end
  local ok, obj = pcall(cjson.decode, text)
  if status < 200 or status > 299 then
    local msg = ok and type(obj) == "table" and obj.message or text:sub(1, 200)
    error(setmetatable({ k8s_status = status, msg = ("k8s: %s %s: HTTP %d: %s")
      :format(method, path, status, tostring(msg)) }, ApiError), 0)
  end
  if not ok or type(obj) ~= "table" then
    error(("k8s: %s %s: the answer is not JSON: %s"):format(method, path, tostring(obj)), 0)
  end
  return obj
end

-- GET path -> decoded object (raises as request).
function M.get(cfg, path, get)
  local ok, obj = pcall(M.request, cfg, "GET", path, nil, nil, get)
  if not ok then error(tostring(obj), 0) end
  return obj
end

function M.list_pods(cfg, selector, get)
  local path = ("/api/v1/namespaces/%s/pods"):format(qs(cfg.namespace))
  if selector then path = path .. "?labelSelector=" .. qs(selector) end
  local list = M.get(cfg, path, get)
  if list.kind ~= "PodList" then
    error(("k8s: GET %s: expected a PodList, got %s"):format(path, tostring(list.kind)), 0)
  end
  return list.items or {}
end

function M.get_node(cfg, name, get)
  local node = M.get(cfg, "/api/v1/nodes/" .. qs(name), get)
  if node.kind ~= "Node" then
    error(("k8s: node %s: expected a Node, got %s"):format(name, tostring(node.kind)), 0)
  end
  return node
end

local function ready(pod)
  local st = pod.status or {}
  if st.phase ~= "Running" then return false, "phase " .. tostring(st.phase) end
  for _, c in ipairs(st.conditions or {}) do
    if c.type == "Ready" then
      return c.status == "True", "Ready=" .. tostring(c.status)
    end
  end
  return false, "no Ready condition"
end
M.ready = ready

local function container_port(pod, name)
  for _, c in ipairs((pod.spec or {}).containers or {}) do
    for _, p in ipairs(c.ports or {}) do
      if p.name == name then return p.containerPort end
    end
  end
end

-- The agents as a node list: { nodes = { { name = <node>, pod =, addr =
-- <pod IP>, hostname = <node>, port =, features = {pod labels} } },
-- not_ready = { { pod =, why = } } }, in node-name order.
function M.agents(cfg, selector, get)
  local pods = M.list_pods(cfg, selector, get)
  local nodes, not_ready = {}, {}
  for _, p in ipairs(pods) do
    local name = (p.metadata or {}).name
    local ok, why = ready(p)
    local st = p.status or {}
    if ok and st.podIP and (p.spec or {}).nodeName then
      local feats = {}
      for k, v in pairs((p.metadata or {}).labels or {}) do feats[k .. "=" .. v] = true end
      nodes[#nodes + 1] = { name = p.spec.nodeName, hostname = p.spec.nodeName,
                            pod = name, addr = st.podIP, host_ip = st.hostIP,
                            port = container_port(p, "control"), features = feats }
    else
      not_ready[#not_ready + 1] = { pod = name, why = ok and "no podIP/nodeName" or why }
    end
  end
  table.sort(nodes, function(a, b) return a.name < b.name end)
  return { nodes = nodes, not_ready = not_ready, namespace = cfg.namespace,
           selector = selector }
end

-- The agents in the shape of strata.fleet's Slurm allocation ({ job,
-- nodes = { {name, addr, hostname, features} }, nodelist }), for the
-- fleet planner (roles by node name or feature: here a pod label
-- "key=value").  Raises like agents; opts as in_cluster's.
function M.allocation(selector, opts, get)
  local cfg, why = M.in_cluster(opts)
  if not cfg then error("k8s: " .. why, 0) end
  local a = M.agents(cfg, selector, get)
  local names = {}
  for _, n in ipairs(a.nodes) do names[#names + 1] = n.name end
  return { job = os.getenv("HOSTNAME"), nodes = a.nodes,
           nodelist = table.concat(names, ","), not_ready = a.not_ready }
end

-- The node's allocatable amount of an extended resource (Quantity as a
-- string: "63"), as a number; 0 when the node does not advertise it.
function M.allocatable(node, resource)
  local v = (((node.status or {}).allocatable) or {})[resource]
  return tonumber(v or 0) or 0
end

return M
