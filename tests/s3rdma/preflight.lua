-- preflight.lua - the S3-over-RDMA preflight's facts
-- (lua/strata/lib/s3preflight.lua) on host facts fed by hand, judged by
-- the shipped criteria of E3P/E4P (specs/thresholds.yaml, resolved as a
-- run resolves them): each known cause of a silent fallback or crash
-- caught by its named check; the cuFile
-- configuration read with // comments (as NVIDIA's sample files carry);
-- and the engine refusing a 4 GiB cuObject registration.  The cufile.json
-- texts below use only the keys NVIDIA documents (docs.nvidia.com/
-- gpudirect-storage/cuobject/cuObjClient-api, "RDMA Peer Memory
-- Configuration" and "RDMA Multipathing").
local pre = require "strata.lib.s3preflight"
local s3 = require "strata.s3"
local s3rdma = require "strata.s3rdma"
local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")()
local setup = require "strata.setup"
local thresholds = require "strata.thresholds"

-- The shipped criteria of E3P and E4P, as a run resolves them.
local crit = {}
do
  local s = setup.load { paths = { STRATA_HOME .. "/specs/s3rdma/preflight.lua" },
                         thresholds = STRATA_HOME .. "/specs/thresholds.yaml" }
  for _, c in ipairs(s.criteria) do
    crit[c.id] = crit[c.id] or {}
    table.insert(crit[c.id], c)
  end
end

-- pre.facts -> the cell's metrics and the failed checks by metric name
-- (E4P's criteria on the GPU path, E3P's otherwise).
local function judge(f)
  local rows = pre.facts(f)
  local m = {}
  for _, r in ipairs(rows) do if r.metric then m[r.metric] = r.value end end
  local id = f.memory == "cuda" and "E4P" or "E3P"
  local failed, n = {}, 0
  for _, ck in ipairs(thresholds.judge(crit[id], { site = {}, metrics = m,
                                                  cell = {} })) do
    if not ck.ok then failed[ck.metric] = ck.why; n = n + 1 end
  end
  return { rows = rows, failed = failed, n = n, absent = rows.absent[1] }
end
local function row(r, name)
  for _, x in ipairs(r.rows) do if x.name == name then return x end end
end

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return dir .. "/" .. name
end
local good = write("good.json", [[
{
  // client side, as NVIDIA's sample: "rdma_dev_addr_list": ["<client-nic-ip>"]
  "logging": { "dir": "http://not-a-comment//kept", "level": "ERROR" },
  "properties": {
    "rdma_dev_addr_list": ["10.77.0.1", "mlx5_1"],
    "rdma_peer_type": "dmabuf",
    "use_pci_p2pdma": true
  }
}]])
local stock = write("stock.json", [[
{ "properties": { "rdma_dev_addr_list": [], "use_pci_p2pdma": false } }]])

local function env(path, dmabuf)
  return function(k)
    if k == "CUFILE_ENV_PATH_JSON" then return path end
    if k == "CUFILE_DMABUF_ENABLE" then return dmabuf end
  end
end
local cf = pre.read_cufile(env(good))
check(cf.props and cf.props.rdma_peer_type == "dmabuf" and cf.via ==
      "CUFILE_ENV_PATH_JSON", "cufile.json with // comments read")
local ports = pre.roce_ports { { name = "mlx5_0", ports = {
  { port = 1, state = "PORT_ACTIVE", link_layer = "Ethernet", netdev = "ens1",
    gids = { { gid = "::ffff:10.77.0.1", ipv4 = "10.77.0.1" } } } } },
  { name = "mlx5_9", ports = { { port = 1, state = "PORT_DOWN",
    link_layer = "Ethernet", gids = { { ipv4 = "10.9.9.9" } } } } } }
check(#ports == 1 and ports[1].addrs["10.77.0.1"], "active RoCE ports only")

local function facts(over)
  local f = { provider = "cuobject", memory = "host", concurrency = 4,
              need_lock = 4 * 1048576, max_registration = 1048576,
              dc = { dc = true, why = "mlx5_0 (driver mlx5_core) makes DC "
                     .. "initiators" },
              ports = ports, cufile = cf,
              host = { memlock = -1, peermem = false, cufile_loaded = true,
                       cufile_path = "/usr/lib/libcufile.so.1.18.0",
                       cufile_version = 1180, cufile_desc_str = true } }
  for k, v in pairs(over or {}) do f[k] = v end
  return f
end

local r = judge(facts())
check(r.n == 0 and not r.absent, "a good cuObject client host: every criterion holds")
check(row(r, "cuda_context_per_thread").metric == nil and
      row(r, "one_buffer_per_stream").fix ~= "", "engine rows shown, no criterion")
check(#crit.E3P >= 8 and #crit.E4P == #crit.E3P + 1 and
      crit.E3P[1].source:find("thresholds.yaml:", 1, true),
      "E3P/E4P criteria come from thresholds.yaml")

r = judge(facts { dc = { dc = false,
  why = "rxe0 is not an mlx5 device (driver rxe (software)): no DC" } })
check(r.n == 1 and r.failed.dc_transport and
      row(r, "dc_transport").fix:find("ConnectX", 1, true) and
      row(r, "dc_transport").detail:find("rxe0", 1, true),
      "no DC on rxe/irdma: dc_transport fails, the fix names ConnectX")

r = judge(facts { cufile = pre.read_cufile(env(stock)) })
check(r.n == 3 and r.failed["cufile.addr_on_active_port"] and
      r.failed["cufile.rdma_peer_type"] and r.failed["cufile.use_pci_p2pdma"],
      "the stock cufile.json (empty list, peermem default, no p2pdma): 3 fail")
r = judge(facts { cufile = pre.read_cufile(env(stock)), dmabuf_env = "TRUE" })
check(not r.failed["cufile.rdma_peer_type"] and
      row(r, "cufile.rdma_peer_type").value == "dmabuf",
      "CUFILE_DMABUF_ENABLE=TRUE overrides rdma_peer_type")
r = judge(facts { cufile = pre.read_cufile(env(dir .. "/none.json")) })
check(r.failed["cufile.config_read"] and r.n == 4,
      "no cufile.json: the config and the three keys fail")
r = judge(facts { ports = pre.roce_ports {} })
check(r.failed["cufile.addr_on_active_port"] and
      row(r, "cufile.rdma_dev_addr_list").detail:find("no active RoCE port has",
      1, true), "addresses of no active RoCE port: fails ("
      .. row(r, "cufile.rdma_dev_addr_list").detail .. ")")

r = judge(facts { host = { memlock = -1, cufile_loaded = true,
  cufile_path = "site-packages/nvidia/cu13/lib/libcufile.so.0",
  cufile_version = 1150, cufile_desc_str = false } })
check(r.failed["libcufile.rdma_desc_str"] and
      row(r, "libcufile.symbol").fix:find("LD_PRELOAD", 1, true),
      "libcufile 1.15 first on the path: fails, with the LD_PRELOAD fix")
r = judge(facts { host = { memlock = 65536, cufile_loaded = true,
                           cufile_desc_str = true } })
check(r.n == 1 and r.failed.ulimit_l_bytes, "ulimit -l 64 KiB: fails: "
      .. tostring(r.failed.ulimit_l_bytes))
r = judge(facts { max_registration = 4 * 1073741824 })
check(r.n == 1 and r.failed.largest_buffer_bytes, "a 4 GiB buffer: fails")
r = judge(facts { max_registration = 4 * 1073741824 - 1 })
check(r.n == 0, "4 GiB - 1: holds")

-- an irdma (E810) NIC under cuObject: the detail says in plain words that
-- AIStor's S3 over RDMA cannot run there, and why (issue 27)
r = judge(facts { dc = { dc = false, why = "irdma0 is not an mlx5 device" } })
check(r.failed.dc_transport and row(r, "dc_transport").detail:find(
        "cannot carry AIStor's S3 over RDMA: irdma0 is not an mlx5 device", 1,
        true) and row(r, "dc_transport").detail:find("CUOBJ_PROTO_RDMA_DC_V1",
        1, true), "irdma: plain words: " .. row(r, "dc_transport").detail)
check(row(r, "dc_transport").explain == true,
      "irdma: the words go to the Summary with the failed check (t.explain)")

-- what the endpoint is (MinIO's Server header, minio/minio @7aac2a2
-- cmd/api-headers.go:54 and cmd/build-constants.go:59; the older
-- "MinIO/"+ReleaseTag) and the provider it speaks
local e = pre.speaks("MinIO", 200)
check(e.provider == "cuobject" and e.what == "AIStor", "Server: MinIO + metrics path: cuobject")
check(pre.speaks("MinIO/RELEASE.2020-01-01T00-00-00Z", 403).provider == "cuobject",
      "an older MinIO/<tag> header, metrics path behind auth: cuobject")
check(pre.speaks("MinIO", 404).provider == nil, "MinIO without the RDMA metrics path: none")
check(pre.speaks("strata-s3rdma-ref", 200).provider == nil, "another server: none")
check(pre.speaks(nil, nil).provider == nil, "no Server header: none")
check(pre.provider({ provider = "rc" }, e) == "rc", "the site's provider wins")
check(pre.provider({}, e) == "cuobject", "none in the site: the endpoint's")
check(pre.provider({}, { err = "refused" }) == "rc", "endpoint not reached: rc")

-- hipobj-rc-v2 on rxe: cuFile and DC do not apply
r = judge(facts { provider = "rc", cufile = {}, host = { memlock = -1 },
                  dc = { dc = false, why = "rxe0 is not an mlx5 device" } })
check(r.n == 0 and row(r, "dc_transport").value == "n/a" and
      row(r, "cufile.config").value == "n/a", "provider rc: DC/cuFile n/a, holds")
-- the GPU path without a GPU: absent (the spec SKIPs), even beside a failure
r = judge(facts { memory = "cuda", cuda = { err = "no CUDA driver" },
                  host = { memlock = 0 } })
check(r.absent and r.absent.detail:find("CUDA", 1, true),
      "GPU path, no GPU: absent: " .. (r.absent and r.absent.detail or "-"))
r = judge(facts { memory = "cuda", cuda = { devices = {
  { index = 0, dmabuf = false } } } })
check(r.n == 1 and r.failed["gpu.peer_memory"], "no peermem, no dma-buf: fails")
r = judge(facts { memory = "cuda", cuda = { devices = {
  { index = 0, dmabuf = true } } } })
check(r.n == 0 and row(r, "gpu.peer_memory").value == "dmabuf", "dma-buf GPU: holds")

-- the engine refuses a 4 GiB cuObject registration before anything
local cl = s3.client { endpoint = "http://127.0.0.1:9" }
local ok, err = pcall(s3rdma.run, { client = cl, mode = "cuobject",
  op = "get", bucket = "b", size = 4 * 1073741824 })
check(not ok and tostring(err):find("4 GiB", 1, true), "4 GiB cuObject "
      .. "GET refused: " .. tostring(err))
os.execute("rm -rf " .. dir)
print(check.n == 0 and "preflight: all checks passed" or "preflight: FAILED")
os.exit(check.n == 0 and 0 or 1)
