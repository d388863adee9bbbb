-- strata.lib.storage: the read-only layout check of a GPU node's local
-- NVMe scratch (RUNBOOK "Second seed"), and disk counter figures.
--
-- layout{root=, mounts=} reads (under root, "" = this host):
--   /proc/self/mountinfo           the scratch mounts: fstype, options
--   /sys/block/<md>/md/{level,chunk_size,raid_disks}, slaves/
--                                  the md array under each mount
--   /sys/block/<nvme>/wwid, device/{serial,model}, device -> controller
--                                  each member, by serial and WWN
--   sys.locality{root=}            NUMA node of every NVMe, GPU and NIC
-- and judges it against the document's advice: one RAID0 of all NVMe when
-- the topology is uniform (NVMe and GPUs on one NUMA node), NUMA-local
-- arrays (4+4 on a 2-socket 8-NVMe node) when they split across sockets;
-- an array whose members sit on more than one node has members on the far
-- socket, named by serial.  Kernel names (nvme0n1) are reported beside
-- the serial only: they follow probe order, not slots.
local sys = require "strata.sys"
local core = require "strata.core"

local M = {}

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function attr(path)
  local s = slurp(path)
  return s and (s:gsub("%s+$", ""):gsub("^%s+", "")) or nil
end

-- A directory's names, none when it is not there (core.listdir raises).
local function listdir(path)
  local ok, names = pcall(core.listdir, path)
  return ok and names or {}
end

local function basename(p) return p and p:match("([^/]+)/*$") end

