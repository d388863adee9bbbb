-- strata.lib.s3preflight: the read-only preflight of the S3-over-RDMA
-- paths (specs/s3rdma/preflight.lua: E3P before the host-memory rows, E4P
-- before the GPU-memory rows).  Each known cause of "the transfer works,
-- the RDMA counters stay at zero" or of a crash is one named check with a
-- fix hint; nothing on the site is changed.
--
-- The causes are MinIO's (minio/rdma-training @9d96166
-- docs/troubleshooting.md, sections 1-6); the cufile.json keys are
-- NVIDIA's (docs.nvidia.com/gpudirect-storage/cuobject/cuObjClient-api:
-- "RDMA Peer Memory Configuration", "RDMA Multipathing"; the sample
-- cuobj.json NVIDIA ships with cuObject, minio/minio-cpp @769130e
-- vendor/cuobj/cuobj.json): properties.rdma_dev_addr_list (IP addresses,
-- or RDMA device / interface names), properties.rdma_peer_type
-- ("dmabuf" | "nvidia_peermem", default nvidia_peermem; the variable
-- CUFILE_DMABUF_ENABLE=TRUE|FALSE overrides it), properties.use_pci_p2pdma.
-- The file is $CUFILE_ENV_PATH_JSON, else /etc/cufile.json; it may hold
-- // comments.
--
-- M.gather(t, s, memory) collects the facts, M.facts(f) turns them into
-- one metric per check (the fact a criterion of E3P/E4P in
-- specs/thresholds.yaml compares) with its detail and fix hint.  facts is
-- pure: tests feed it facts.  Nothing here decides ok or FAIL.
local cjson = require "cjson"

local M = {}
local GiB = 1073741824

local TS = "minio/rdma-training docs/troubleshooting.md"

-- What the endpoint is, from what it answers (issue 27): MinIO's server
-- sets "Server: MinIO" on every S3 reply (minio/minio @7aac2a2
-- cmd/api-headers.go:54 setCommonHeaders, xhttp.ServerInfo = "Server"
-- internal/http/headers.go:35, MinioStoreName = "MinIO"
-- cmd/build-constants.go:59; older servers "MinIO/"+ReleaseTag, @033bd47
-- cmd/api-headers.go), and AIStor's S3-over-RDMA counters are at
-- /minio/metrics/v3/api/rdma (rdma-training metrics.py RDMA_METRICS_PATH).
-- An endpoint with both speaks AIStor's S3 over RDMA: cuObject's protocol.
M.RDMA_METRICS_PATH = "/minio/metrics/v3/api/rdma"

-- server: the Server header (nil: none); metrics: the HTTP status of the
-- RDMA metrics path (nil: not asked).  Returns {what, provider, why}:
-- provider is the one the endpoint speaks, nil when not known.
function M.speaks(server, metrics)
  local minio = type(server) == "string"
    and (server == "MinIO" or server:find("^MinIO/") ~= nil)
  local path = metrics and metrics ~= 404
  if minio and path then
    return { what = "AIStor", provider = "cuobject",
             why = ("Server: %s and %s answers HTTP %d: MinIO AIStor with "
                    .. "S3 over RDMA, which speaks NVIDIA cuObject"):format(
                    server, M.RDMA_METRICS_PATH, metrics) }
  elseif minio then
    return { what = "MinIO", why = ("Server: %s, but %s %s: no S3 over RDMA "
             .. "seen"):format(server, M.RDMA_METRICS_PATH, metrics
             and ("answers HTTP " .. metrics) or "not asked") }
  end
  return { what = server or "unknown", why = ("Server: %s: not MinIO"):format(
           server or "(none)") }
end

-- Ask the endpoint (read-only: HEAD / and GET of the metrics path) with
-- the site's client.  Returns M.speaks's answer, or {err} when it did not
-- answer.
function M.endpoint(s)
  if type(s) ~= "table" or not s.endpoint or s.endpoint == "" then
    return { err = "no endpoint named" }
  end
  local ok, r = pcall(function()
    local cl = require("strata.s3").client {
      endpoint = s.endpoint, region = s.region, addressing = s.addressing,
      credentials_file = s.credentials_file, profile = s.profile,
      access_key_env = s.access_key_env, secret_key_env = s.secret_key_env,
      ca_bundle = s.ca_bundle, timeout = 5 }
    local head = cl:request { method = "HEAD", path = "/" }
    local okm, m = pcall(cl.request, cl, { method = "GET",
                                          path = M.RDMA_METRICS_PATH })
    return M.speaks(head.headers and head.headers.server,
                    okm and m.status or nil)
  end)
  if not ok then return { err = (tostring(r):gsub("^[^%s]-%.lua:%d+: ", "")) } end
  return r
