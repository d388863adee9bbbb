-- strata.severity: what a node's verdict asks of its scheduler, as data.
-- The rules live in the site file (`severity: { rules: [...] }`) or, when
-- the site names none, in severity.yaml beside the thresholds file (the
-- shipped specs/severity.yaml); never in code.  Each rule:
--   status:      test statuses it matches (PASS FAIL ERROR WARN INCOMPLETE
--                ...: strings, whatever strata.verdict names)
--   at_or_below: optional rung (a layer of spec.LAYERS): only tests on
--                that rung or a lower one match
--   tests:       optional list of test IDs: only those match
--   action:      drain (Slurm State=DRAIN; Kubernetes taint + label),
--                warn (a label/annotation only; nothing in Slurm) or none
-- The first rule a node's tests match decides, its lowest matching test
-- named; no rule matching: none.  Used by the fleet (Slurm, Kubernetes),
-- the health profile and the single-host Run sheet alike.
local core = require "strata.core"
local spec = require "strata.spec"
local yaml = require "strata.yaml"

local M = {}

M.ACTIONS = { drain = 3, warn = 2, none = 1 }

local function at(lines, t, k, file)
  local n = lines and lines[t] and lines[t][k]
  return n and (file .. ":" .. n) or file
end

-- The rules of doc.severity (doc read from file with its line table).
local function parse(sev, lines, file)
  local where = at(lines, sev, "rules", file)
  if type(sev) ~= "table" or type(sev.rules) ~= "table" then
    spec.error(where, "severity: expected { rules: [ {status: [...], action: drain|warn|none}, ... ] }")
  end
  for k in pairs(sev) do
    if k ~= "rules" then spec.error(at(lines, sev, k, file), "severity.%s: unknown key (rules)", tostring(k)) end
  end
  local rules = {}
  for i, r in ipairs(sev.rules) do
    local w = at(lines, sev.rules, i, file)
    if type(r) ~= "table" then spec.error(w, "severity.rules[%d]: expected a mapping", i) end
    for k in pairs(r) do
      if k ~= "status" and k ~= "at_or_below" and k ~= "tests" and k ~= "action" then
        spec.error(at(lines, r, k, file), "severity.rules[%d].%s: unknown key "
                   .. "(status, at_or_below, tests, action)", i, tostring(k))
      end
    end
    if not M.ACTIONS[r.action] then
      spec.error(at(lines, r, "action", file) or w, "severity.rules[%d].action: '%s' is not "
                 .. "drain, warn or none", i, tostring(r.action))
    end
    local st = type(r.status) == "string" and { r.status } or r.status
    if type(st) ~= "table" or #st == 0 then
      spec.error(w, "severity.rules[%d].status: expected a list of statuses", i)
    end
    local known = {}
    for _, x in ipairs(require("strata.verdict").STATUSES) do known[x] = true end
    for _, x in ipairs(st) do
      if not known[x] then
        spec.error(at(lines, r, "status", file) or w, "severity.rules[%d].status: '%s' is not "
                   .. "a status (%s)", i, tostring(x), table.concat(require("strata.verdict").STATUSES, ", "))
      end
    end
    if r.at_or_below ~= nil and not spec.LAYER_RANK[r.at_or_below] then
      spec.error(at(lines, r, "at_or_below", file), "severity.rules[%d].at_or_below: '%s' "
                 .. "is not a rung (%s)", i, tostring(r.at_or_below), table.concat(spec.LAYERS, ", "))
    end
    local tests
    if r.tests ~= nil then
      tests = {}
      for _, id in ipairs(type(r.tests) == "table" and r.tests or { r.tests }) do
        tests[#tests + 1] = tostring(id)
      end
    end
    rules[#rules + 1] = { status = st, at_or_below = r.at_or_below,
                          tests = tests, action = r.action, source = w }
  end
  return rules
end

local function beside(path, name)
  local dir = path and (path:match("^(.*)/[^/]*$") or ".")
  local f = dir and (dir .. "/" .. name)
  if f and core.stat(f) == "file" then return f end
end

-- The severity model of a run: { source = file, rules = {...} }.
-- site_path: the site file (nil: none); site: its table (as loaded);
-- thresholds_path: the thresholds file in use (its folder holds the
-- default severity.yaml).
function M.load(site_path, site, thresholds_path)
  if site_path and site and site.severity ~= nil then
    local doc, lines = spec.protect(yaml.load_file, site_path)
    return { source = site_path, rules = parse(doc.severity, lines, site_path) }
  end
  local f = beside(thresholds_path, "severity.yaml")
    or (STRATA_HOME and beside(STRATA_HOME .. "/specs/x", "severity.yaml"))
  if not f then
    return { source = "none (no severity: in the site file, no severity.yaml "
                      .. "beside the thresholds file): every action none", rules = {} }
  end
  local doc, lines = spec.protect(yaml.load_file, f)
  if type(doc) ~= "table" or doc.severity == nil then
    spec.error(f, "expected a top-level 'severity:' mapping")
  end
  return { source = f, rules = parse(doc.severity, lines, f) }
end

-- M.record(M.load(...)), read in a child process: libyaml is loaded on
-- first use (engine/yaml/yaml_load.c), and a run that reads no other YAML
-- must not map it in the fork server and its cells (docs/internals.md,
-- "How a test runs").  A bad file is a usage error (exit 2) here too.
function M.load_record(site_path, site, thresholds_path)
  local cjson = require "cjson"
  local st, out = core.isolate(function()
    local ok, m = pcall(M.load, site_path, site, thresholds_path)
    if not ok then return cjson.encode { error = tostring(m) } end
    return cjson.encode { model = M.record(m) }
  end, { timeout = 60 })
  if st ~= "ok" then return M.record(M.load(site_path, site, thresholds_path)) end
  local r = require("strata.journal").denull(cjson.decode(out))
  if r.error then error(require("strata.args").usage_error(r.error), 0) end
  return r.model
end

-- The model as the journal and the JSON keep it.
function M.record(sev)
  local rules = {}
  for _, r in ipairs(sev.rules) do
    rules[#rules + 1] = { status = r.status, at_or_below = r.at_or_below, tests = r.tests,
                          action = r.action, source = r.source }
  end
  return { source = sev.source, rules = rules }
end

-- A rule's one-line text ("FAIL, ERROR at or below nccl -> drain").
function M.rule_text(r)
  local s = table.concat(r.status, ", ")
  if r.at_or_below then s = s .. " at or below " .. r.at_or_below end
  if r.tests then s = s .. " in " .. table.concat(r.tests, ", ") end
  return s .. " -> " .. r.action
end

local function has(list, v)
  for _, x in ipairs(list or {}) do if tostring(x) == v then return true end end
  return false
end

-- What the model asks for a node.  tests: list of { id, layer, status };
-- node_status: the node's own status (ERROR when its step or agent
-- failed, whatever its tests say), node_reason.  Returns { action, rule
-- (index), source, id, layer, status, reason }.
function M.decide(sev, tests, node_status, node_reason)
  local rank = spec.LAYER_RANK
  local sorted = {}
  for _, t in ipairs(tests or {}) do sorted[#sorted + 1] = t end
  table.sort(sorted, function(a, b)
    local ra, rb = rank[a.layer] or 99, rank[b.layer] or 99
    if ra ~= rb then return ra < rb end
    return tostring(a.id) < tostring(b.id)
  end)
  -- a node ERROR no test carries (its agent died): the node itself, below every rung
  if node_status == "ERROR" then
    table.insert(sorted, 1, { id = "node", status = "ERROR", reason = node_reason })
  end
  for i, r in ipairs(sev.rules or {}) do
    for _, t in ipairs(sorted) do
      if has(r.status, t.status)
        and (not r.at_or_below or not t.layer or (rank[t.layer] or 99) <= rank[r.at_or_below])
        and (not r.tests or t.id == "node" or has(r.tests, t.id)) then
        return { action = r.action, rule = i, source = r.source, id = t.id,
                 layer = t.layer, status = t.status, reason = t.reason }
      end
    end
  end
  return { action = "none" }
end

-- The model a run recorded and what it asks for this host: { source,
-- rules, decision } (nil for a journal older than the severity model).
function M.of_model(model)
  local rec = (model.run or {}).severity
  if not rec then return nil end
  return { source = rec.source, rules = rec.rules,
           decision = M.decide(rec, model.tests) }
end

return M
