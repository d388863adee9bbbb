-- preflight.lua - the S3-over-RDMA preflight's judging
-- (lua/strata/lib/s3preflight.lua) on facts fed by hand, each known cause
-- of a silent fallback or crash caught by its named check; the cuFile
-- configuration read with // comments (as NVIDIA's sample files carry);
-- and the engine refusing a 4 GiB cuObject registration.  The cufile.json
-- texts below use only the keys NVIDIA documents (docs.nvidia.com/
-- gpudirect-storage/cuobject/cuObjClient-api, "RDMA Peer Memory
-- Configuration" and "RDMA Multipathing").
local pre = require "strata.lib.s3preflight"
local s3 = require "strata.s3"
local s3rdma = require "strata.s3rdma"
local bad = 0
local function check(c, what)
  print((c and "ok   " or "FAIL ") .. what)
  if not c then bad = bad + 1 end
end
local function status(checks, name)
  for _, c in ipairs(checks) do if c.name == name then return c.status, c end end
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

local c = pre.judge(facts())
check(pre.verdict(c) == "PASS", "a good cuObject client host: PASS")
check(status(c, "cuda_context_per_thread") == "n/a" and
      status(c, "one_buffer_per_stream") == "ok", "engine rows shown")

local v, why = pre.verdict(pre.judge(facts { dc = { dc = false,
  why = "rxe0 is not an mlx5 device (driver rxe (software)): no DC" } }))
check(v == "FAIL" and why:find("dc_transport", 1, true) and
      why:find("ConnectX", 1, true), "no DC on rxe/irdma: FAIL, named: " .. why)

c = pre.judge(facts { cufile = pre.read_cufile(env(stock)) })
check(status(c, "cufile.rdma_dev_addr_list") == "FAIL" and
      status(c, "cufile.rdma_peer_type") == "FAIL" and
      status(c, "cufile.use_pci_p2pdma") == "FAIL",
      "the stock cufile.json (empty list, peermem default, no p2pdma): FAIL x3")
c = pre.judge(facts { cufile = pre.read_cufile(env(stock)),
                      dmabuf_env = "TRUE" })
check(status(c, "cufile.rdma_peer_type") == "ok",
      "CUFILE_DMABUF_ENABLE=TRUE overrides rdma_peer_type")
c = pre.judge(facts { cufile = pre.read_cufile(env(dir .. "/none.json")) })
check(status(c, "cufile.config") == "FAIL", "no cufile.json: FAIL")
c = pre.judge(facts { ports = pre.roce_ports {} })
local _, row = status(c, "cufile.rdma_dev_addr_list")
check(row.status == "FAIL" and row.value:find("no active RoCE port has", 1,
      true), "addresses of no active RoCE port: FAIL (" .. row.value .. ")")

c = pre.judge(facts { host = { memlock = -1, cufile_loaded = true,
  cufile_path = "site-packages/nvidia/cu13/lib/libcufile.so.0",
  cufile_version = 1150, cufile_desc_str = false } })
_, row = status(c, "libcufile.symbol")
check(row.status == "FAIL" and row.fix:find("LD_PRELOAD", 1, true),
      "libcufile 1.15 first on the path: FAIL with the LD_PRELOAD fix")
c = pre.judge(facts { host = { memlock = 65536, cufile_loaded = true,
                               cufile_desc_str = true } })
check(status(c, "ulimit_l") == "FAIL", "ulimit -l 64 KiB: FAIL")
c = pre.judge(facts { max_registration = 4 * 1073741824 })
check(status(c, "registration_limit") == "FAIL", "a 4 GiB buffer: FAIL")

-- hipobj-rc-v2 on rxe: cuFile and DC do not apply
c = pre.judge(facts { provider = "rc", cufile = {}, host = { memlock = -1 },
                      dc = { dc = false, why = "rxe0 is not an mlx5 device" } })
check(pre.verdict(c) == "PASS" and status(c, "dc_transport") == "n/a" and
      status(c, "cufile.config") == "n/a", "provider rc: DC/cuFile n/a, PASS")
-- the GPU path without a GPU: SKIP, even beside a failed check
v, why = pre.verdict(pre.judge(facts { memory = "cuda", cuda = {
  err = "no CUDA driver" }, host = { memlock = 0 } }))
check(v == "SKIP" and why:find("CUDA", 1, true), "GPU path, no GPU: SKIP: "
      .. why)
c = pre.judge(facts { memory = "cuda", cuda = { devices = {
  { index = 0, dmabuf = false } } } })
check(status(c, "gpu.peer_memory") == "FAIL", "no peermem, no dma-buf: FAIL")
c = pre.judge(facts { memory = "cuda", cuda = { devices = {
  { index = 0, dmabuf = true } } } })
check(status(c, "gpu.peer_memory") == "ok" and
      status(c, "cuda_context_per_thread") == "ok", "dma-buf GPU: ok")

-- the engine refuses a 4 GiB cuObject registration before anything
local cl = s3.client { endpoint = "http://127.0.0.1:9" }
local ok, err = pcall(s3rdma.run, { client = cl, mode = "cuobject",
  op = "get", bucket = "b", size = 4 * 1073741824 })
check(not ok and tostring(err):find("4 GiB", 1, true), "4 GiB cuObject "
      .. "GET refused: " .. tostring(err))
os.execute("rm -rf " .. dir)
print(bad == 0 and "preflight: all checks passed" or "preflight: FAILED")
os.exit(bad == 0 and 0 or 1)
