-- tests/storage/layout.lua FIXTURES: the layout check on the sysfs/procfs
-- trees recorded from the qemu guest (fixtures/storage/*/SOURCE): it must
-- tell the 8-way RAID0 from the NUMA-local 4+4, name far-socket members
-- by serial, and see XFS + noatime from the guest's own mountinfo.
local lib = require "strata.lib.storage"

local dir = assert(arg[1], "usage: layout.lua FIXTURES_DIR")
local failures = 0
local function check(c, what)
  if not c then
    failures = failures + 1
    io.stderr:write("FAIL: " .. what .. "\n")
  end
end

local function run(name)
  local r = lib.layout { root = dir .. "/" .. name }
  local f = {}
  for _, x in ipairs(r.findings) do f[#f + 1] = x.severity .. ": " .. x.text end
  print(("%s: advice %s, matches %s, arrays %d, far %d; %s"):format(name,
        r.advice, tostring(r.matches), #r.arrays, r.far_members,
        table.concat(f, "; ")))
  for _, m in ipairs(r.mounts) do
    check(m.xfs and m.noatime, name .. ": " .. m.mountpoint .. " XFS noatime")
  end
  check(#r.drives == 8, name .. ": 8 NVMe, got " .. #r.drives)
  for _, d in ipairs(r.drives) do
    check(d.serial and d.serial:match("^STRATA%-NVME%-%d$"),
          name .. ": drive named by serial: " .. tostring(d.serial))
    check(d.numa_node == 0 or d.numa_node == 1,
          name .. ": NUMA node of " .. tostring(d.id))
  end
  return r
end

local function far_serials(r)
  local s = {}
  for _, a in ipairs(r.arrays) do
    for _, d in ipairs(a.members) do
      if d.far then s[#s + 1] = d.serial end
    end
  end
  table.sort(s)
  return table.concat(s, ",")
end

-- 8 drives split 4/4 over two nodes, one RAID0 of all: the advice is
-- NUMA-local, every member is on the far socket for half the CPUs
local r = run("raid0-8")
check(r.split and r.advice == "numa-local", "raid0-8: split topology")
check(#r.arrays == 1 and #r.arrays[1].members == 8, "raid0-8: one array of 8")
check(r.arrays[1].level == "raid0" and r.arrays[1].chunk_bytes == 512 * 1024,
      "raid0-8: raid0, 512 KiB chunk")
check(r.matches == false and r.far_members == 8, "raid0-8: does not match")

r = run("numa-4p4")
check(r.split and r.matches == true and r.far_members == 0,
      "numa-4p4: matches the advice")
check(#r.arrays == 2, "numa-4p4: two arrays")
for _, a in ipairs(r.arrays) do
  check(#a.members == 4 and a.node_list:match("^%d$"),
        "numa-4p4: " .. a.name .. " node-local")
end

-- each array holds one drive from the other node: named by serial
r = run("crossed-4p4")
check(r.matches == false and r.far_members == 2, "crossed-4p4: 2 far members")
check(far_serials(r) == "STRATA-NVME-4,STRATA-NVME-5",
      "crossed-4p4: far members by serial: " .. far_serials(r))

-- every drive on node 0: one RAID0 of all is the advice and the layout
r = run("uniform-8")
check(not r.split and r.advice == "raid0-all" and r.matches == true,
      "uniform-8: matches")

-- kernel names are not slots: the recorded guest probed node 1 first
local names = {}
for _, d in ipairs(run("numa-4p4").drives) do names[d.serial] = d.name end
check(names["STRATA-NVME-1"] ~= "nvme0n1",
      "serial 1 is not nvme0n1 in the recording (probe order)")

-- mountinfo parsing on the guest's own lines
local mi = lib.mountinfo(io.open(dir .. "/numa-4p4/proc/self/mountinfo"):read("a"))
local xfs = 0
for _, m in ipairs(mi) do if m.fstype == "xfs" then xfs = xfs + 1 end end
check(xfs == 2, "numa-4p4: two XFS mounts in mountinfo")

if failures > 0 then
  io.stderr:write(failures .. " failures\n")
  os.exit(1)
end
print("layout: all checks passed")
