-- strata k8s: run strata as Kubernetes workloads (docs/kubernetes.md).
--   render   the site's manifests (Namespace, RBAC, ConfigMaps, agent
--            DaemonSet, runner Job, PVC, Grafana dashboard) into a folder
--   discover the agent pods, through the API, as a node list (JSON)
--   runner   inside the runner Job: discover, run the runbook against the
--            agents, keep the workbook (PVC folder or the site's bucket)
local core = require "strata.core"
local sys = require "strata.sys"
local yaml = require "strata.yaml"
local cjson = require "cjson"
local args = require "strata.args"
local spec = require "strata.spec"
local command = require "strata.command"
local render = require "strata.k8s.render"
local api = require "strata.k8s.api"
local yamlout = require "strata.k8s.yamlout"

local M = {
  summary = "Kubernetes: render manifests, discover agents, the runner Job",
  usage = [[
usage: strata k8s render --site FILE [-o DIR] [--thresholds FILE] [PATH...]
         writes one manifest per file into DIR (default k8s/): the specs
         PATH (default specs/) and thresholds go into ConfigMaps
       strata k8s discover [--namespace NS] [--selector SEL]
         inside a pod: the agent pods as a node list (JSON on stdout)
       strata k8s runner --site FILE [--thresholds FILE] [--specs DIR]
                         [--results DIR] [--upload] [--only PATTERN]...
         the runner Job's command: discover, run, keep the workbook
Exit: render 0 written, 2 site/usage errors; runner as strata run.]],
}

local function read(path)
  local s, err = sys.try_read(path)
  return s or spec.error(path, "cannot read: %s", err)
end

local function write(path, text)
  local f, err = io.open(path, "wb")
  if not f then error("strata k8s: cannot write " .. path .. ": " .. err, 0) end
  f:write(text)
  f:close()
end

local function source_root()
  -- the folder holding specs/ and packaging/ (the source tree or bundle)
  local specs = require("strata.setup").default_paths()[1] or "specs"
  return (specs:gsub("/?specs/?$", "")), specs
end

-- Spec files under the given paths, relative to their spec root.
local function spec_files(paths)
  local out = {}
  for _, p in ipairs(paths) do
    for _, f in ipairs(spec.files { p }) do
      local rel = f:sub(#p + 2)
      if core.stat(p) == "file" then rel = f:match("([^/]+)$") end
      out[#out + 1] = { rel = rel, text = read(f) }
    end
  end
  table.sort(out, function(a, b) return a.rel < b.rel end)
  return out
end

local function cmd_render(argv)
  local o, pos = args.parse(argv, {
    ["--site"] = "site", ["-o"] = "output", ["--output"] = "output",
    ["--thresholds"] = "thresholds", ["--no-dashboard"] = { "no_dashboard", flag = true },
    ["-h"] = { "help", flag = true }, ["--help"] = { "help", flag = true } })
  if o.help then io.stdout:write(M.usage, "\n") return 0 end
  if not o.site then error(args.usage_error("k8s render needs --site FILE"), 0) end
  if core.stat(o.site) ~= "file" then spec.error(o.site, "site file not found") end
  local site, lines = spec.protect(yaml.load_file, o.site)
  local root, default_specs = source_root()
  local paths = #pos > 0 and pos or { default_specs }
  local tfile = o.thresholds or (paths[1] .. "/thresholds.yaml")
  if core.stat(tfile) ~= "file" then spec.error(tfile, "thresholds file not found") end
  local files = {}
  for _, f in ipairs(spec_files(paths)) do
    if f.rel ~= "site.example.yaml" and f.rel ~= "thresholds.yaml" then files[#files + 1] = f end
  end
  local dash
  if not o.no_dashboard then
    -- beside strata (bundle, image), else the source tree in use
    for _, d in ipairs { STRATA_HOME, root ~= "" and root or "." } do
      local dpath = d .. "/packaging/grafana/strata-rdma.json"
      if not dash and core.stat(dpath) == "file" then dash = read(dpath) end
    end
    if not dash then
      io.stderr:write("strata: no packaging/grafana/strata-rdma.json beside strata: "
                      .. "no dashboard ConfigMap\n")
    end
  end
  local ms = render.manifests {
    site = site, lines = lines, file = o.site, site_text = read(o.site),
    thresholds_text = read(tfile), spec_files = files, dashboard = dash }
  local dir = o.output or "k8s"
  core.mkdir_p(dir)
  for _, m in ipairs(ms) do
    write(dir .. "/" .. m.file, "# strata k8s render --site " .. o.site
          .. " (docs/kubernetes.md)\n" .. render.to_yaml(m))
  end
  io.stderr:write(("strata: %d manifests -> %s/ (kubectl apply -f %s/)\n"):format(#ms, dir, dir))
  return 0
end

local function cmd_discover(argv)
  local o = args.parse(argv, { ["--namespace"] = "namespace", ["--selector"] = "selector",
    ["-h"] = { "help", flag = true }, ["--help"] = { "help", flag = true } })
  if o.help then io.stdout:write(M.usage, "\n") return 0 end
  local cfg, why = api.in_cluster { namespace = o.namespace }
  if not cfg then
    io.stderr:write("strata: k8s discover: ", why, "\n")
    return 2
  end
  local a = api.agents(cfg, o.selector or render.AGENT_SELECTOR)
  io.stdout:write(cjson.encode(a), "\n")
  return 0
end

-- The site as the runner uses it: site.peers are the discovered agents
-- (by node name), site.rdma.peer the first agent on another node,
-- site.roce.senders the agents in node order, site.k8s.agents the list.
function M.derive_site(site, agents, own_node, token_path)
  local s = cjson.decode(cjson.encode(site))   -- a deep copy
  s.peers = s.peers or {}
  local senders, first = {}, nil
  for _, n in ipairs(agents.nodes) do
    s.peers[n.name] = { host = n.addr, port = n.port or 18515,
                        device = (s.rdma or {}).device, token_file = token_path }
    if n.name ~= own_node then
      senders[#senders + 1] = n.name
      first = first or n.name
    end
  end
  if first then
    s.rdma = s.rdma or {}
    s.rdma.peer = first
    s.roce = s.roce or {}
    s.roce.senders = senders
  end
  s.k8s = s.k8s or {}
  s.k8s.agents = agents.nodes
  return s
end

local function upload(site, files)
  local s3 = require "strata.s3"
  local s = site.s3 or {}
  if not s.endpoint or not s.bucket then
    error("strata k8s runner: --upload needs site.s3.endpoint and site.s3.bucket", 0)
  end
  local cl <close> = s3.client {
    endpoint = s.endpoint, region = s.region, addressing = s.addressing,
    credentials_file = s.credentials_file, profile = s.profile,
    access_key_env = s.access_key_env, secret_key_env = s.secret_key_env,
    session_token_env = s.session_token_env, ca_bundle = s.ca_bundle }
  local prefix = ((site.k8s or {}).output or {}).prefix or "strata/"
  for _, f in ipairs(files) do
    if core.stat(f) == "file" then
      local key = prefix .. f:match("([^/]+)$")
      local r = cl:request { method = "PUT", bucket = s.bucket, key = key, body = read(f) }
      if r.status ~= 200 then
        error(("strata k8s runner: PUT s3://%s/%s: HTTP %d %s"):format(
          s.bucket, key, r.status, tostring(r.code)), 0)
      end
      io.stderr:write(("strata: uploaded s3://%s/%s\n"):format(s.bucket, key))
    end
  end
end

local function cmd_runner(argv)
  local o = args.parse(argv, { ["--site"] = "site", ["--thresholds"] = "thresholds",
    ["--specs"] = "specs", ["--results"] = "results", ["--upload"] = { "upload", flag = true },
    ["--only"] = { "only", many = true }, ["--selector"] = "selector",
    ["-h"] = { "help", flag = true }, ["--help"] = { "help", flag = true } })
  if o.help then io.stdout:write(M.usage, "\n") return 0 end
  if not o.site then error(args.usage_error("k8s runner needs --site FILE"), 0) end
  local site = spec.protect(yaml.load_file, o.site)
  local cfg, why = api.in_cluster()
  if not cfg then
    io.stderr:write("strata: k8s runner: ", why, "\n")
    return 2
  end
  local agents = api.agents(cfg, o.selector or render.AGENT_SELECTOR)
  for _, n in ipairs(agents.not_ready) do
    io.stderr:write(("strata: agent %s not used: %s\n"):format(n.pod, n.why))
  end
  io.stderr:write(("strata: %d agents ready\n"):format(#agents.nodes))
  local results = o.results or "reports"
  core.mkdir_p(results)
  local derived = results .. "/site.derived.yaml"
  write(derived, yamlout.dump(M.derive_site(site, agents, os.getenv("STRATA_NODE"),
                                            render.TOKEN_DIR .. "/token")))
  local stamp = os.date("!%Y%m%dT%H%M%SZ")
  local xlsx = ("%s/strata-k8s-%s.xlsx"):format(results, stamp)
  local rargv = { "--site", derived, "-o", xlsx, "--json", (xlsx:gsub("%.xlsx$", ".json")) }
  if o.thresholds then rargv[#rargv + 1] = "--thresholds" rargv[#rargv + 1] = o.thresholds end
  for _, p in ipairs(o.only or {}) do rargv[#rargv + 1] = "--only" rargv[#rargv + 1] = p end
  if o.specs then rargv[#rargv + 1] = o.specs end
  local rc = require("strata.cmd.run").main(rargv)
  if o.upload then
    upload(site, { xlsx, (xlsx:gsub("%.xlsx$", ".jsonl")), (xlsx:gsub("%.xlsx$", ".json")) })
  end
  return rc
end

function M.main(argv)
  return command.guard(function()
    local sub = argv[1]
    local rest = {}
    for i = 2, #argv do rest[#rest + 1] = argv[i] end
    if sub == "render" then return cmd_render(rest)
    elseif sub == "discover" then return cmd_discover(rest)
    elseif sub == "runner" then return cmd_runner(rest)
    elseif sub == "-h" or sub == "--help" then io.stdout:write(M.usage, "\n") return 0 end
    error(args.usage_error("k8s: expected render, discover or runner"), 0)
  end)
end

return M