-- mountinfo(5): "id parent maj:min root mountpoint opts [optional...] -
-- fstype source superopts"
function M.mountinfo(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local pre, post = line:match("^(.-) %- (.*)$")
    if pre then
      local f = {}
      for w in pre:gmatch("%S+") do f[#f + 1] = w end
      local g = {}
      for w in post:gmatch("%S+") do g[#g + 1] = w end
      local opts = {}
      for o in (f[6] or ""):gmatch("[^,]+") do opts[o] = true end
      for o in (g[3] or ""):gmatch("[^,]+") do opts[o] = opts[o] or true end
      out[#out + 1] = { dev = f[3], mountpoint = f[5], options = f[6],
                        opts = opts, fstype = g[1], source = g[2],
                        super = g[3] }
    end
  end
  return out
end

-- Block devices by "maj:min" -> name.
local function block_by_dev(root)
  local map = {}
  for _, name in ipairs(listdir(root .. "/sys/block")) do
    local d = attr(root .. "/sys/block/" .. name .. "/dev")
    if d then map[d] = name end
  end
  return map
end

-- One block device's identity: serial and model from its controller (or
-- NVMe subsystem), WWN from the namespace's wwid.
local function drive(root, name, numa_of)
  local dir = root .. "/sys/block/" .. name
  local d = { name = name }
  d.wwid = attr(dir .. "/wwid")
  d.serial = attr(dir .. "/device/serial")
  d.model = attr(dir .. "/device/model")
  d.firmware = attr(dir .. "/device/firmware_rev")
  local ctrl = core.realpath(dir .. "/device")
  d.controller = basename(ctrl)
  d.numa_node = numa_of[name]
  d.id = d.serial or d.wwid or name
  return d
end

local function count_keys(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

local function sorted_keys(t)
  local k = {}
  for x in pairs(t) do k[#k + 1] = x end
  table.sort(k)
  return k
end

-- mountinfo(5) escapes space, tab, newline and backslash in a path as
-- \ooo (octal).
local function unescape(p)
  return (p:gsub("\\(%d%d%d)", function(o) return string.char(tonumber(o, 8)) end))
end

-- A scratch path as users write it (issue 27): a directory inside a mount
-- rather than its mount point.  Returns the mount point that holds it
-- (the longest mount point that is the path or a parent of it) and the
-- path it resolved to (and the path as written, tidied), or nil and why.
function M.holding_mount(root, list, path)
  local p = path:gsub("/+", "/")
  if #p > 1 then p = p:gsub("/$", "") end
  local written = p
  if root == "" then
    -- this host: follow symlinks as the kernel does
    local real = core.realpath(p)
    if not real then return nil, "no such directory" end
    p = real
  end
  if core.stat(root .. p) ~= "dir" then return nil, "not a directory" end
  local best
  for _, m in ipairs(list) do
    local mp = unescape(m.mountpoint)
    if p == mp or mp == "/" or p:sub(1, #mp + 1) == mp .. "/" then
      if not best or #mp >= #best then best = mp end
    end
  end
  if not best then return nil, "no mount holds it" end
  return best, p, written
end

-- Named scratch paths -> the mount points to check; a path that is not a
-- mount point itself names the mount that holds it, said in a note.
local function scratch_mounts(root, list, paths, finding)
  local points, out = {}, {}
  for _, m in ipairs(list) do points[unescape(m.mountpoint)] = true end
  for _, path in ipairs(paths) do
    if points[path] then
      out[#out + 1] = path
    else
      local mp, real, written = M.holding_mount(root, list, path)
      if mp then
        out[#out + 1] = mp
        finding("note", "%s is not a mount point: it is a directory%s inside "
                .. "the mount %s, which S1 checks", path,
                real ~= written and (" (" .. real .. ")") or "", mp)
      else
        finding("fail", "%s: not a mount point and %s", path, real)
      end
    end
  end
  return out
end

-- The devices of the locality map (sys.locality) per NUMA node: NVMe,
-- GPUs and NICs counted per node, and each NVMe's node by name.
local function devices(loc)
  local numa_of, nvme_by_node, gpus_by_node, nics_by_node = {}, {}, {}, {}
  for _, dv in ipairs(loc.devices or {}) do
    local node = dv.numa_node or -1
    local bucket = dv.kind == "nvme" and nvme_by_node
        or dv.kind == "gpu" and gpus_by_node
        or dv.kind == "nic" and nics_by_node
    if bucket then
      bucket[node] = (bucket[node] or 0) + 1
    end
    if dv.kind == "nvme" then numa_of[dv.name] = node end
  end
  return numa_of, nvme_by_node, gpus_by_node, nics_by_node
end

-- The scratch mounts (opts.mounts, or every mount on an md array): each
-- mount's options and its array's level, chunk and members into r.
local function scan_mounts(r, root, opts, numa_of, finding)
  local mi = slurp(root .. "/proc/self/mountinfo")
  if not mi then
    error(("storage.layout: cannot read %s/proc/self/mountinfo"):format(root))
  end
  local list = M.mountinfo(mi)
  local want = {}
  if opts.mounts then
    for _, m in ipairs(scratch_mounts(root, list, opts.mounts, finding)) do
      want[m] = true
    end
  end
  local bydev = block_by_dev(root)
  for _, m in ipairs(list) do
    local blk = bydev[m.dev]
    local is_md = blk and attr(root .. "/sys/block/" .. blk .. "/md/level")
    local point = unescape(m.mountpoint)
    if (opts.mounts and want[point]) or (not opts.mounts and is_md) then
      want[point] = nil
      local mt = { mountpoint = point, fstype = m.fstype,
                   options = m.options, device = blk,
                   noatime = m.opts.noatime == true,
                   xfs = m.fstype == "xfs" }
      r.mounts[#r.mounts + 1] = mt
      if not mt.xfs then
        finding("warn", "%s is %s, not XFS", m.mountpoint, m.fstype)
      end
      if not mt.noatime then
        finding("warn", "%s is mounted without noatime (%s)", m.mountpoint,
                m.options)
      end
      if is_md then
        local dir = root .. "/sys/block/" .. blk
        local a = { name = blk, mountpoint = m.mountpoint,
                    level = attr(dir .. "/md/level"),
                    chunk_bytes = tonumber(attr(dir .. "/md/chunk_size") or ""),
                    raid_disks = tonumber(attr(dir .. "/md/raid_disks") or ""),
                    members = {}, nodes = {} }
        for _, s in ipairs(listdir(dir .. "/slaves")) do
          local d = drive(root, s, numa_of)
          a.members[#a.members + 1] = d
          a.nodes[d.numa_node or -1] = (a.nodes[d.numa_node or -1] or 0) + 1
        end
        table.sort(a.members, function(x, y) return x.id < y.id end)
        mt.array = a.name
        r.arrays[#r.arrays + 1] = a
        if a.level ~= "raid0" then
          finding("warn", "%s under %s is %s, not raid0", a.name,
                  m.mountpoint, tostring(a.level))
        end
      else
        finding("warn", "%s is not on an md array (%s)", m.mountpoint,
                tostring(blk or m.source))
      end
    end
  end
  for mp in pairs(want) do
    finding("fail", "%s: not mounted", mp)
  end
  table.sort(r.arrays, function(a, b) return a.name < b.name end)

end

-- The advice from the topology (NVMe and GPUs on more than one node =
-- split): r.split, r.advice, r.advice_text.  Returns the NVMe nodes.
local function advise(r, nvme_by_node, gpus_by_node, finding)
  local nvme_nodes, gpu_nodes = {}, {}
  for n in pairs(nvme_by_node) do if n >= 0 then nvme_nodes[n] = true end end
  for n in pairs(gpus_by_node) do if n >= 0 then gpu_nodes[n] = true end end
  r.split = count_keys(nvme_nodes) > 1
  -- GPUs on one node while NVMe spread: half the NVMe are far from every
  -- GPU whatever the arrays; say so beside the advice
  if count_keys(gpu_nodes) == 1 and count_keys(nvme_nodes) > 1 then
    finding("warn", "GPUs are all on node %s but NVMe sit on nodes %s",
            sorted_keys(gpu_nodes)[1],
            table.concat(sorted_keys(nvme_nodes), ","))
  end
  r.advice = r.split and "numa-local" or "raid0-all"
  r.advice_text = r.split
      and ("NUMA-local RAID0 per node (%s)"):format(
            table.concat((function()
              local t = {}
              for _, n in ipairs(sorted_keys(nvme_nodes)) do
                t[#t + 1] = ("node %d: %d NVMe"):format(n, nvme_by_node[n])
              end
              return t
            end)(), ", "))
      or ("one RAID0 of all %d NVMe"):format(#r.drives)
  return nvme_nodes
end

-- Does the layout follow the advice?  Each array's near node and its
-- far members; returns whether it matches and how many members are far.
local function follows(r, nvme_nodes, finding)
  local matches = #r.arrays > 0
  local far = 0
  for _, a in ipairs(r.arrays) do
    local nn = sorted_keys(a.nodes)
    a.node_list = table.concat(nn, ",")
    if #nn > 1 then
      -- the majority node is "near"; the others are the far socket
      local near, best = nil, -1
      for _, n in ipairs(nn) do
        if a.nodes[n] > best then near, best = n, a.nodes[n] end
      end
      a.near_node = near
      local tie = 0
      for _, n in ipairs(nn) do if a.nodes[n] == best then tie = tie + 1 end end
      for _, d in ipairs(a.members) do
        if r.split and (tie > 1 or d.numa_node ~= near) then
          d.far = true
          far = far + 1
        end
      end
      if r.split then
        matches = false
        if tie > 1 then
          finding("fail", "%s (%s) spans NUMA nodes %s evenly: every member "
                  .. "is on the far socket for half of the CPUs", a.name,
                  a.mountpoint, a.node_list)
        else
          local names = {}
          for _, d in ipairs(a.members) do
            if d.far then
              names[#names + 1] = ("%s (node %d)"):format(d.id, d.numa_node)
            end
          end
          finding("fail", "%s (%s) is mostly on node %d; far-socket "
                  .. "members: %s", a.name, a.mountpoint, near,
                  table.concat(names, ", "))
        end
      end
    else
      a.near_node = nn[1]
    end
  end
  if not r.split and #r.arrays ~= 1 then
    matches = false
    finding("fail", "uniform topology: the advice is one RAID0 of all NVMe, "
            .. "found %d arrays", #r.arrays)
  end
  if r.split then
    local covered = {}
    for _, a in ipairs(r.arrays) do
      if count_keys(a.nodes) == 1 then covered[a.near_node] = true end
    end
    for _, n in ipairs(sorted_keys(nvme_nodes)) do
      if not covered[n] then
        matches = false
        finding("fail", "node %d's NVMe are not in a node-local array", n)
      end
    end
  end
  local in_array = {}
  for _, a in ipairs(r.arrays) do
    for _, d in ipairs(a.members) do in_array[d.name] = true end
  end
  for _, d in ipairs(r.drives) do
    if not in_array[d.name] then
      finding("warn", "NVMe %s (%s, node %s) is in no scratch array", d.id,
              d.name, tostring(d.numa_node))
    end
  end
  return matches, far
end

-- The check.  opts.root: a recorded tree ("" = this host); opts.mounts:
-- the scratch paths (mount points, or directories inside a mount: the
-- mount that holds one is checked) (default: every mount whose source is
-- an md array).  Returns { mounts, arrays, drives, nodes, gpus_by_node,
-- nics_by_node, nvme_by_node, split, advice, matches, findings }.
function M.layout(opts)
  opts = opts or {}
  local root = opts.root or ""
  local loc = sys.locality { root = root ~= "" and root or nil }
  local numa_of, nvme_by_node, gpus_by_node, nics_by_node = devices(loc)
  local r = { arrays = {}, mounts = {}, findings = {}, drives = {},
              nodes = #(loc.nodes or {}), nvme_by_node = nvme_by_node,
              gpus_by_node = gpus_by_node, nics_by_node = nics_by_node }
  local function finding(sev, fmt, ...)
    r.findings[#r.findings + 1] = { severity = sev, text = fmt:format(...) }
  end
  for name in pairs(numa_of) do
    r.drives[#r.drives + 1] = drive(root, name, numa_of)
  end
  table.sort(r.drives, function(a, b) return a.id < b.id end)

  scan_mounts(r, root, opts, numa_of, finding)
  local nvme_nodes = advise(r, nvme_by_node, gpus_by_node, finding)
  local matches, far = follows(r, nvme_nodes, finding)
  r.far_members = far
  r.matches = matches
  return r
end

-- Disk figures over an interval from two counter snapshots (strata.counters
-- snapshot{sources={"disk"}}) dt seconds apart, as iostat computes them:
-- r/w IOPS and bytes/s from the deltas, await = (read_ticks + write_ticks)
-- / (read_ios + write_ios) ms, aqu_sz = in_queue / elapsed ms (field 11),
-- util_pct = io_ticks / elapsed ms x 100 (field 10; fio's disk_util too).
function M.disk_figures(a, b, dt, dev)
  local function d(f)
    local k = ("disk.%s.%s"):format(dev, f)
    if a[k] == nil or b[k] == nil then return nil end
    return b[k] - a[k]
  end
  if not d("read_ios") then return nil end
  local ms = dt * 1000
  local ios = d("read_ios") + d("write_ios")
  return {
    read_iops = d("read_ios") / dt, write_iops = d("write_ios") / dt,
    read_bps = d("read_bytes") / dt, write_bps = d("write_bytes") / dt,
    await_ms = ios > 0 and (d("read_ticks") + d("write_ticks")) / ios or 0,
    aqu_sz = d("in_queue") / ms,
    util_pct = math.min(100, d("io_ticks") / ms * 100),
    in_flight = b[("disk.%s.in_flight"):format(dev)],
  }
end

-- The block devices under a path (this host): the device of the mount
-- holding it (longest mount point prefix) and that device's slaves (an md
-- array's members).  Names here are only for counter lookups.
function M.devices_of(path, root)
  root = root or ""
  local mi = slurp(root .. "/proc/self/mountinfo") or ""
  local best, dev = -1, nil
  for _, m in ipairs(M.mountinfo(mi)) do
    local mp = m.mountpoint
    if (path == mp or path:sub(1, #mp + 1) == mp .. "/" or mp == "/")
        and #mp > best then
      best, dev = #mp, m.dev
    end
  end
  local name = dev and block_by_dev(root)[dev]
  if not name then return {} end
  local out = { name }
  for _, sl in ipairs(listdir(root .. "/sys/block/" .. name .. "/slaves")) do
    out[#out + 1] = sl
  end
  return out
end

-- The scratch targets of a site: site.storage.scratch is a list of
-- { path = "/scratch0", numa_node = 0 } (one per array).  None: SKIP.
function M.targets(t)
  local st = t.site.storage
  if type(st) ~= "table" or type(st.scratch) ~= "table" or #st.scratch == 0 then
    core.skip("no scratch mount in the site file (storage.scratch)")
  end
  local out = {}
  for i, sc in ipairs(st.scratch) do
    if type(sc) ~= "table" or type(sc.path) ~= "string" then
      error(("site storage.scratch[%d]: needs path (and numa_node)"):format(i))
    end
    out[i] = sc
  end
  return out
end

-- One fio-shaped job per scratch target, all targets at once is not
-- what the document asks: each node's array is measured by jobs pinned
-- to that node (numa_cpu_nodes), one target after another.  The job's
-- file is <path>/strata-<id>.dat, kept between runs (laid out once).
function M.job(t, sc, job)
  local storage = require "strata.storage"
  local st = t.site.storage
  job.filename = sc.path .. "/strata-" .. (job.name or t.id) .. ".dat"
  job.name = nil
  job.size = job.size or st.size or "1G"
  -- the timed window goes through the site's scale: (max_duration_s),
  -- which names the cut in the result (docs/specs.md)
  job.runtime = job.runtime or t.scale.seconds(st.runtime or 10, "runtime (s)")
  -- runtime 0 (S5-S7): one pass over size, not time-based
  job.time_based = job.runtime > 0
  if job.runtime == 0 then job.runtime = nil end
  -- fio's submission batching (absent: fio's defaults, storage.run's)
  for _, k in ipairs { "iodepth_batch_submit", "iodepth_batch_complete_min",
                       "iodepth_batch_complete_max" } do
    if job[k] == nil then job[k] = st[k] end
  end
  if sc.numa_node and sc.numa_node >= 0 and st.pin ~= false then
    job.numa_cpu_nodes = sc.numa_node
  end
  local counters = require "strata.counters"
  local a = counters.snapshot { sources = { "disk" } }
  local t0 = core.now()
  local r = storage.run(job)
  local dt = core.now() - t0
  local b = counters.snapshot { sources = { "disk" } }
  r.disk = {}
  for _, dev in ipairs(M.devices_of(sc.path)) do
    r.disk[dev] = M.disk_figures(a, b, dt, dev)
  end
  return r
end

return M
