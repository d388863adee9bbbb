-- strata lab: start, inspect and stop the local emulated cluster
-- (docs/lab.md); and `strata run --lab`, which runs the runbook in it.
local core = require "strata.core"
local args = require "strata.args"
local lab = require "strata.lab"

local M = {
  summary = "the local emulated cluster: lab up [--senders N] [--nvme N] [--layout L] | status | down",
  usage = [[
usage: strata lab up [--senders N] [--nvme N] [--layout numa-local|one-array]
                                     start it (again: harmless)
       strata lab status             is every part up? (exit 3: not up)
       strata lab down               stop it; no process, no files left

The lab: Soft-RoCE qemu guests (TCG) on one emulated Ethernet segment —
guest a runs strata, guest b runs `strata serve` and the reference
S3-over-RDMA server, N more guests (default 1) run `strata serve` as R7
senders — and a one-node Ceph RGW with the mgr prometheus module on the
host.  Guest a has two emulated NUMA nodes and --nvme N emulated NVMe
drives (default 4, 0: none), half per node, assembled into md RAID0 + XFS
scratch: one array per node (numa-local, the default) or one of all
(one-array).  `lab up` writes its site file (printed).  Its folder is
$STRATA_LAB_DIR, default <build>/lab.  `strata run --lab` uses it.
Exit: 0 done, 2 a part could not start (the message says which and why),
3 status: not up.]],
}

-- `lab up`'s options (status and down take none); the docs test parses
-- the documented `lab up` lines with them (tests/docs/probe.lua)
M.UP_OPTIONS = {
  ["--senders"] = "senders", ["--nvme"] = "nvme", ["--layout"] = "layout",
}

function M.main(argv)
  local verb = argv[1]
  local rest = {}
  for i = 2, #argv do rest[#rest + 1] = argv[i] end
  if verb == nil or verb == "-h" or verb == "--help" then
    io.stdout:write(M.usage, "\n")
    return verb == nil and 2 or 0
  end
  if verb ~= "up" and verb ~= "status" and verb ~= "down" then
    io.stderr:write("strata lab: unknown verb '", verb, "'\n", M.usage, "\n")
    return 2
  end
  local ok, o = pcall(args.parse, rest, verb == "up" and M.UP_OPTIONS or {})
  if not ok then
    io.stderr:write("strata lab: ", tostring(o), "\n")
    return 2
  end
  local pass = {}
  if o.senders then
    if not tostring(o.senders):match("^%d+$") or tonumber(o.senders) > 7 then
      io.stderr:write("strata lab: --senders must be 0..7\n")
      return 2
    end
    pass = { "--senders", o.senders }
  end
  if o.nvme then
    if not tostring(o.nvme):match("^%d+$") or tonumber(o.nvme) > 16
        or tonumber(o.nvme) % 2 == 1 then
      io.stderr:write("strata lab: --nvme must be an even number 0..16 (half per NUMA node)\n")
      return 2
    end
    pass[#pass + 1] = "--nvme"; pass[#pass + 1] = o.nvme
  end
  if o.layout then
    if o.layout ~= "numa-local" and o.layout ~= "one-array" then
      io.stderr:write("strata lab: --layout must be numa-local or one-array\n")
      return 2
    end
    pass[#pass + 1] = "--layout"; pass[#pass + 1] = o.layout
  end
  return lab.sh(verb, pass)
end

-- strata run --lab [options] [PATH...]: up (unless it is), the run in
-- guest a with the lab's site file and profile, down (unless it was up).
function M.run(argv, o)
  if o.site then
    error(args.usage_error("--lab writes its own site file: drop --site"), 0)
  end
  local cwd = core.realpath(".")
  local src, build = core.realpath(STRATA_HOME), core.realpath(lab.build_dir())
  local function inside(p, root) return p == root or p:sub(1, #root + 1) == root .. "/" end
  if not (inside(cwd, src) or inside(cwd, build)) then
    error(args.usage_error(("--lab runs strata in a guest that sees %s and %s "
      .. "only: run it from there"):format(src, build)), 0)
  end
  local was_up = core.stat(lab.site_file()) == "file"
  local rc = lab.sh("up")
  if rc ~= 0 then return rc end
  local gargs = { "run", "--site", lab.site_file(), "--profile", lab.profile_file() }
  local has_output = false
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--lab" then
      i = i + 1
    else
      if a == "-o" or a == "--output" then has_output = true end
      gargs[#gargs + 1] = a
      i = i + 1
    end
  end
  if not has_output then
    local xlsx = ("%s/reports/strata-lab-%s.xlsx"):format(cwd,
      core.utc(nil, "%Y%m%dT%H%M%SZ"))
    core.mkdir_p(cwd .. "/reports")
    gargs[#gargs + 1] = "-o"
    gargs[#gargs + 1] = xlsx
  end
  local t0 = core.now()
  rc = lab.exec_strata(gargs)
  io.stderr:write(("strata: the lab run took %.0f s\n"):format(core.now() - t0))
  if not was_up then
    local drc = lab.sh("down")
    if drc ~= 0 and rc == 0 then rc = drc end
  end
  return rc
end

return M
