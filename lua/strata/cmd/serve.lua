-- strata serve: the peer agent. Runs the far end of verbs tests (QPs,
-- buffers, memory kind) for engines that connect with the shared token.
-- The serve loop is C (verbs.serve); this file only parses options.
local M = {
  summary = "run the RDMA peer agent (far end of verbs tests)",
  usage = [[
usage: strata serve [options]
  --listen ADDR          address to bind (default: all IPv4)
  --port N               control TCP port (default 18515)
  --token-file FILE      file holding the shared token (first line)
                         (or the environment variable STRATA_SERVE_TOKEN;
                         no token, no service)
  --device NAME          RDMA device for sessions that name none
  --ib-port N            RDMA port (default 1)
  --gid-index N          GID index (default: auto, RoCEv2 IPv4 first)
  --idle-timeout S       close a session silent this long (default 60)
  --session-timeout S    hard limit of one session (default 3600)
  --max-sessions N       exit after N sessions (default: never)
  --quiet                no log lines]],
}

local function read_token(path)
  local f, err = io.open(path, "r")
  if not f then return nil, "cannot read token file: " .. err end
  local line = f:read("l")
  f:close()
  if not line or not line:match("%S") then
    return nil, "token file " .. path .. " is empty"
  end
  return (line:gsub("^%s+", ""):gsub("%s+$", ""))
end

function M.main(args)
  local o, token_file = {}, nil
  local num = {
    ["--port"] = "port", ["--ib-port"] = "ib_port",
    ["--gid-index"] = "gid_index", ["--idle-timeout"] = "idle_timeout",
    ["--session-timeout"] = "session_timeout",
    ["--max-sessions"] = "max_sessions", ["--ready-fd"] = "ready_fd",
  }
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--help" or a == "-h" then
      io.stdout:write(M.usage, "\n")
      return 0
    elseif a == "--quiet" then
      o.quiet = true
    elseif a == "--listen" or a == "--device" or a == "--token-file" then
      local v = args[i + 1]
      if not v then
        io.stderr:write("strata serve: ", a, " needs a value\n")
        return 2
      end
      if a == "--listen" then o.listen = v
      elseif a == "--device" then o.device = v
      else token_file = v end
      i = i + 1
    elseif num[a] then
      local v = tonumber(args[i + 1] or "")
      if not v then
        io.stderr:write("strata serve: ", a, " needs a number\n")
        return 2
      end
      if math.type(v) == "float" and num[a]:match("port") then
        io.stderr:write("strata serve: ", a, " needs an integer\n")
        return 2
      end
      if not num[a]:match("timeout") then v = math.tointeger(v) or v end
      o[num[a]] = v
      i = i + 1
    else
      io.stderr:write("strata serve: unknown option '", a, "'\n", M.usage,
                      "\n")
      return 2
    end
    i = i + 1
  end
  if token_file then
    local t, err = read_token(token_file)
    if not t then
      io.stderr:write("strata serve: ", err, "\n")
      return 2
    end
    o.token = t
  else
    o.token = os.getenv("STRATA_SERVE_TOKEN")
  end
  if not o.token or o.token == "" then
    io.stderr:write("strata serve: no token (--token-file FILE or "
      .. "STRATA_SERVE_TOKEN): refusing to serve without one\n")
    return 2
  end
  require("strata.core").trap_signals()
  local verbs = require "strata.verbs"
  local ok, err = pcall(verbs.serve, o)
  if not ok then
    io.stderr:write("strata serve: ", tostring(err), "\n")
    return 1
  end
  return 0
end

return M
