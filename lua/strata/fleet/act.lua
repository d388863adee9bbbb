-- strata.fleet.act: a fleet verdict turned into the scheduler's language
-- (`strata run --fleet slurm --act drain|resume|dry-run`, and the health
-- profile on one node).  What each node gets comes from the severity
-- model (strata.severity: data in the site or severity.yaml); this module
-- only reads Slurm's node state and runs scontrol(1):
--   drain   a node whose action is drain, not drained yet:
--           scontrol update NodeName=N State=DRAIN Reason="strata R2 FAIL <run>"
--   resume  a node whose action is not drain, drained with strata's own
--           reason (REASON_PREFIX):  scontrol update NodeName=N State=RESUME
-- A node drained for any other reason (an operator's, NHC's, Slurm's) is
-- never resumed, and its reason is never overwritten.  Dry-run: the same
-- decisions, the commands printed, nothing run.
local sev = require "strata.severity"

local M = {}

-- Every reason strata writes starts so; resume keys on it.
M.REASON_PREFIX = "strata "

local MODES = { drain = true, resume = true, ["dry-run"] = true }

-- "--act drain,resume" (and --dry-run) as a set; raises a usage error.
function M.modes(act, dry)
  local out = {}
  for m in tostring(act or ""):gmatch("[^,%s]+") do
    if not MODES[m] then
      error(require("strata.args").usage_error(
        ("--act %s: '%s' is not drain, resume or dry-run"):format(act, m)), 0)
    end
    out[m] = true
  end
  if dry then out["dry-run"] = true end
  if out["dry-run"] and not out.drain and not out.resume then
    out.drain, out.resume = true, true
  end
  return out
end

local function run(argv)
  local r = require("strata.sys").run { cmd = argv, timeout = 30 }
  local err = (r.stderr or ""):gsub("%s+$", "")
  if r.code == 127 and r.exec_errno ~= 0 then
    return nil, argv[1] .. " not found on PATH"
  end
  if r.timed_out or r.code ~= 0 then
    return nil, ("%s: %s"):format(r.timed_out and "no answer in 30 s" or ("exit " .. r.code),
                                  err:sub(-300))
  end
  return r.stdout or ""
end

-- { name -> { state = "IDLE+DRAIN", drain = bool, reason = "..." } } from
-- `scontrol show node -o` (Reason runs to the end of the line's
-- "Reason=... [user@time]"; it is the last key Slurm 22.05 prints).
function M.states(names)
  if #names == 0 then return {} end
  local text, err = run { "scontrol", "show", "node", "-o", table.concat(names, ",") }
  if not text then return nil, err end
  return M.parse_states(text)
end

function M.parse_states(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local name = line:match("NodeName=(%S+)")
    if name then
      local state = line:match(" State=(%S+)") or ""
      local reason = line:match(" Reason=(.-)%s*$")
      if reason then reason = reason:gsub("%s*%[[^%]]*%]$", "") end
      out[name] = { state = state, reason = reason,
                    drain = state:find("DRAIN", 1, true) ~= nil }
    end
  end
  return out
end

-- strata's Slurm reason for a decision: "strata R2 FAIL <run>".
function M.reason(d, run_id)
  return ("%s%s %s %s"):format(M.REASON_PREFIX, d.id == "node" and "node" or d.id,
                               d.status, run_id)
end

-- What to do on one node: { op = "drain"|"resume"|nil, why = text, argv = }.
function M.plan_node(name, d, st, modes, run_id)
  st = st or {}
  local ours = st.reason and st.reason:sub(1, #M.REASON_PREFIX) == M.REASON_PREFIX
  if d.action == "drain" then
    if not modes.drain then return { why = "drain asked by the severity model; --act has no drain" } end
    if st.drain then
      return { why = ours and ("already drained by strata: " .. st.reason)
                          or ("already drained for another reason, left as it is: "
                              .. tostring(st.reason)) }
    end
    local reason = M.reason(d, run_id)
    return { op = "drain", reason = reason, argv = { "scontrol", "update", "NodeName=" .. name,
             "State=DRAIN", "Reason=" .. reason } }
  end
  if st.drain and not ours then
    return { why = "drained for another reason, never resumed by strata: " .. tostring(st.reason) }
  end
  if st.drain and ours then
    if not modes.resume then return { why = "passes now; --act has no resume" } end
    return { op = "resume", argv = { "scontrol", "update", "NodeName=" .. name, "State=RESUME" } }
  end
  return { why = "nothing to do" }
end

-- Act on nodes: list of { name, tests = {{id,layer,status}}, status,
-- reason }.  Returns the record kept in the journal: { type = "act",
-- modes, run, nodes = { {node, action, rule, source, test, status, state,
-- op, done, why, command} } }.
function M.apply(model, nodes, modes, run_id, log)
  log = log or function(s) io.stderr:write(s, "\n") end
  local names = {}
  for _, n in ipairs(nodes) do names[#names + 1] = n.name end
  local acting = next(modes) ~= nil
  local states, serr
  if acting then states, serr = M.states(names) end
  local out = { type = "act", run = run_id, nodes = {}, modes = {} }
  for m in pairs(modes) do out.modes[#out.modes + 1] = m end
  table.sort(out.modes)
  for _, n in ipairs(nodes) do
    local d = sev.decide(model, n.tests, n.status, n.reason)
    local st = states and states[n.name]
    local row = { node = n.name, action = d.action, rule = d.rule, source = d.source,
                  test = d.id, status = d.status, state = st and st.state,
                  slurm_reason = st and st.reason }
    if not acting then
      row.why = "not asked (no --act)"
    elseif not states then
      row.why = "node state unreadable, nothing done: " .. tostring(serr)
    else
      local p = M.plan_node(n.name, d, st, modes, run_id)
      row.op, row.why = p.op, p.why
      if p.argv then
        row.command = table.concat(p.argv, " ", 1, #p.argv - 1)
          .. (p.op == "drain" and (' Reason="' .. p.reason .. '"') or (" " .. p.argv[#p.argv]))
        if modes["dry-run"] then
          row.done = "dry-run"
          log("strata: would run: " .. row.command)
        else
          local ok, err = run(p.argv)
          row.done = ok and (p.op == "drain" and "drained" or "resumed") or nil
          row.error = not ok and err or nil
          log(("strata: %s %s%s"):format(p.op, n.name, ok and "" or (" failed: " .. err)))
        end
      end
    end
    out.nodes[#out.nodes + 1] = row
  end
  return out
end

-- The nodes of a fleet model as apply takes them: each node's own
-- rungs (pair rows name two nodes and are left out), its status.
function M.nodes_of(fm)
  local out = {}
  for _, n in ipairs(fm.nodes) do
    local tests = {}
    for _, c in ipairs(fm.columns) do
      local t = n.tests and n.tests[c.id]
      if t then
        tests[#tests + 1] = { id = t.id, layer = t.layer, status = t.status, reason = t.reason }
      end
    end
    out[#out + 1] = { name = n.name, tests = tests, status = n.status, reason = n.reason }
  end
  return out
end

-- `strata run --fleet ...`: the modes asked (exit 2 on a bad --act) and
-- the severity model, before any node runs.
function M.setup(o, s)
  return { modes = M.modes(o.act, o.dry_run),
           severity = sev.load(o.site, s.site, s.thresholds_file) }
end

-- The record journaled beside the thresholds: the model the run used.
function M.severity_record(acting)
  return { type = "severity", model = sev.record(acting.severity) }
end

-- After the fleet model is built: decide (and act, as asked) per node,
-- the act record appended to the journal (strata report shows it), the
-- result kept on fm for the outputs.
function M.after(fm, acting, jpath)
  local run_id = ("%s job %s"):format(tostring(fm.run.started),
                                      tostring((fm.run.fleet or {}).job or "-"))
  local rec = M.apply(acting.severity, M.nodes_of(fm), acting.modes, run_id)
  local f = jpath and io.open(jpath, "a")
  if f then
    f:write(require("strata.redact").json(rec), "\n")
    f:close()
  end
  fm.severity, fm.act = sev.record(acting.severity), rec
  return rec
end

-- `strata report FLEET.jsonl`: the model and the actions from the records.
function M.from_records(fm, recs)
  for _, r in ipairs(recs) do
    if r.type == "severity" then fm.severity = r.model
    elseif r.type == "act" then fm.act = r end
  end
end

return M
