-- strata site init: write the site file from the node it runs on
-- (docs/site.md).  Every value filled says where it came from; what the
-- node cannot tell is a TODO that `strata check` names until it is filled.
-- On a file that exists it adds only the keys the file lacks.
local args = require "strata.args"
local command = require "strata.command"
local core = require "strata.core"
local yaml = require "strata.yaml"
local spec = require "strata.spec"
local discover = require "strata.site.discover"
local render = require "strata.site.render"

local M = {
  summary = "write a site file from what this node shows (site init)",
  usage = [[
usage: strata site init [-o FILE] [--golden] [--root DIR] [--nvml FILE]
       strata site init --fleet slurm|k8s [-o FILE] [--site FILE]
Probes this node (CPUs, NUMA nodes, GPUs through NVML, RDMA ports and
their rate, NVMe scratch arrays) and writes a commented site file: each
value with where it came from, each thing the node cannot tell (S3
endpoint, credentials, peers, topology, latency targets) a TODO.  Without
-o the file goes to standard output.  With -o FILE that exists, only the
keys FILE lacks are added; nothing written there changes.
  --golden      also record this node's configuration as the golden one
                (kernel, OS, NVIDIA driver, CUDA, GPU ECC and clocks, NIC
                MTU, driver and firmware, RDMA firmware) that H4 checks
  --fleet slurm the probe on every node of this Slurm allocation (one srun
                step each): one file of the facts the nodes share, each
                difference named in a comment (no majority: a TODO), the
                golden from the majority (--golden implied)
  --fleet k8s --site FILE   the same on every node with a strata agent
                (a Job pinned to each, its pod from FILE's k8s: section,
                docs/kubernetes.md); never run against a real cluster
  --json        this node's facts as one JSON line (what --fleet reads)
  --root DIR    read a tree recorded by tests/host/record_host.sh
  --nvml FILE   GPUs from a recorded cuda.nvml() (JSON, as
                tests/gpu/record-fixtures.sh writes strata-nvml.json)]],
}

local OPTIONS = {
  ["-o"] = "output", ["--output"] = "output", ["--root"] = "root",
  ["--nvml"] = "nvml", ["--golden"] = { "golden", flag = true },
  ["--fleet"] = "fleet", ["--json"] = { "json", flag = true },
  ["--site"] = "site",
  ["-h"] = { "help", flag = true }, ["--help"] = { "help", flag = true },
}

local function read(path)
  local f, err = io.open(path, "rb")
  if not f then spec.error(path, "cannot read: %s", err) end
  local s = f:read("a")
  f:close()
  return s
end

-- NVML's inventory: the recorded file, else the live library (none: nil).
local function nvml_of(o)
  if o.nvml then
    local ok, t = pcall(require("cjson").decode, read(o.nvml))
    if not ok or type(t) ~= "table" then
      spec.error(o.nvml, "not a recorded cuda.nvml() (JSON): %s", tostring(t))
    end
    return t, o.nvml
  end
  if o.root then return nil end     -- a recorded tree has no live GPUs
  local ok, inv = pcall(function() return require("strata.cuda").nvml() end)
  if ok then return inv, "NVML" end
  return nil
end

local function header()
  return ([[
# strata site file, written by `strata site init` on %s.
# Each value it filled says where it came from.  A value TODO is what the
# node cannot tell: fill it (`strata check --site` names each one until
# then; a run leaves it out).  Re-running `strata site init -o` on this
# file adds only keys it lacks.  Every key: specs/site.example.yaml.
]]):format(core.utc())
end

