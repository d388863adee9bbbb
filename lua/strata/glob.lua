-- strata.glob: the one glob dialect of strata (docs/specs.md, "Patterns"):
-- `*` any run of characters (none included), `?` exactly one character,
-- every other character itself (`.`, `[`, `-`, `%` ... are literal).  The
-- whole name must match.  Used by --only (test IDs, tags), criteria on a
-- metric pattern and cv(<pattern>) (strata.thresholds), and the fleet's
-- role selectors by node name (strata.fleet.plan).
local M = {}

-- The Lua pattern of a glob, made once per glob: a criterion's pattern
-- is matched against every metric of every cell.
local cache = {}

function M.pattern(glob)
  local lp = cache[glob]
  if not lp then
    lp = "^" .. glob:gsub("[%^%$%(%)%%%.%[%]%+%-%*%?]", function(c)
      if c == "*" then return ".*" end
      if c == "?" then return "." end
      return "%" .. c
    end) .. "$"
    cache[glob] = lp
  end
  return lp
end

-- Is s a glob (has a * or ?), rather than one name?
function M.is_pattern(s)
  return s:find("[*?]") ~= nil
end

-- Does name match glob?
function M.match(glob, name)
  return name:match(M.pattern(glob)) ~= nil
end

return M
