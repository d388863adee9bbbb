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
Probes this node (CPUs, NUMA nodes, GPUs through NVML, RDMA ports and
their rate, NVMe scratch arrays) and writes a commented site file: each
value with where it came from, each thing the node cannot tell (S3
endpoint, credentials, peers, topology, latency targets) a TODO.  Without
-o the file goes to standard output.  With -o FILE that exists, only the
keys FILE lacks are added; nothing written there changes.
  --golden      also record this node's configuration as the golden one
                (kernel, OS, NVIDIA driver, CUDA, GPU ECC and clocks, NIC
                MTU, driver and firmware, RDMA firmware) that H4 checks
  --root DIR    read a tree recorded by tests/host/record_host.sh
  --nvml FILE   GPUs from a recorded cuda.nvml() (JSON, as
                tests/gpu/record-fixtures.sh writes strata-nvml.json)]],
}

local OPTIONS = {
  ["-o"] = "output", ["--output"] = "output", ["--root"] = "root",
  ["--nvml"] = "nvml", ["--golden"] = { "golden", flag = true },
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

local function init(o)
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
  if not o.output then
    io.stdout:write(render.text(entries, header()))
    return 0
  end
  if core.stat(o.output) ~= "file" then
    local f = assert(io.open(o.output, "wb"))
    f:write(render.text(entries, header()))
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
        .. "[--root DIR] [--nvml FILE]"), 0)
    end
    return init(o)
  end)
end

return M
