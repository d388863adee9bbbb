-- The docs test's view into the real binary (tests/docs/docs_test.py):
--   strata lua probe.lua globals            the names of _G, one a line
--   strata lua probe.lua members MOD NAME.. which NAMEs MOD lacks (exit 1)
--   strata lua probe.lua parse CMD ARGS..   CMD's own option table parses
--                                           ARGS; for run, everything
--                                           `strata run` loads is loaded
-- parse is for the command lines that cannot run here (the lab, a Slurm
-- allocation, a site's cluster): the same parser and loader as the real
-- command, stopped before anything is started.
local args = require "strata.args"
local command = require "strata.command"

local mode = arg[1]
local rest = { table.unpack(arg, 2) }

if mode == "globals" then
  for k in pairs(_G) do io.stdout:write(tostring(k), "\n") end
  return 0
end

if mode == "members" then
  local ok, m = pcall(require, rest[1])
  if not ok then
    io.stdout:write("cannot require ", rest[1], ": ", tostring(m), "\n")
    return 3
  end
  local missing = {}
  for i = 2, #rest do
    if type(m) ~= "table" or m[rest[i]] == nil then missing[#missing + 1] = rest[i] end
  end
  io.stdout:write(table.concat(missing, " "), "\n")
  return #missing > 0 and 1 or 0
end

local function parse_run(argv)
  local o, paths = args.parse(argv, require("strata.cmd.run").OPTIONS)
  if o.fleet and o.fleet ~= "slurm" then
    error(args.usage_error("--fleet takes slurm, got " .. o.fleet), 0)
  end
  if o.lab and o.site then
    error(args.usage_error("--lab and --site exclude each other"), 0)
  end
  local s = require("strata.setup").load {
    paths = paths, site = o.site, profile = o.profile,
    thresholds = o.thresholds, set = o.set }
  local order = require("strata.runner").plan(s.tests, s.by_id, o.only)
  if #order == 0 then
    io.stderr:write("strata: no test matches ", table.concat(o.only or {}, ", "), "\n")
    return 2
  end
  io.stdout:write(("parsed: %d of %d tests would run\n"):format(#order, #s.tests))
  return 0
end

local function parse_lab(argv)
  local verb = argv[1]
  local opts = verb == "up" and require("strata.cmd.lab").UP_OPTIONS or {}
  local _, pos = args.parse({ table.unpack(argv, 2) }, opts)
  if #pos > 0 then
    error(args.usage_error("lab " .. verb .. " takes no argument '" .. pos[1] .. "'"), 0)
  end
  io.stdout:write("parsed: lab ", verb, "\n")
  return 0
end

if mode == "parse" then
  local cmd, argv = rest[1], { table.unpack(rest, 2) }
  return command.guard(function()
    if cmd == "run" then return parse_run(argv) end
    if cmd == "lab" then return parse_lab(argv) end
    error(args.usage_error("probe: no parser for '" .. tostring(cmd) .. "'"), 0)
  end)
end

io.stderr:write("usage: strata lua probe.lua globals|members|parse ...\n")
return 2
