-- strata.lab: the local emulated cluster (docs/lab.md) as `strata lab`
-- and `strata run --lab` use it.  The parts themselves (qemu guests, the
-- RGW, the site file) are lab/lab.sh's, the harness the tests use too;
-- this module finds the trees, calls it, and runs a strata command in
-- guest a.
local core = require "strata.core"

local M = {}

-- What the Summary says of every run against the lab.
M.STAMP = "LAB: emulated Soft-RoCE under TCG and a one-node RGW: the "
  .. "figures prove the method, not this hardware"

local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- The build tree: the folder of the running binary.
function M.build_dir()
  local exe = core.realpath("/proc/self/exe")
  return exe and exe:match("^(.*)/[^/]+$") or "build"
end

-- The lab's folder: $STRATA_LAB_DIR, else <build>/lab.
function M.dir()
  local d = os.getenv("STRATA_LAB_DIR")
  if d and d ~= "" then return d end
  return M.build_dir() .. "/lab"
end

-- Run lab/lab.sh VERB [args]; returns its exit status.
function M.sh(verb, args)
  local argv = { "bash", STRATA_HOME .. "/lab/lab.sh", verb,
                 "--dir", M.dir(), "--build", M.build_dir() }
  for _, a in ipairs(args or {}) do argv[#argv + 1] = a end
  local parts = {}
  for i, a in ipairs(argv) do parts[i] = quote(a) end
  io.stdout:flush()
  local ok, how, code = os.execute(table.concat(parts, " "))
  if how == "signal" then return 128 + code end
  return ok and 0 or code
end

-- Run `strata ARGS...` in guest a (the runner); returns its exit status.
function M.exec_strata(args)
  local argv = { "--", "a", M.build_dir() .. "/strata" }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  return M.sh("exec", argv)
end

function M.site_file() return M.dir() .. "/site.yaml" end

-- The lab's thresholds profile (overlaid on the shipped thresholds).
function M.profile_file() return STRATA_HOME .. "/lab/thresholds.yaml" end

return M