end

-- The provider: the site's, else the one the endpoint speaks, else "rc"
-- (hipobj-rc-v2).  Returns it and why.
function M.provider(s, ep)
  if s.provider then return s.provider, "site s3rdma.provider" end
  if ep and ep.provider then
    return ep.provider, "detected: " .. ep.why
  end
  return "rc", "default" .. (ep and (ep.why or ep.err) and
    ("; endpoint: " .. (ep.why or ep.err)) or "")
end

-- Drop // comments outside strings (NVIDIA's sample files carry them).
function M.strip_comments(text)
  local out, i, n, instr = {}, 1, #text, false
  while i <= n do
    local c = text:sub(i, i)
    if instr then
      out[#out + 1] = c
      if c == "\\" then out[#out + 1] = text:sub(i + 1, i + 1); i = i + 1
      elseif c == '"' then instr = false end
    elseif c == '"' then
      instr = true
      out[#out + 1] = c
    elseif c == "/" and text:sub(i + 1, i + 1) == "/" then
      while i <= n and text:sub(i, i) ~= "\n" do i = i + 1 end
      out[#out + 1] = "\n"
    else
      out[#out + 1] = c
    end
    i = i + 1
  end
  return table.concat(out)
end

-- The cuFile configuration: {path, props} or {path, err}.
function M.read_cufile(env)
  env = env or os.getenv
  local path = env("CUFILE_ENV_PATH_JSON")
  local via = "CUFILE_ENV_PATH_JSON"
  if not path or path == "" then path, via = "/etc/cufile.json", "default" end
  local f, err = io.open(path, "r")
  if not f then return { path = path, via = via, err = err } end
  local text = f:read("a")
  f:close()
  local ok, doc = pcall(cjson.decode, M.strip_comments(text))
  if not ok or type(doc) ~= "table" then
    return { path = path, via = via, err = "not valid JSON: "
             .. tostring(doc):gsub("^.-: ", "") }
  end
  return { path = path, via = via,
           props = type(doc.properties) == "table" and doc.properties or {} }
end

-- Active RoCE ports: {{device, port, netdev, addrs = {ip = true}}}.
function M.roce_ports(inventory)
  local out = {}
  for _, d in ipairs(inventory or {}) do
    for _, p in ipairs(d.ports or {}) do
      if p.state == "PORT_ACTIVE" and p.link_layer == "Ethernet" then
        local e = { device = d.name, port = p.port, netdev = p.netdev,
                    addrs = {} }
        for _, g in ipairs(p.gids or {}) do
          if g.ipv4 then e.addrs[g.ipv4] = true end
          if g.gid and not g.gid:find("^fe80") and not g.ipv4 then
            e.addrs[g.gid] = true
          end
        end
        out[#out + 1] = e
      end
    end
  end
  return out
end

local function fmt_bytes(n)
  if n < 0 then return "unlimited" end
  if n >= GiB then return ("%.1f GiB"):format(n / GiB) end
  return ("%d KiB"):format(n // 1024)
end

local INF = math.maxinteger   -- RLIM_INFINITY, as a byte count

-- One row: the check's name, the metric that carries its fact, the fact
-- (what a criterion compares), the detail a reader needs, the fix for
-- when the criterion fails and where the cause is documented.
local function fact(list, name, metric, value, detail, fix, source)
  list[#list + 1] = { name = name, metric = metric, value = value,
                      detail = tostring(detail), fix = fix or "",
                      source = source or "" }
  return list[#list]
end

-- the endpoint and the provider (shown, no criterion)
local function device_facts(c, f, na)
  fact(c, "endpoint", nil, nil, f.endpoint and (f.endpoint.why
       or f.endpoint.err) or "not asked")
  -- (the rows E3P/E4P gate run with this provider: lib/s3rdma.phase)
  fact(c, "provider", "provider", tostring(f.provider), ("%s (%s)"):format(
       tostring(f.provider), f.provider_why or "given"))

  -- 0. an RDMA device at all (else the whole path SKIPs)
  if f.dc then
    fact(c, "rdma_device", "rdma_device", f.device or "first device",
         f.device or "first device")
  else
    c.absent[#c.absent + 1] = fact(c, "rdma_device", "rdma_device", na,
                                   f.dc_err or "no RDMA device")
  end
end

-- 1. DC transport: cuObject's CUOBJ_PROTO_RDMA_DC_V1 needs it
local function dc_fact(c, f, cuobj, na, why_na)
  local dc_fix = "cuObject (AIStor's S3 over RDMA) needs the DC transport "
    .. "of an NVIDIA ConnectX/BlueField NIC; on irdma (E810) or rxe use "
    .. "provider \"rc\" (hipobj-rc-v2) or a ConnectX"
  if not f.dc then
    fact(c, "dc_transport", "dc_transport", na, f.dc_err or "no RDMA device")
  elseif not cuobj then
    fact(c, "dc_transport", "dc_transport", na, why_na .. "; " .. f.dc.why)
  else
    local detail = f.dc.why
    if f.dc.dc ~= true then
      -- plain words (issue 27): cuObject's only protocol is DC
      detail = ("this site's NIC cannot carry AIStor's S3 over RDMA: %s "
        .. "(cuObject speaks only CUOBJ_PROTO_RDMA_DC_V1, RDMA Dynamically "
        .. "Connected, docs.nvidia.com/gpudirect-storage/cuobject/"
        .. "cuObjClient-api; its README: \"currently only Mellanox NICS with "
        .. "DC transport is supported\")"):format(f.dc.why)
    end
    local row = fact(c, "dc_transport", "dc_transport", f.dc.dc == true,
                     detail, dc_fix, "engine/verbs/dc.h (UCX uct_ib_mlx5_check_dc)")
    -- the words the Summary carries when the criterion fails (t.explain)
    row.explain = f.dc.dc ~= true or nil
  end
end

-- 2-5. cuFile's configuration (cuObject registers through cuFile)
local function cufile_facts(c, f, cuobj, na, why_na)
  local cf = f.cufile or {}
  local props = cf.props
  if not cuobj then
    fact(c, "cufile.config", "cufile.config_read", na, why_na)
  elseif not props then
    fact(c, "cufile.config", "cufile.config_read", false, (cf.path or "?")
         .. ": " .. tostring(cf.err), "point CUFILE_ENV_PATH_JSON at a "
         .. "cufile.json (or install /etc/cufile.json)", TS .. " 1")
  else
    fact(c, "cufile.config", "cufile.config_read", true,
         cf.path .. " (" .. cf.via .. ")")
  end
  local list_fix = "list the IPv4 addresses of the PORT_ACTIVE RoCE ports "
    .. "(MinIO's 12-cufile-config.sh derives them from "
    .. "/sys/class/infiniband/*/device/net/*)"
  local no_config = "no cuFile configuration"
  if cuobj and props then
    local list = props.rdma_dev_addr_list
    local names, matched, unmatched = {}, {}, {}
    for _, p in ipairs(f.ports or {}) do
      names[p.device] = p
      if p.netdev then names[p.netdev] = p end
    end
    if type(list) ~= "table" or #list == 0 then
      fact(c, "cufile.rdma_dev_addr_list", "cufile.addr_on_active_port",
           false, "empty (cuFile then registers nothing for RDMA and every "
           .. "transfer goes over HTTP without an error)", list_fix, TS .. " 1")
    else
      for _, a in ipairs(list) do
        local hit = names[a]
        for _, p in ipairs(f.ports or {}) do
          if p.addrs[a] then hit = p end
        end
        if hit then matched[#matched + 1] = a .. "=" .. hit.device
        else unmatched[#unmatched + 1] = tostring(a) end
      end
      local v = ("%s; matches an active RoCE port: %s%s"):format(
        table.concat(list, ","), #matched > 0 and table.concat(matched, ",")
        or "none", #unmatched > 0 and ("; no active RoCE port has "
        .. table.concat(unmatched, ",")) or "")
      fact(c, "cufile.rdma_dev_addr_list", "cufile.addr_on_active_port",
           #matched > 0, v, "use addresses (or device names) of PORT_ACTIVE "
           .. "RoCE ports", TS .. " 1")
    end
    local peer, how = props.rdma_peer_type or "nvidia_peermem", "properties"
    if props.rdma_peer_type == nil then how = "default" end
    local env = f.dmabuf_env and f.dmabuf_env:upper()
    if env == "TRUE" then peer, how = "dmabuf", "CUFILE_DMABUF_ENABLE=TRUE"
    elseif env == "FALSE" then peer, how = "nvidia_peermem", "CUFILE_DMABUF_ENABLE=FALSE"
    end
    fact(c, "cufile.rdma_peer_type", "cufile.rdma_peer_type", tostring(peer),
         ("%s (%s)"):format(peer, how),
         "set \"rdma_peer_type\": \"dmabuf\" in properties", TS .. " 1")
    local p2p = props.use_pci_p2pdma
    fact(c, "cufile.use_pci_p2pdma", "cufile.use_pci_p2pdma",
         p2p == nil and "unset" or p2p, tostring(p2p),
         "set \"use_pci_p2pdma\": true in properties", TS .. " 1")
  else
    local v = cuobj and no_config or na
    local d = cuobj and no_config or why_na
    fact(c, "cufile.rdma_dev_addr_list", "cufile.addr_on_active_port", v, d,
         cuobj and "see cufile.config", cuobj and TS .. " 1")
    fact(c, "cufile.rdma_peer_type", "cufile.rdma_peer_type", v, d,
         cuobj and "see cufile.config", cuobj and TS .. " 1")
    fact(c, "cufile.use_pci_p2pdma", "cufile.use_pci_p2pdma", v, d,
         cuobj and "see cufile.config", cuobj and TS .. " 1")
  end
end

-- 6. the libcufile the loader picks for libcufile.so.0
local function libcufile_fact(c, h, cuobj, na, why_na)
  if not cuobj then
    fact(c, "libcufile.symbol", "libcufile.rdma_desc_str", na, why_na)
  elseif not h.cufile_loaded then
    fact(c, "libcufile.symbol", "libcufile.rdma_desc_str", "not loadable",
         "libcufile.so.0 not loadable: " .. tostring(h.cufile_why),
         "install cuFile >= 1.18 (CUDA 13.1 or the GDS package)", TS .. " 2")
  else
    fact(c, "libcufile.symbol", "libcufile.rdma_desc_str",
         h.cufile_desc_str == true,
         ("%s (cuFileGetVersion %s) %s cuFileRDMADescStrGet"):format(
           h.cufile_path or "?", tostring(h.cufile_version),
           h.cufile_desc_str and "exports" or "LACKS"),
         "cuObject needs cuFile >= 1.18; an older copy with the same SONAME "
         .. "loaded first (a PyTorch wheel's 1.15 under site-packages/"
         .. "nvidia) wins: LD_PRELOAD the 1.18 libcufile", TS .. " 2")
  end
end

-- 7. locked memory: RDMA pins every buffer (ulimit_l_bytes against
-- pinned_bytes, the criterion's own reference)
local function memlock_fact(c, f, h, na)
  if h.memlock == nil then
    c.absent[#c.absent + 1] = fact(c, "ulimit_l", "ulimit_l_bytes", na,
                                   "not read")
  else
    fact(c, "ulimit_l", "ulimit_l_bytes", h.memlock < 0 and INF or h.memlock,
         ("%s (this run pins %s)"):format(fmt_bytes(h.memlock),
         fmt_bytes(f.need_lock or 0)), "ulimit -l unlimited (limits.conf "
         .. "memlock, or LimitMEMLOCK=infinity for a service)",
         "minio/rdma-training docs/01-setup-aistor-rdma.md")
  end
end

-- 8. GPU peer memory: nvidia_peermem or dma-buf
local function peer_memory_fact(c, f, h, gpu, na)
  if not gpu then
    fact(c, "gpu.peer_memory", "gpu.peer_memory", na, "n/a (host memory)")
  elseif not f.cuda or not f.cuda.devices then
    c.absent[#c.absent + 1] = fact(c, "gpu.peer_memory", "gpu.peer_memory",
      na, "no CUDA GPU: " .. tostring(f.cuda and f.cuda.err or "not probed"))
  else
    local dmabuf = {}
    for _, d in ipairs(f.cuda.devices) do
      if d.dmabuf then dmabuf[#dmabuf + 1] = "GPU" .. d.index end
    end
    local how = {}
    if h.peermem then how[#how + 1] = "nvidia_peermem" end
    if #dmabuf > 0 then how[#how + 1] = "dmabuf" end
    fact(c, "gpu.peer_memory", "gpu.peer_memory",
         #how > 0 and table.concat(how, "+") or "none",
         ("nvidia_peermem %s; CUDA dma-buf %s"):format(
           h.peermem and "loaded" or "not loaded",
           #dmabuf > 0 and table.concat(dmabuf, ",") or "on no GPU"),
         "load nvidia_peermem, or use a driver/kernel with dma-buf (then "
         .. "rdma_peer_type dmabuf)", TS .. " 1")
  end
end

-- 9. cuObject's 4 GiB registration limit (the criterion holds it), the
-- properties of strata's own engine and the bytes this run pins
local function engine_facts(c, f, gpu)
  local mr = f.max_registration or 0
  fact(c, "registration_limit", "largest_buffer_bytes", mr,
       ("largest single buffer %s"):format(fmt_bytes(mr)),
       "split: multipart parts or ranges of <= 2 GiB (strata refuses "
       .. ">= 4 GiB with cuObject)", TS .. " 4")

  -- 10-11. properties of strata's own engine (shown, no criterion: other
  -- clients crash on these)
  fact(c, "cuda_context_per_thread", nil, nil, gpu and "strata binds the "
       .. "GPU's context in each worker thread (engine/s3rdma/workload.c, "
       .. "cuda_bind)" or "n/a (host memory)",
       "torch.cuda.set_device() in every thread before its first RDMA call",
       TS .. " 5")
  fact(c, "one_buffer_per_stream", nil, nil, ("%d stream(s), %d buffer(s): "
       .. "one registered buffer per worker"):format(f.concurrency or 1,
       f.concurrency or 1), "one destination buffer per concurrent stream",
       TS .. " 6")
  c[#c + 1] = { name = "pinned_bytes", metric = "pinned_bytes",
                value = f.need_lock or 0, detail = "concurrency x buffer",
                fix = "", source = "" }
end

-- f: {provider, memory, device, dc = {dc, why} | nil, dc_err,
--     ports (M.roce_ports), cufile (M.read_cufile), dmabuf_env,
--     host (s3rdma.gpu_path_facts), cuda = {devices} | {err},
--     need_lock (bytes the run pins), max_registration (largest single
--     buffer), concurrency}
-- Returns the rows (see `fact`) and rows.absent: the facts a path needs
-- that this host lacks (no RDMA device, no GPU for the GPU path, the
-- lock limit unread): the spec SKIPs on them.  Nothing here says ok or
-- FAIL: each metric's criterion is in specs/thresholds.yaml (E3P, E4P).
function M.facts(f)
  local c = { absent = {} }
  local cuobj = f.provider == "cuobject"
  local gpu = f.memory == "cuda"
  local na = "n/a"
  local why_na = "n/a (provider " .. tostring(f.provider) .. ")"
  local h = f.host or {}
  device_facts(c, f, na)
  dc_fact(c, f, cuobj, na, why_na)
  cufile_facts(c, f, cuobj, na, why_na)
  libcufile_fact(c, h, cuobj, na, why_na)
  memlock_fact(c, f, h, na)
  peer_memory_fact(c, f, h, gpu, na)
  engine_facts(c, f, gpu)
  return c
end

-- Collect the facts on this host (read-only).
function M.gather(t, s, memory, plan)
  local ep = M.endpoint(s)
  local provider, why = M.provider(s, ep)
  local f = { provider = provider, provider_why = why, endpoint = ep,
              memory = memory,
              concurrency = plan.concurrency,
              need_lock = plan.concurrency * plan.buffer,
              max_registration = plan.buffer,
              dmabuf_env = os.getenv("CUFILE_DMABUF_ENABLE") }
  local verbs = require "strata.verbs"
  local okd, dc = pcall(verbs.dc_probe, s.device)
  if okd then f.dc = dc else f.dc_err = tostring(dc):gsub("^SKIP: ", "") end
  local oki, inv = pcall(verbs.inventory)
  f.ports = M.roce_ports(oki and type(inv) == "table" and
                         (inv.devices or inv) or {})
  f.cufile = M.read_cufile()
  f.host = require("strata.s3rdma").gpu_path_facts()
  if memory == "cuda" then
    local okc, cuda = pcall(require, "strata.cuda")
    local okv, devs = false, "built without CUDA"
    if okc then okv, devs = pcall(cuda.devices) end
    if okv and #devs > 0 then f.cuda = { devices = devs }
    else f.cuda = { err = okv and "no GPU" or tostring(devs):gsub("^SKIP: ", "") }
    end
  end
  return f
end

return M
