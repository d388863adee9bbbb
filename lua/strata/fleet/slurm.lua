-- strata.fleet.slurm: what a fleet run asks of Slurm, in one place.
-- The allocation's nodes (SLURM_JOB_NODELIST expanded by `scontrol show
-- hostnames`), each node's address and features (`scontrol show node
-- -o`), and the srun command lines that start one task on one node as a
-- step of the allocation (--overlap: steps share the allocation's CPUs,
-- so an agent step and a test step run on a node at once).
-- Names: srun(1), scontrol(1), sbatch(1) of Slurm 22.05 (docs/provenance.md).
local tool = require "strata.lib.tool"

local M = {}

local function fail(msg) error({ fleet_usage = msg }, 0) end
M.fail = fail

function M.is_usage_error(e) return type(e) == "table" and e.fleet_usage end

local function run(argv, timeout)
  local sys = require "strata.sys"
  local r = sys.run { cmd = argv, timeout = timeout or 30 }
  if r.code == 127 and r.exec_errno ~= 0 then
    fail(("%s not found on PATH: run inside a Slurm allocation on a node "
          .. "with the Slurm client commands"):format(argv[1]))
  end
  if r.timed_out or r.code ~= 0 then
    fail(("%s failed (%s): %s"):format(table.concat(argv, " "),
      r.timed_out and "no answer in time" or ("exit " .. tostring(r.code)),
      (r.stderr or ""):gsub("%s+$", ""):sub(-300)))
  end
  return r.stdout or ""
end

-- A hostlist expression ("n[1-3],gpu07") as node names, by Slurm itself.
function M.hostnames(expr)
  local out = {}
  for name in run { "scontrol", "show", "hostnames", expr }:gmatch("%S+") do
    out[#out + 1] = name
  end
  return out
end

-- "Key=Value Key=Value ..." of `scontrol show node -o` (values hold no
-- spaces except OS=..., which runs to the next key).
local function parse_node_line(line)
  local n = {}
  for k, v in line:gmatch("(%u[%w_]*)=(%S*)") do n[k] = v end
  return n
end
M.parse_node_line = parse_node_line

-- The allocation this process runs in: { job = id, nodes = { {name=,
-- addr=, hostname=, features={set}}, ... } } in Slurm's order.
function M.allocation()
  local list = os.getenv("SLURM_JOB_NODELIST") or os.getenv("SLURM_NODELIST")
  if not list or list == "" then
    fail("--fleet slurm: not inside a Slurm allocation (SLURM_JOB_NODELIST "
         .. "is not set): run it under salloc or from an sbatch script "
         .. "(docs/fleet.md)")
  end
  tool.need("srun", nil, "the fleet runs its nodes' tasks through srun")
  local names = M.hostnames(list)
  local info = {}
  local text = run { "scontrol", "show", "node", "-o", list }
  for line in text:gmatch("[^\n]+") do
    local n = parse_node_line(line)
    if n.NodeName then info[n.NodeName] = n end
  end
  local nodes = {}
  for _, name in ipairs(names) do
    local n = info[name] or {}
    local feats = {}
    for f in ((n.ActiveFeatures ~= "(null)" and n.ActiveFeatures)
              or (n.AvailableFeatures ~= "(null)" and n.AvailableFeatures)
              or ""):gmatch("[^,]+") do
      feats[f] = true
    end
    nodes[#nodes + 1] = { name = name, addr = n.NodeAddr or name,
                          hostname = n.NodeHostName or name, features = feats }
  end
  return { job = os.getenv("SLURM_JOB_ID"), nodes = nodes, nodelist = list }
end

-- srun argv starting cmd as one task on node (a step of the allocation).
-- opts.name: the step's name (squeue -s shows it).
function M.srun(node, cmd, opts)
  opts = opts or {}
  local argv = { "srun", "--nodes=1", "--ntasks=1", "--nodelist=" .. node,
                 "--overlap", "--quiet", "--kill-on-bad-exit=1",
                 "--job-name=" .. (opts.name or "strata") }
  for _, a in ipairs(cmd) do argv[#argv + 1] = a end
  return argv
end

return M