-- This node's facts and TODOs (and its golden with --golden).
local function probe(o)
  if o.root and core.stat(o.root) ~= "dir" then
    spec.error(o.root, "--root: not a folder")
  end
  local nvml, from = nvml_of(o)
  local entries = discover.node { root = o.root, nvml = nvml,
                                  nvml_from = from }
  if o.golden then
    for _, e in ipairs(discover.golden { root = o.root, nvml = nvml }) do
      entries[#entries + 1] = e
    end
  end
  return entries
end

-- --fleet: every node's probe, merged; the header names the nodes
local function fleet_entries(o)
  local sf = require "strata.site.fleet"
  local strata = core.exe_dir() .. "/strata"
  local answers, failed, what
  if o.fleet == "slurm" then
    local slurm = require "strata.fleet.slurm"
    local ok, alloc, a, f = pcall(sf.collect_slurm, strata)
    if not ok then
      if slurm.is_usage_error(alloc) then return nil, slurm.is_usage_error(alloc), 2 end
      error(alloc, 0)
    end
    answers, failed = a, f
    what = ("Slurm job %s (%s)"):format(tostring(alloc.job), alloc.nodelist)
  elseif o.fleet == "k8s" then
    answers, failed, what = require("strata.site.k8s").collect(o)
    if not answers then return nil, what, 2 end
  else
    error(args.usage_error("--fleet: slurm or k8s, not " .. tostring(o.fleet)), 0)
  end
  for _, f in ipairs(failed) do
    io.stderr:write(("strata: site init --fleet: %s left out: %s\n"):format(f.node, f.why))
  end
  if #answers == 0 then return nil, "no node answered", 1 end
  local names = {}
  for _, a in ipairs(answers) do names[#names + 1] = a.node end
  local head = header() .. ("# Merged from %d nodes of %s: %s.  A value the nodes\n"
    .. "# disagree on is the majority's, its comment names each node that\n"
    .. "# differs (DIFFERS); with no majority it is a TODO.%s\n"):format(#answers,
    what, table.concat(names, ", "), #failed > 0 and ("  Left out (no answer): "
    .. #failed .. " nodes.") or "")
  return sf.merge(answers), head
end

local function init(o)
  local entries, head, rc
  if o.fleet then
    entries, head, rc = fleet_entries(o)
    if not entries then
      io.stderr:write("strata: site init --fleet ", o.fleet, ": ", head, "\n")
      return rc
    end
  else
    entries, head = probe(o), header()
  end
  if o.json then
    -- the node as the scheduler names it: srun(1) SLURMD_NODENAME, or
    -- the pod's spec.nodeName (STRATA_NODE, strata.k8s.render.node_pod)
    local name = os.getenv("SLURMD_NODENAME") or os.getenv("STRATA_NODE")
    io.stdout:write(require("strata.site.fleet").MARK, require("cjson").encode {
      node = name, entries = entries }, "\n")
    return 0
  end
  if not o.output then
    io.stdout:write(render.text(entries, head))
    return 0
  end
  if core.stat(o.output) ~= "file" then
    local f = assert(io.open(o.output, "wb"))
    f:write(render.text(entries, head))
    f:close()
    io.stderr:write(("strata: wrote %s (%d keys, TODOs named by "
      .. "`strata check --site %s`)\n"):format(o.output, #entries, o.output))
    return 0
  end
  local text = read(o.output)
  local doc = spec.protect(yaml.load_file, o.output)
  if type(doc) ~= "table" then
    spec.error(o.output, "not a site file (a mapping of sections)")
  end
  local new, added, skipped = render.merge(text, doc, entries)
  for _, s in ipairs(skipped) do
    io.stderr:write("strata: ", o.output, ": ", s, "\n")
  end
  if #added == 0 then
    io.stderr:write("strata: ", o.output, ": every key is there; "
      .. "nothing changed\n")
    return 0
  end
  local f = assert(io.open(o.output, "wb"))
  f:write(new)
  f:close()
  io.stderr:write(("strata: %s: added %s\n"):format(o.output,
    table.concat(added, ", ")))
  return 0
end

function M.main(argv)
  return command.guard(function()
    local o, pos = args.parse(argv, OPTIONS)
    if o.help then io.stdout:write(M.usage, "\n") return 0 end
    if pos[1] ~= "init" or pos[2] then
      error(args.usage_error("usage: strata site init [-o FILE] [--golden] "
        .. "[--root DIR] [--nvml FILE] [--fleet slurm|k8s] [--json]"), 0)
    end
    return init(o)
  end)
end

return M
