-- strata.lib.verbsite: what the verbs specs (R1-R6) read from the site
-- file, in one place: the local device, the peer agent and its token, the
-- line rate, the run length, and which counters are errors.
--
-- site.rdma:
--   device, port, gid_index     the device the tests use (default: first)
--   devices: [{device:, port:, gpu:}] R1: every expected port (default:
--                               all); gpu: R4/R5's GPU on that device's rail
--   gpu                         R4/R5's GPU (a CUDA index or a PCI address)
--   line_rate_gbps              expected line rate (default: inventory)
--   max_lat_us                  R3 target (median)
--   peer: <name>                a key of site.peers (absent: loopback)
--   bw_iters | bw_duration_s    per cell (default 5000 iterations)
--   lat_iters                   per cell (default 1000)
--   tx_depth, max_buffer_mb, bw_sizes, bw_qps (restrict R2's matrix)
--   qp_timeout                  RC ACK timeout exponent, or auto (set_qp_timeout)
--   retry_cnt                   RC retransmissions before a retry-exceeded
--                               error (1..7, default 7; rxe reads 7 as never)
-- site.peers.<name>: host, port (18515), device, ib_port, gid_index,
--   token_env (a variable holding the token) or token_file.
local aff = require "strata.lib.affinity"

local M = {}

local function rdma(site) return (site and site.rdma) or {} end

-- Options naming this host's device for verbs.bw / verbs.lat.
function M.local_opts(site)
  local r = rdma(site)
  local gid = r.gid_index
  if gid == "auto" then gid = nil end
  return { device = r.device, port = r.port, gid_index = gid,
           qp_timeout = r.qp_timeout ~= "auto" and r.qp_timeout or nil,
           retry_cnt = r.retry_cnt }
end

-- The RC ACK timeout (4.096 us x 2^n) for a bandwidth run o whose QPs all
-- share one wire (qps of them in all: an incast counts every sender's):
-- site.rdma.qp_timeout as set, or with "auto" the smallest n >= 14
-- (perftest's) over twice the time their packets in flight take to cross
-- at site.rdma.line_rate_gbps.  A timeout shorter than that resends whole
-- windows over and over; a much longer one turns each lost packet into a
-- stall (docs/verbs.md, "ACK timeout").  In flight a QP: its WRs, at most
-- rxe's RXE_MAX_UNACKED_PSNS (128) packets of up to 4 KiB.
function M.set_qp_timeout(site, o, qps)
  local r = rdma(site)
  if r.qp_timeout ~= "auto" then return o end
  local rate = tonumber(r.line_rate_gbps)
  if not rate or rate <= 0 then return o end
  local per_qp = math.min((o.tx_depth or 128) * (o.size or 65536), 128 * 4096)
  local need = 2 * (qps or o.qps or 1) * per_qp * 8 / (rate * 1e9)
  local n = 14
  while n < 31 and 4.096e-6 * 2 ^ n < need do n = n + 1 end
  o.qp_timeout = n
  return o
end

-- The peer table for verbs.bw{peer=...}, or nil for loopback.  Raises
-- (an ERROR naming the key) when the site names a peer it does not define
-- or the token cannot be found; the token never enters a result.
function M.peer(site)
  local name = rdma(site).peer
  if not name then return nil end
  local p = site.peers and site.peers[name]
  if type(p) ~= "table" then
    error(("site.rdma.peer names '%s' but site.peers.%s is not defined")
          :format(name, name), 0)
  end
  if not p.host then error(("site.peers.%s.host is missing"):format(name), 0) end
  local token
  if p.token_env then
    token = os.getenv(p.token_env)
    if not token or token == "" then
      error(("site.peers.%s.token_env: variable %s is not set")
            :format(name, p.token_env), 0)
    end
  elseif p.token_file then
    local f = io.open(p.token_file, "r")
    if not f then
      error(("site.peers.%s.token_file: cannot read %s")
            :format(name, p.token_file), 0)
    end
    token = (f:read("l") or ""):match("^%s*(.-)%s*$")
    f:close()
  end
  if not token or token == "" then
    error(("site.peers.%s: no token (token_env or token_file)"):format(name), 0)
  end
  local gid = p.gid_index
  if gid == "auto" then gid = nil end
  return { host = p.host, port = p.port, token = token, device = p.device,
           ib_port = p.ib_port, gid_index = gid, timeout = p.timeout },
         name
end

-- Run length for verbs.bw: iterations or a duration.
function M.bw_len(site, size)
  local r = rdma(site)
  if r.bw_duration_s then return { duration = r.bw_duration_s } end
  return { iters = r.bw_iters or 5000 }
end

function M.max_buffer(site)
  local mb = rdma(site).max_buffer_mb
  return mb and math.floor(mb * 1048576) or nil
end

-- The expected line rate: the site's, else the port's from inventory.
function M.line_rate(site, verbs)
  local r = rdma(site)
  if r.line_rate_gbps then return r.line_rate_gbps, "site.rdma.line_rate_gbps" end
  local inv = verbs.inventory(r.device)
  local port = r.port or 1
  for _, d in ipairs(inv) do
    local p = d.ports and d.ports[port]
    if p and p.rate_gbps and p.rate_gbps > 0 then
      return p.rate_gbps, ("inventory: %s port %d %s"):format(d.name, port,
                                                              p.rate or "")
    end
  end
  return nil
end

-- Is a port counter an error counter?  strata.lib.rdma_errors decides
-- (one list for every reader); kept here under the names specs use.
local rdma_errors = require "strata.lib.rdma_errors"
M.is_error_counter = rdma_errors.is_error

-- Only error counters of a {name = delta} table, prefixed for metrics.
M.error_deltas = rdma_errors.deltas

-- Skip a matrix cell that the site's list leaves out.
-- A WRITE bandwidth cell of R2/R4: SKIP the sizes and QP counts the site
-- leaves out (rdma.bw_sizes, rdma.bw_qps), else the verbs.bw options of
-- this host's side (the caller adds the peer).
function M.bw_cell(t)
  local r = rdma(t.site)
  local size, qps = t.cell.size, t.cell.qps
  if not M.in_list(r.bw_sizes, size) then
    t.skip(("size %d is not in site.rdma.bw_sizes"):format(size))
  end
  if not M.in_list(r.bw_qps, qps) then
    t.skip(("%d QPs is not in site.rdma.bw_qps"):format(qps))
  end
  local o = M.local_opts(t.site)
  o.op, o.size, o.qps = "write", size, qps
  o.tx_depth = r.tx_depth
  o.max_buffer = M.max_buffer(t.site)
  for k, v in pairs(M.bw_len(t.site, size)) do o[k] = v end
  return M.set_qp_timeout(t.site, o)
end

function M.in_list(list, v)
  if not list then return true end
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

-- The device names of site.rdma.devices, in order (the rails).
local function device_names(r)
  local names = {}
  for _, e in ipairs(r.devices or {}) do
    names[#names + 1] = type(e) == "table" and e.device or e
  end
  return names
end

-- The GPU the site names for site.rdma.device: its site.rdma.devices
-- entry's gpu, else site.rdma.gpu; nil when neither is set.
local function named_gpu(r)
  for i, e in ipairs(r.devices or {}) do
    if type(e) == "table" and e.device == r.device and e.gpu ~= nil then
      return e.gpu, ("site.rdma.devices[%d].gpu"):format(i)
    end
  end
  if r.gpu ~= nil then return r.gpu, "site.rdma.gpu" end
end

-- R4/R5's GPU on site.rdma.device (its rail): the one the site names (a
-- CUDA index or a PCI address, as `strata site init` writes), else the
-- GPU nearest the device (strata.lib.affinity over sys.locality, each
-- rail of site.rdma.devices its own GPU), else CUDA device 0.  cdevs:
-- cuda.devices(); loc: sys.locality() or nil.  Returns the CUDA index,
-- its PCI address and why; raises (the spec's ERROR, naming the key) when
-- the named GPU is none CUDA sees.
function M.gpu(site, cdevs, loc)
  local r = rdma(site)
  local by_bus = {}
  for _, c in ipairs(cdevs) do by_bus[aff.bus_id(c.bus_id) or "?"] = c end
  local want, key = named_gpu(r)
  if math.type(want) == "integer" then
    local c = cdevs[want + 1]
    if not c then
      error(("%s: %d, but CUDA sees %d device(s)"):format(key, want, #cdevs), 0)
    end
    return c.index, aff.bus_id(c.bus_id), key
  elseif want ~= nil then
    local c = by_bus[aff.bus_id(tostring(want)) or "?"]
    if not c then
      local seen = {}
      for _, d in ipairs(cdevs) do seen[#seen + 1] = tostring(d.bus_id) end
      error(("%s: %s is no GPU CUDA sees here (%s)"):format(key, tostring(want),
        #seen > 0 and table.concat(seen, ", ") or "none"), 0)
    end
    return c.index, aff.bus_id(c.bus_id), key
  end
  if loc and r.device then
    local seen = { devices = {} }
    for _, d in ipairs(loc.devices or {}) do
      if d.kind ~= "gpu" or by_bus[d.pci] then table.insert(seen.devices, d) end
    end
    local names = device_names(r)
    if not M.in_list(names, r.device) then names = { r.device } end
    local p = aff.pair_gpus(seen, names)[r.device]
    if p then
      return by_bus[p.pci].index, p.pci, ("nearest to %s: %s"):format(r.device, p.why)
    end
  end
  local c = cdevs[1]
  return 0, c and aff.bus_id(c.bus_id), ("CUDA device 0 (no PCI path from %s to a GPU)")
    :format(tostring(r.device or "the default device"))
end

-- GPU memory of `bytes` for R4/R5 on the GPU of site.rdma.device's rail
-- (M.gpu), the run noting which GPU and why.  SKIPs (with the reason)
-- where CUDA, a GPU or its driver is absent.  Returns the buffer (close
-- it) and { gpu =, gpu_bus_id =, gpu_pairing =, gpu_link = } for the
-- result: gpu_link the GPU's path to the device in `nvidia-smi topo -m`'s
-- words (PIX, PXB, PHB, NODE, SYS; "unknown" where sysfs does not say),
-- which the criteria judge.
function M.gpu_memory(t, bytes)
  local ok, cuda = pcall(require, "strata.cuda")
  if not ok or not cuda.built() then
    t.skip("GPU memory: strata was built without CUDA")
  end
  local avail, why = cuda.available()
  if not avail then t.skip("GPU memory: " .. tostring(why)) end
  local host = t.site.host or {}
  local lok, loc = pcall(require("strata.sys").locality, { root = host.root })
  loc = lok and loc or nil
  local idx, bus, pairing = M.gpu(t.site, cuda.devices(), loc)
  local link = aff.link_of(loc, rdma(t.site).device, bus) or "unknown"
  t.note(("GPU %d (%s, %s to %s): %s"):format(idx, tostring(bus), link,
    tostring(rdma(t.site).device or "the default device"), pairing))
  return cuda.alloc { device = idx, size = bytes },
         { gpu = idx, gpu_bus_id = bus, gpu_pairing = pairing, gpu_link = link }
end

return M
