-- strata.args: a small getopt for the command modules.
-- spec = { ["-o"] = "output", ["--output"] = "output", ["--set"] = {"set", many=true},
--          ["--help"] = {"help", flag=true} }
-- Returns opts, positional; raises a usage error string "usage: ..." on
-- bad input (the caller prints it and exits 2).
local M = {}

local UsageError = {}
UsageError.__index = UsageError
UsageError.__tostring = function(e) return e.msg end

function M.usage_error(msg)
  return setmetatable({ msg = msg, usage = true }, UsageError)
end

function M.is_usage_error(e)
  return getmetatable(e) == UsageError
end

function M.parse(argv, spec)
  local opts, pos = {}, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local name, inline = a:match("^(%-%-[^=]+)=(.*)$")
    name = name or a
    local d = spec[name]
    if a == "--" then
      for j = i + 1, #argv do pos[#pos + 1] = argv[j] end
      break
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      if not d then
        error(M.usage_error("unknown option '" .. name .. "'"), 0)
      end
      if type(d) == "string" then d = { d } end
      if d.flag then
        if inline then error(M.usage_error(name .. " takes no value"), 0) end
        opts[d[1]] = true
      else
        local v = inline
        if v == nil then
          i = i + 1
          v = argv[i]
          if v == nil then
            error(M.usage_error("option " .. name .. " needs a value"), 0)
          end
        end
        if d.many then
          opts[d[1]] = opts[d[1]] or {}
          table.insert(opts[d[1]], v)
        else
          opts[d[1]] = v
        end
      end
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  return opts, pos
end

return M
