-- strata.lib.tool: find and run the external tools a spec drives
-- (nccl-tests, vllm, kubectl, ethtool ...) through sys.run, with a
-- deadline and a SKIP, not an error, when the tool is absent.
local core = require "strata.core"

local M = {}

-- The path of an executable: in dir (when given), else on $PATH; nil if absent.
function M.which(name, dir)
  if name:find("/", 1, true) then
    return core.stat(name) == "file" and name or nil
  end
  local dirs = {}
  if dir then dirs[1] = dir end
  for d in (os.getenv("PATH") or ""):gmatch("[^:]+") do dirs[#dirs + 1] = d end
  for _, d in ipairs(dirs) do
    local p = d .. "/" .. name
    if core.stat(p) == "file" then return p end
  end
end

-- which() or SKIP with a reason that says how to provide the tool.
function M.need(name, dir, hint)
  local p = M.which(name, dir)
  if not p then
    core.skip(("%s not found%s%s"):format(name,
      dir and (" in " .. dir .. " or on PATH") or " on PATH",
      hint and ("; " .. hint) or ""))
  end
  return p
end

-- Run argv; raises with the tool's stderr when it fails or times out.
-- opts: timeout (s), env, ok_codes (list, default {0}).
function M.run(argv, opts)
  opts = opts or {}
  local sys = require "strata.sys"
  local r = sys.run { cmd = argv, timeout = opts.timeout or 60, env = opts.env }
  if r.timed_out then
    error(("%s: no answer within %g s"):format(argv[1], opts.timeout or 60), 0)
  end
  local ok = false
  for _, c in ipairs(opts.ok_codes or { 0 }) do
    if r.code == c then ok = true end
  end
  if not ok then
    local err = (r.stderr or ""):gsub("%s+$", ""):sub(-400)
    error(("%s exited with %s: %s"):format(argv[1], tostring(r.code), err), 0)
  end
  return r
end

return M
