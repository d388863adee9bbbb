-- strata.setup: what run, list and check share: load the specs, the site
-- file and the thresholds (file + --set), and resolve every criterion.
-- Errors raise SpecError values naming file:line (exit code 2).
local core = require "strata.core"
local yaml = require "strata.yaml"
local spec = require "strata.spec"
local thresholds = require "strata.thresholds"

local M = {}
local hardware_packs

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

-- The TODOs `strata site init` left in the site file (docs/site.md):
-- `strata check` (opts.todo_error) names every one and fails; a run
-- leaves them out, says so, and goes on (s.todos).
local function todos(s, lines, opts)
  if type(s.site) ~= "table" then return end
  s.todos = require("strata.site.render").strip_todos(s.site, lines)
  if #s.todos == 0 then return end
  local names = {}
  for _, t in ipairs(s.todos) do
    names[#names + 1] = ("%s (line %s)"):format(t.path, t.line or "?")
  end
  local where = opts.site .. ":" .. (s.todos[1].line or 1)
  if opts.todo_error then
    spec.error(where, "%d TODO%s to fill (written by strata site init): %s",
               #s.todos, #s.todos == 1 and "" or "s", table.concat(names, ", "))
  end
  io.stderr:write(("strata: warning: %s: %d TODO%s left out of this run "
    .. "(fill them: strata check --site %s): %s\n"):format(where, #s.todos,
    #s.todos == 1 and "" or "s", opts.site, table.concat(names, ", ")))
end

-- Overlay thresholds b on a: b's criteria replace a's, metric by metric.
local function overlay(a, b)
  for id, metrics in pairs(b) do
    a[id] = a[id] or {}
    for metric, ops in pairs(metrics) do a[id][metric] = ops end
  end
end

-- The hardware packs of specs/packs (beside the thresholds file, else the
-- shipped ones) that hold for this site: s.packs = { {name, file, why} }.
hardware_packs = function(s, file_crit, tfile, opts)
  local packs = require "strata.site.packs"
  local dir = tfile and ((tfile:match("^(.*)/[^/]*$") or ".") .. "/packs")
  if not dir or core.stat(dir) ~= "dir" then dir = STRATA_HOME .. "/specs/packs" end
  s.packs = {}
  if core.stat(dir .. "/index.yaml") ~= "file" then return end
  local crits
  s.packs, crits = packs.choose(dir, s.site, opts.site)
  for i, p in ipairs(s.packs) do
    overlay(file_crit, crits[i])
    s.files[#s.files + 1] = { path = p.file, role = "hardware pack" }
  end
end

-- The tests a thresholds file names that no loaded spec defines: a typo,
-- or specs left out of this run (`strata check --site F specs/s3` with the
-- whole runbook's thresholds).  One line per file, not one per test: the
-- count and the first few IDs with their lines.  Reads the file's keys
-- itself (thresholds.load is called without `known`, so it says nothing).
local UNLOADED_SHOWN = 5
local function warn_unloaded(file, known)
  local doc, lines = spec.protect(yaml.load_file, file)
  local ids = {}
  for id in pairs(type(doc) == "table" and doc or {}) do
    if not known[id] then
      ids[#ids + 1] = { id = tostring(id), line = (lines[doc] or {})[id] or 0 }
    end
  end
  if #ids == 0 then return end
  table.sort(ids, function(a, b) return a.line < b.line end)
  local shown = {}
  for i = 1, math.min(#ids, UNLOADED_SHOWN) do
    shown[i] = ("%s (line %d)"):format(ids[i].id, ids[i].line)
  end
  io.stderr:write(("strata: warning: %s: %s no loaded spec defines: %s%s "
    .. "(specs left out of this run, or a typo)\n"):format(file,
    #ids == 1 and "names a test" or ("names " .. #ids .. " tests"),
    table.concat(shown, ", "),
    #ids > #shown and (", and " .. (#ids - #shown) .. " more") or ""))
end

-- site.storage's submission keys (docs/storage.md, "How it submits"):
-- fio's own option names, whole numbers 0..1024 (storage.run's bounds),
-- checked here so a typo stops the run at its line, not at S2.
local BATCH_KEYS = { "iodepth_batch_submit", "iodepth_batch_complete_min",
                     "iodepth_batch_complete_max" }
local function check_storage(site, lines, file)
  local st = site.storage
  if type(st) ~= "table" then return end
  for _, k in ipairs(BATCH_KEYS) do
    local v = st[k]
    if v ~= nil and (math.type(v) ~= "integer" or v < 0 or v > 1024) then
      local n = lines and lines[st] and lines[st][k]
      spec.error(n and (file .. ":" .. n) or file, "storage.%s must be a "
                 .. "whole number 0..1024 (fio's option; 0: the iodepth for "
                 .. "_submit, a poll for _complete_min), got %s", k,
                 tostring(v))
    end
  end
end

-- Site keys that once held a rule and are no longer read (issue 26: every
-- rule is a criterion): a site file that still sets one is told where the
-- rule lives now, once, on stderr; nothing else changes.
local RETIRED = {
  { "s3rdma.benefit", "T1T4.benefit (any_of) in specs/thresholds.yaml" },
  { "vllm.e5_rule", "E5.benefit (any_of) in specs/thresholds.yaml" },
  { "nccl.pair_ratio", "R9P.min_pair_ratio in specs/thresholds.yaml" },
}
local function warn_retired(site, file)
  for _, r in ipairs(RETIRED) do
    if require("strata.thresholds").site_get(site, r[1]) ~= nil then
      io.stderr:write(("strata: warning: %s: site.%s is no longer read: the "
                       .. "rule is %s (edit it there, or --set)\n")
                      :format(file, r[1], r[2]))
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
    todos(s, lines, opts)
    check_storage(s.site, lines, opts.site)
    warn_retired(s.site, opts.site)
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
    file_crit, gates = thresholds.load(tfile)
    if opts.warn_unknown then warn_unloaded(tfile, known) end
    s.files[#s.files + 1] = { path = tfile, role = "thresholds" }
  end
  -- hardware packs (docs/site.md): chosen by what the site file or the
  -- node shows, overlaid on the thresholds file, under a profile
  hardware_packs(s, file_crit, tfile, opts)
  -- a profile (--profile, e.g. the lab's) replaces the criteria of the
  -- metrics it names and keeps the rest
  if opts.profile then
    if core.stat(opts.profile) ~= "file" then
      spec.error(opts.profile, "thresholds profile not found")
    end
    local prof, pgates = thresholds.load(opts.profile)
    if opts.warn_unknown then warn_unloaded(opts.profile, known) end
    for id, g in pairs(pgates) do gates[id] = g end
    overlay(file_crit, prof)
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
