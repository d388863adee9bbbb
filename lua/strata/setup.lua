-- strata.setup: what run, list and check share: load the specs, the site
-- file and the thresholds (file + --set), and resolve every criterion.
-- Errors raise SpecError values naming file:line (exit code 2).
local core = require "strata.core"
local yaml = require "strata.yaml"
local spec = require "strata.spec"
local thresholds = require "strata.thresholds"

local M = {}

-- path relative to the current folder when it lies below it: criteria
-- quote their source, and "specs/thresholds.yaml:12" reads better.
local function relative(path)
  local cwd = core.realpath(".")
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then return path:sub(#cwd + 2) end
  return path
end

-- Each file's SHA-256 ("" when it cannot be read).
local function sha256s(files)
  local sums = {}
  for i, f in ipairs(files) do
    local h = io.open(f.path, "rb")
    sums[i] = h and core.sha256(h:read("a")) or ""
    if h then h:close() end
  end
  return sums
end

-- The same, taken in a child process: libcrypto is loaded on first use
-- (engine/core/crypto_load.c), and loaded here it would be mapped in the
-- runner, so in the fork server and every cell it forks (docs/internals.md,
-- "How a test runs").  In this process only if that child failed.
local function file_sums(files)
  local st, out = core.isolate(function()
    return table.concat(sha256s(files), "\n")
  end, { timeout = 60 })
  if st ~= "ok" then return sha256s(files) end
  local sums = {}
  for sum in (out .. "\n"):gmatch("([^\n]*)\n") do sums[#sums + 1] = sum end
  return sums
end

local function default_thresholds(paths)
  for _, p in ipairs(paths) do
    local dir = core.stat(p) == "dir" and p or (p:match("^(.*)/[^/]*$") or ".")
    dir = core.realpath(dir)
    while dir do
      local f = dir .. "/thresholds.yaml"
      if core.stat(f) == "file" then return relative(f) end
      local parent = dir:match("^(.*)/[^/]+$")
      if not parent or parent == dir or parent == "" then break end
      dir = parent
    end
  end
end

-- site.limits (docs/cli.md, "Limits"): known keys, numbers >= 0.
local LIMIT_KEYS = { memory_mb = true, cpu_s = true, open_files = true,
                     output_mb = true }
local function check_limits(site, lines, file)
  local l = site.limits
  if l == nil then return end
  local function at(t, k)
    local n = lines and lines[t] and lines[t][k]
    return n and (file .. ":" .. n) or file
  end
  if type(l) ~= "table" then
    spec.error(at(site, "limits"), "limits must be a mapping of %s",
               "memory_mb, cpu_s, open_files, output_mb")
  end
  for k, v in pairs(l) do
    if not LIMIT_KEYS[k] then
      spec.error(at(l, k), "limits.%s: unknown limit (memory_mb, cpu_s, "
                 .. "open_files, output_mb)", tostring(k))
    end
    if math.type(v) == nil or v < 0 or v ~= v or v == math.huge then
      spec.error(at(l, k), "limits.%s must be a number >= 0 (0: no limit), "
                 .. "got %s", k, tostring(v))
    end
  end
end

-- opts: paths, site (file), thresholds (file), profile (file overlaid on
-- the thresholds), set (list of K=V); site_table: the site as a table
-- already read (a fleet node's, from the launcher) instead of a file
-- specs/ in the current folder, else the one shipped with strata.
function M.default_paths()
  return { core.stat("specs") == "dir" and "specs" or (STRATA_HOME .. "/specs") }
end

function M.load(opts)
  local paths = opts.paths
  if #paths == 0 then paths = M.default_paths() end
  local tests, by_id, files = spec.load(paths)
  local s = { paths = paths, tests = tests, by_id = by_id, files = {} }
  for _, f in ipairs(files) do s.files[#s.files + 1] = { path = f, role = "spec" } end

  s.site = opts.site_table or {}
  if opts.site then
    if core.stat(opts.site) ~= "file" then
      spec.error(opts.site, "site file not found")
    end
    local lines
    s.site, lines = spec.protect(yaml.load_file, opts.site)
    s.files[#s.files + 1] = { path = opts.site, role = "site" }
    check_limits(s.site, lines, opts.site)
  end
  require("strata.scale").apply(tests, s.site,
    opts.site or (opts.site_table and "the launcher's site file"))

  -- the fleet model's criteria (strata.fleet.model.TEST): resolved, --set
  -- and listed like any test's, never run; in s.criteria for fleet runs
  local fleet_test = require("strata.fleet.model").TEST
  local known = setmetatable({ [fleet_test.id] = fleet_test }, { __index = by_id })
  local tfile = opts.thresholds or default_thresholds(paths)
  local file_crit, gates = {}, {}
  if tfile then
    if core.stat(tfile) ~= "file" then
      spec.error(tfile, "thresholds file not found")
    end
    -- tests the file names but no loaded spec defines: a typo, or specs
    -- left out of this run; only `strata check` warns about them
    file_crit, gates = thresholds.load(tfile, opts.warn_unknown and known or nil)
    s.files[#s.files + 1] = { path = tfile, role = "thresholds" }
  end
  -- a profile (--profile, e.g. the lab's) replaces the criteria of the
  -- metrics it names and keeps the rest
  if opts.profile then
    if core.stat(opts.profile) ~= "file" then
      spec.error(opts.profile, "thresholds profile not found")
    end
    local prof, pgates = thresholds.load(opts.profile,
                                         opts.warn_unknown and known or nil)
    for id, g in pairs(pgates) do gates[id] = g end
    for id, metrics in pairs(prof) do
      file_crit[id] = file_crit[id] or {}
      for metric, ops in pairs(metrics) do file_crit[id][metric] = ops end
    end
    s.files[#s.files + 1] = { path = opts.profile, role = "thresholds profile" }
  end
  s.thresholds_file = tfile
  -- record only: a test's `gate = false` (spec), `gate: false` (thresholds
  -- file or profile), or every test (--no-gate)
  for _, t in ipairs(tests) do
    local g = gates[t.id]
    if g then t.gate, t.gate_source = g.value, g.source end
    if opts.no_gate then t.gate, t.gate_source = false, "--no-gate" end
  end

  local sets = {}
  for _, kv in ipairs(opts.set or {}) do
    local set, err = thresholds.parse_set(kv)
    if not set then spec.error("--set " .. kv, "%s", err) end
    sets[#sets + 1] = set
  end
  local all = { fleet_test }
  for _, t in ipairs(tests) do all[#all + 1] = t end
  s.criteria = {}
  for _, c in ipairs(thresholds.resolve(all, known, file_crit, sets)) do
    if c.id ~= fleet_test.id or opts.fleet then s.criteria[#s.criteria + 1] = c end
  end
  local sums = file_sums(s.files)
  for i, f in ipairs(s.files) do
    if sums[i] ~= "" then f.sha256 = sums[i] end
  end
  return s
end

return M
