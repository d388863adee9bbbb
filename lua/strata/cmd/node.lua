-- strata node: the part of a fleet run that runs on one node.  Started by
-- `strata run --fleet slurm` through srun, never by hand: it reads its
-- work (the spec files, the thresholds, this node's site table, which
-- tests) as one JSON document on stdin, runs those tests with the
-- ordinary runner, and writes every journal record to stdout as it
-- happens, as a line "@strata <json>", tagged with the node.  Nothing is
-- written on the node but a scratch folder removed at the end: no shared
-- filesystem is assumed.
local cjson = require "cjson"
local core = require "strata.core"
local setup = require "strata.setup"
local runner = require "strata.runner"
local redact = require "strata.redact"

local M = {
  summary = "run one node's part of a fleet run (started by srun)",
  usage = [[
usage: strata node [--work FILE] < WORK.json
Started by `strata run --fleet slurm` on each node of the allocation
(docs/fleet.md); reads its work on stdin (or from FILE: the pods of
`--fleet k8s`, whose image has no shell to redirect one) and answers on
stdout.  The node it runs on: $SLURMD_NODENAME, else $STRATA_NODE (a
pod's spec.nodeName), else the host name.]],
}

M.MARK = "@strata "

local function emit(rec)
  rec = redact.clean(rec)
  io.stdout:write(M.MARK, cjson.encode(rec), "\n")
  io.stdout:flush()
end

-- Write the shipped files under dir, at their launcher-side paths
-- (absolute ones under dir/@); returns the mapping back.
local function unpack_files(dir, work)
  local function place(path, text)
    local local_path = path:sub(1, 1) == "/" and (dir .. "/@" .. path)
                       or (dir .. "/" .. path)
    core.mkdir_p(local_path:match("^(.*)/[^/]*$"))
    local f = assert(io.open(local_path, "wb"))
    f:write(text)
    f:close()
    return local_path
  end
  local paths = {}
  for _, f in ipairs(work.files or {}) do paths[#paths + 1] = place(f.path, f.text) end
  local th = work.thresholds and place(work.thresholds.path, work.thresholds.text)
  local prof = work.profile and place(work.profile.path, work.profile.text)
  return paths, th, prof
end

-- The plan's sources without the scratch folder (as the results').
local function unscratch_plan(rec, dir)
  for _, t in ipairs(rec.tests) do
    if type(t.source) == "string" then
      t.source = t.source:gsub(dir:gsub("%p", "%%%0") .. "/@?", "")
    end
  end
  return rec
end

local function rmtree(dir)
  require("strata.sys").run { cmd = { "rm", "-rf", "--", dir }, timeout = 30 }
end

function M.main(argv)
  if argv[1] == "-h" or argv[1] == "--help" then
    io.stdout:write(M.usage, "\n")
    return 0
  end
  io.stdout:setvbuf("line")
  local text
  if argv[1] == "--work" and argv[2] then
    local f, ferr = io.open(argv[2], "rb")
    if not f then
      io.stderr:write("strata node: --work: ", tostring(ferr), "\n")
      return 2
    end
    text = f:read("a")
    f:close()
  else
    text = io.stdin:read("a")
  end
  local ok, work = pcall(cjson.decode, text or "")
  if not ok or type(work) ~= "table" then
    io.stderr:write("strata node: stdin holds no work document: ", tostring(work), "\n")
    return 2
  end
  local me = os.getenv("SLURMD_NODENAME") or os.getenv("STRATA_NODE") or core.hostname()
  local node = work.node or me
  local tag = { node = node, phase = work.phase, pair = work.pair }
  local function write(rec)
    for k, v in pairs(tag) do rec[k] = v end
    emit(rec)
  end
  write { type = "node", host = core.hostname(), slurmd_nodename = me,
          started = core.utc(), pid = core.getpid() }
  if me ~= node then
    write { type = "node_error",
            reason = ("the scheduler placed this task on %s, not %s"):format(me, node) }
    return 1
  end

  local dir = ("/tmp/strata-node-%d-%d"):format(core.getpid(), os.time())
  core.mkdir_p(dir)
  local rc = 0
  local ok2, err = pcall(function()
    local paths, th, prof = unpack_files(dir, work)
    -- the site table before the specs' scaling (site.scale) is applied
    local s = setup.load { paths = paths, thresholds = th, profile = prof,
                           set = work.set, site_table = work.site or {} }
    redact.add_from_env(s.site)
    local order = runner.plan(s.tests, s.by_id, work.only)
    local expect = type(s.site.site) == "table" and s.site.site.expect or nil
    write(unscratch_plan(runner.plan_record(order, expect, nil), dir))
    if work.inventory then
      local okinv, sys = pcall(require, "strata.sys")
      local inv = okinv and select(2, pcall(sys.inventory)) or {}
      if type(inv) ~= "table" then inv = { error = tostring(inv) } end
      write { type = "inventory", data = inv }
    end
    core.trap_signals()
    -- the runner's records, with the scratch folder taken out of the
    -- sources they quote
    local strip = { dir .. "/@", dir .. "/" }
    local function unscratch(v)
      if type(v) == "string" then
        for _, p in ipairs(strip) do
          local i = v:find(p, 1, true)
          while i do
            v = v:sub(1, i - 1) .. v:sub(i + #p)
            i = v:find(p, 1, true)
          end
        end
        return v
      elseif type(v) == "table" then
        for k, x in pairs(v) do v[k] = unscratch(x) end
      end
      return v
    end
    local j = { write = function(_, rec) write(unscratch(rec)) end }
    local _, interrupted = runner.run(order, {
      site = s.site, criteria = s.criteria, journal = j, progress = false,
      tries = work.tries, try_mode = work.try_mode, fleet = "defer" })
    write { type = "node_end", ended = core.utc(), interrupted = interrupted,
            tests = #order }
  end)
  rmtree(dir)
  if not ok2 then
    write { type = "node_error", reason = tostring(err) }
    rc = 1
  end
  return rc
end

return M
