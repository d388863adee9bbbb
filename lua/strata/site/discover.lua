-- strata.site.discover: what `strata site init` reads from the node it
-- runs on (or from a tree recorded by tests/host/record_host.sh), as the
-- site file's keys.  Each fact is { path = "gpu.count", value = 8,
-- from = "where it was read" }; what the node cannot tell is
-- { path = "s3.endpoint", todo = "what to write there" }.  The readers are
-- the ones H1, H2, G1, R1 and S1 use (sys.inventory, sys.locality, NVML,
-- storage.layout): one view of the node, not a second parser.
local sys = require "strata.sys"
local aff = require "strata.lib.affinity"

local M = {}

-- "400 Gb/sec (4X NDR)" (ib_sysfs rate) -> 400
local function rate_gbps(rate)
  local n = rate and tonumber(rate:match("^%s*([%d%.]+)%s*Gb/sec"))
  if n and n == math.floor(n) then n = math.tointeger(n) end
  return n
end
M.rate_gbps = rate_gbps

local function add(out, path, value, from)
  out[#out + 1] = { path = path, value = value, from = from }
end

local function todo(out, path, text)
  out[#out + 1] = { path = path, todo = text }
end

-- The NVIDIA GPUs: NVML's inventory when given (live or recorded), else
-- the PCI functions of class 0x03 with NVIDIA's vendor id.
local function gpus(out, inv, nvml, nvml_from, pre)
  if nvml and (nvml.count or 0) > 0 then
    local names, order = {}, {}
    for _, g in ipairs(nvml.gpus or {}) do
      if not names[g.name] then order[#order + 1] = g.name end
      names[g.name] = (names[g.name] or 0) + 1
    end
    local parts = {}
    for _, n in ipairs(order) do parts[#parts + 1] = names[n] .. " x " .. n end
    local what = ("%s (driver %s): %s"):format(nvml_from,
      tostring(nvml.driver or "?"), table.concat(parts, ", "))
    add(out, "gpu.count", nvml.count, what)
    if #order == 1 then add(out, "gpu.model", order[1], what) end
    return nvml.count
  end
  local n, where = 0, nil
  for _, d in ipairs(inv.pci or {}) do
    if d.kind == "gpu" and d.vendor_id == "10de" then
      n, where = n + 1, where or d.address
    end
  end
  if n > 0 then
    add(out, "gpu.count", n, (pre .. "/sys/bus/pci/devices/*/class 0x03xxxx, "
      .. "vendor 0x10de (%s...): no NVML here, so no model"):format(where))
  end
  return n
end

-- A live port's data rate as R1 and R2 read it (ibv_query_port: speed x
-- width after line encoding; sysfs's rate is the signalling rate, 2.5 for
-- rxe's 1X SDR where R1 reports 2): nil on a recorded tree or without
-- libibverbs.
local function verbs_rate(dev, port, live)
  if not live then return nil end
  local ok, inv = pcall(function() return require("strata.verbs").inventory() end)
  if not ok then return nil end
  for _, d in ipairs(inv) do
    local p = d.name == dev and d.ports and d.ports[port]
    if p and p.rate_gbps and p.rate_gbps > 0 then
      local r = p.rate_gbps
      if r == math.floor(r) then r = math.tointeger(r) end
      return r, ("ibv_query_port(%s, %d): %s (R1's reading)"):format(dev,
        port, tostring(p.rate or (r .. " Gb/s")))
    end
  end
end

-- The RDMA ports: the first ACTIVE one is the tests' device, every ACTIVE
-- one is expected ACTIVE (R1), its rate is the line rate (R2).
local function rdma(out, inv, pre, live, loc)
  local active = {}
  for _, d in ipairs(inv.rdma or {}) do
    for _, p in ipairs(d.ports or {}) do
      if tostring(p.state or ""):match("ACTIVE") then
        active[#active + 1] = { dev = d, port = p }
      end
    end
  end
  if #active == 0 then return false end
  local first = active[1]
  local dir = (pre .. "/sys/class/infiniband/%s/ports/%d"):format(first.dev.name,
                                                           first.port.port)
  add(out, "rdma.device", first.dev.name, dir .. "/state: "
      .. tostring(first.port.state) .. " (the first ACTIVE port)")
  add(out, "rdma.port", first.port.port, dir)
  add(out, "rdma.gid_index", "auto", "strata picks the RoCEv2 GID of "
      .. "the port's address at run time (docs/verbs.md)")
  local list, names = {}, {}
  for _, a in ipairs(active) do
    list[#list + 1] = { device = a.dev.name, port = a.port.port }
    names[#names + 1] = a.dev.name
  end
  -- each rail's GPU for R4/R5, as PCI addresses (CUDA's numbering can
  -- change with CUDA_DEVICE_ORDER; the bus address does not)
  local pick, why = aff.pair_gpus(loc, names), {}
  for _, e in ipairs(list) do
    local p = pick[e.device]
    if p then
      e.gpu = p.pci
      why[#why + 1] = ("%s %s node %s"):format(e.device, p.link, tostring(p.numa_node))
    end
  end
  add(out, "rdma.devices", list,
      pre .. "/sys/class/infiniband/*/ports/*/state: every ACTIVE port"
      .. (#why > 0 and ("; gpu: the nearest by PCI path and NUMA node (H2): "
                        .. table.concat(why, ", ")) or ""))
  local r, from = verbs_rate(first.dev.name, first.port.port, live)
  if not r then
    r, from = rate_gbps(first.port.rate), dir .. "/rate: "
      .. tostring(first.port.rate)
  end
  if r then add(out, "rdma.line_rate_gbps", r, from) end
  todo(out, "rdma.max_lat_us", "median WRITE latency target in us (R3): "
       .. "your fabric's figure")
  todo(out, "rdma.max_tail_ratio", "p99 / median WRITE latency allowed "
       .. "(R3, R5), e.g. 3")
  todo(out, "rdma.peer", "the far end: a key of site.peers where "
       .. "`strata serve` runs (delete this line for loopback)")
  return true
end

-- The S2-S4 file per array: S2's default (1G, lib/storage.lua) unless
-- the smallest array has less than 8 times that free, then an eighth of
-- its free space (df) in MiB: a small array (the lab's 320 MiB) must not
-- fail the run with ENOSPC for want of this key.
local function job_size(out, list)
  local free, where
  for _, e in ipairs(list) do
    -- POSIX df -P -k (busybox's too): "fs 1024-blocks used avail cap mnt"
    local ok, r = pcall(sys.run, { cmd = { "df", "-P", "-k", e.path },
                                   timeout = 10 })
    local kib = ok and r.code == 0
      and r.stdout:match("\n%S+%s+%d+%s+%d+%s+(%d+)")
    local n = kib and tonumber(kib) * 1024
    if n and (not free or n < free) then free, where = n, e.path end
  end
  if not free or free >= 8 * 2^30 then return end
  local mib = math.max(1, math.floor(free / 8 / 2^20))
  add(out, "storage.size", ("%dM"):format(mib), ("df %s: %d MiB free; an "
      .. "eighth of it (S2's default 1G would not fit)"):format(where,
      math.floor(free / 2^20)))
end

-- Scratch arrays: the md arrays S1 finds by itself, each on the NUMA node
-- of its members when they share one.
local function scratch(out, root)
  local ok, lay = pcall(function()
    return require("strata.lib.storage").layout { root = root }
  end)
  if not ok or #lay.arrays == 0 then return end
  local list = {}
  for _, a in ipairs(lay.arrays) do
    local node
    for n in pairs(a.nodes) do node = node == nil and n or false end
    local e = { path = a.mountpoint }
    if node and node >= 0 then e.numa_node = node end
    list[#list + 1] = e
  end
  add(out, "storage.scratch", list, (root or "") .. "/proc/self/mountinfo: the md arrays'"
      .. " mounts; NUMA node of their members (/sys/block/*/device)")
  if not root then job_size(out, list) end
  todo(out, "storage.seq_read_mibps", "S2: expected sequential read MiB/s "
       .. "per array (0.9 x this passes)")
  todo(out, "storage.seq_write_mibps", "S3: expected sequential write "
       .. "MiB/s per array")
  todo(out, "storage.randread_iops", "S4: expected 4 KiB random read IOPS "
       .. "per array")
end

-- Every fact and TODO of the node.  opts: root (a recorded tree, nil =
-- this host), nvml (cuda.nvml()'s table, nil = none), nvml_from (what to
-- call it: "NVML" or the recorded file).
function M.node(opts)
  local root = opts.root
  local inv = sys.inventory { root = root }
  local out = {}
  local pre = root or ""
  if inv.hostname then
    add(out, "site.name", inv.hostname, root and
        (pre .. "/proc/sys/kernel/hostname") or "gethostname(2)")
  end
  local cpu = inv.cpu or {}
  if cpu.online_count then
    add(out, "host.cpus", cpu.online_count,
        pre .. "/sys/devices/system/cpu/online: " .. tostring(cpu.online))
  end
  if inv.numa and #inv.numa > 0 then
    add(out, "host.numa_nodes", #inv.numa,
        pre .. "/sys/devices/system/node/node*: " .. #inv.numa
        .. (#inv.numa == 1 and " node" or " nodes"))
  end
  local ngpu = gpus(out, inv, opts.nvml, opts.nvml_from or "NVML", pre)
  if ngpu > 1 then
    todo(out, "gpu.topology", "the expected `nvidia-smi topo -m` block: "
         .. "G3 prints the measured one, or use gpu.topology_file")
  end
  if ngpu > 0 then
    todo(out, "nccl.busbw_gbs", "R9: expected all-reduce bus bandwidth "
         .. "(GB/s) at the largest size")
  end
  rdma(out, inv, pre, not root, sys.locality { root = root })
  scratch(out, root)
  todo(out, "s3.endpoint", "the S3/AIStor endpoint, http(s)://host[:port]"
       .. " (or delete the s3 section: the S3 tests SKIP)")
  todo(out, "s3.bucket", "a bucket strata may write to")
  todo(out, "s3.credentials_file", "an AWS-format credentials file (or "
       .. "access_key_env / secret_key_env: variable names, never keys)")
  return out, inv
end

-- --- the golden configuration (site init --golden, H4) -----------------

-- "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off" (the line
-- `dcb pfc show dev DEV` prints: dcb-pfc(8), iproute2) -> "3", the
-- priorities with PFC on, "none" for none; nil when the line is absent.
function M.parse_pfc(text)
  local line = text and text:match("prio%-pfc([^\n]*)")
  if not line then return nil end
  local on = {}
  for prio, state in line:gmatch("(%d+):(%a+)") do
    if state == "on" then on[#on + 1] = prio end
  end
  return #on > 0 and table.concat(on, ",") or "none"
end

-- "order dscp pcp" (`dcb apptrust show dev DEV`: dcb-apptrust(8)) ->
-- "dscp pcp", the trusted selectors in order; "none" for an empty list.
function M.parse_apptrust(text)
  local order = text and text:match("order([^\n]*)")
  if not order then return nil end
  order = order:gsub("^%s+", ""):gsub("%s+$", "")
  return order ~= "" and order or "none"
end

-- One `dcb` query: its stdout, or nil where there is no answer (no dcb
-- here, or the NIC's driver has no DCB netlink operations, "Attribute
-- read: Operation not supported"): not present.
local function dcb(argv)
  local ok, r = pcall(sys.run, { cmd = argv, timeout = 5 })
  if ok and r.code == 0 then return r.stdout end
end

-- A NIC's PFC priorities and trust order as the kernel's DCB netlink
-- interface answers them through iproute2's dcb (pfc, apptrust); a key
-- the NIC or tool cannot answer is left out.
local function nic_dcb(item)
  local out = dcb { "dcb", "pfc", "show", "dev", item.name }
  item.pfc = M.parse_pfc(out)
  out = dcb { "dcb", "apptrust", "show", "dev", item.name }
  item.trust = M.parse_apptrust(out)
end

-- rdma-core's release from libibverbs's file name: rdma-core installs
-- libibverbs.so.1.<ABI>.<PACKAGE_VERSION> (libibverbs/CMakeLists.txt,
-- Documentation/versioning.md), e.g. libibverbs.so.1.14.44.0 = 44.0.
local LIBDIRS = { "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                  "/usr/lib64", "/usr/lib" }
function M.rdma_core(root)
  local core = require "strata.core"
  for _, d in ipairs(LIBDIRS) do
    local link = (root or "") .. d .. "/libibverbs.so.1"
    local real = core.realpath(link)
    local v = real and real:match("libibverbs%.so%.1%.%d+%.(%d+%.%d+)$")
    if v then return v, link .. " -> " .. real:match("[^/]+$") end
  end
end

local function nvml_golden(out, nv)
  add(out, "golden.nvidia_driver", nv.driver, "NVML system driver version")
  if nv.cuda_driver then
    add(out, "golden.cuda_driver", nv.cuda_driver,
        "NVML nvmlSystemGetCudaDriverVersion_v2")
  end
  local g = nv.gpus[1] or {}
  local per = {
    { "gpu_ecc", "ecc_enabled", "NVML ECC mode" },
    { "gpu_persistence", "persistence", "NVML nvmlDeviceGetPersistenceMode" },
    { "gpu_sm_clock_max_mhz", "sm_clock_max", "NVML max SM clock" },
    { "gpu_sm_clock_app_mhz", "sm_clock_app",
      "NVML nvmlDeviceGetApplicationsClock(SM)" },
    { "gpu_mem_clock_app_mhz", "mem_clock_app",
      "NVML nvmlDeviceGetApplicationsClock(MEM)" },
  }
  for _, p in ipairs(per) do
    if g[p[2]] ~= nil then add(out, "golden." .. p[1], g[p[2]], p[3] .. ", GPU 0") end
  end
end

-- The settings every node of a fleet should share, read from this node:
-- { path = "golden.<key>", value, from }.  nvml: cuda.nvml()'s table or
-- nil.  Lists (nics, rdma) are compared item by item, by name.  What the
-- node cannot answer (no NVML, no NCCL library, no dcb, a recorded tree)
-- is left out: "not present", never a difference by itself.
function M.golden(opts)
  local inv = opts.inventory or sys.inventory { root = opts.root }
  local out = {}
  local k = inv.kernel or {}
  if k.release then
    add(out, "golden.kernel", k.release, opts.root
        and (opts.root .. "/proc/sys/kernel/osrelease") or "uname(2) release")
  end
  local os_ = inv.os or {}
  if os_.pretty_name then
    add(out, "golden.os", os_.pretty_name,
        (opts.root or "") .. "/etc/os-release PRETTY_NAME")
  end
  local nv = opts.nvml
  if nv and (nv.count or 0) > 0 then nvml_golden(out, nv) end
  if not opts.root then
    local ok, v = pcall(function() return require("strata.nccl").version() end)
    if ok and type(v) == "table" and v.version then
      add(out, "golden.nccl", v.version, "ncclGetVersion (" .. tostring(v.library) .. ")")
    end
  end
  local rc, rc_from = M.rdma_core(opts.root)
  if rc then add(out, "golden.rdma_core", rc, rc_from) end
  local nics = {}
  for _, n in ipairs(inv.nics or {}) do
    if not n.virtual and n.operstate == "up" then
      local item = { name = n.name, mtu = n.mtu, driver = n.driver,
                     firmware = n.firmware }
      if not opts.root then nic_dcb(item) end
      nics[#nics + 1] = item
    end
  end
  if #nics > 0 then
    add(out, "golden.nics", nics, (opts.root or "") .. "/sys/class/net/*/mtu, the ethtool "
        .. "driver info and `dcb pfc|apptrust show` of every physical NIC that is up")
  end
  local rd = {}
  for _, d in ipairs(inv.rdma or {}) do
    rd[#rd + 1] = { name = d.name, firmware = d.firmware }
  end
  if #rd > 0 then
    add(out, "golden.rdma", rd, (opts.root or "") .. "/sys/class/infiniband/*/fw_ver")
  end
  return out
end

-- The node's settings flat, in one order: { {key = "nics.eth0.mtu",
-- value = 1500}, ... } (list items by name: the keys golden_diff uses).
function M.settings(facts)
  local rows = {}
  for _, e in ipairs(facts) do
    local key = e.path:match("^golden%.(.+)$")
    if type(e.value) == "table" then
      for _, item in ipairs(e.value) do
        local fields = {}
        for f in pairs(item) do if f ~= "name" then fields[#fields + 1] = f end end
        table.sort(fields)
        for _, f in ipairs(fields) do
          rows[#rows + 1] = { key = ("%s.%s.%s"):format(key, item.name, f),
                              value = item[f] }
        end
      end
    elseif key then
      rows[#rows + 1] = { key = key, value = e.value }
    end
  end
  table.sort(rows, function(a, b) return a.key < b.key end)
  return rows
end

local function num(v)
  return math.type(v) == "float" and math.tointeger(v) or v
end

-- Each golden setting against the node's: a list of { key, golden, now,
-- state } (key "kernel", "nics.eth0.mtu", ...) for every setting the
-- golden names.  state: "same", "differs", or "not present" where the
-- node cannot answer that setting (no such library, tool or driver
-- support); a NIC or device of the golden the node lacks differs
-- ("absent").
function M.golden_diff(golden, facts)
  local now = {}
  for _, e in ipairs(facts) do now[e.path:match("^golden%.(.+)$")] = e.value end
  local rows = {}
  local keys = {}
  for key in pairs(golden) do keys[#keys + 1] = key end
  table.sort(keys)
  local function row(key, want, have, item_absent)
    -- a golden that came through JSON (a fleet run hands the site to
    -- each node so) holds 9000.0 where the file says 9000
    want, have = num(want), num(have)
    local state = "same"
    if have == nil then state = item_absent and "differs" or "not present"
    elseif tostring(have) ~= tostring(want) then state = "differs" end
    rows[#rows + 1] = { key = key, golden = want, now = have, state = state }
  end
  for _, key in ipairs(keys) do
    local want = golden[key]
    if type(want) == "table" then
      local by = {}
      for _, item in ipairs(now[key] or {}) do by[item.name] = item end
      for _, item in ipairs(want) do
        local have = by[item.name]
        local fields = {}
        for f in pairs(item) do if f ~= "name" then fields[#fields + 1] = f end end
        table.sort(fields)
        for _, f in ipairs(fields) do
          row(("%s.%s.%s"):format(key, item.name, f), item[f],
              have and have[f], have == nil)
        end
      end
    else
      row(key, want, now[key], false)
    end
  end
  return rows
end

return M
