-- strata.journal: the kill-safe record of a run.  Every record is one
-- JSON line, written and flushed as it happens, so a kill -9 loses no
-- finished result; `strata report JOURNAL` rebuilds every output from it.
local cjson = require "cjson"
local redact = require "strata.redact"

local M = {}
M.__index = M

function M.open(path)
  local f, err = io.open(path, "w")
  if not f then error(("cannot write the journal: %s"):format(err), 0) end
  f:setvbuf("line")
  return setmetatable({ path = path, f = f, records = {} }, M)
end

function M:write(rec)
  rec = redact.clean(rec)
  self.records[#self.records + 1] = rec
  local ok, line = pcall(cjson.encode, rec)
  if not ok then
    error(("journal: cannot encode a %s record: %s"):format(rec.type, line), 0)
  end
  self.f:write(line, "\n")
  self.f:flush()
end

function M:close()
  if self.f then self.f:close() self.f = nil end
end

-- JSON null (NaN metrics, holes in rows) reads back as nil, and whole
-- numbers as integers (lua-cjson reads every number as a float: a chart's
-- column index 1 must stay 1, not 1.0).
local function denull(v)
  if type(v) ~= "table" then return v end
  for k, x in pairs(v) do
    if x == cjson.null then
      v[k] = nil
    elseif math.type(x) == "float" then
      v[k] = math.tointeger(x) or x
    else
      denull(x)
    end
  end
  return v
end
M.denull = denull

-- Read a journal back; a torn last line (a kill mid-write) is dropped.
function M.read(path)
  local f, err = io.open(path, "r")
  if not f then error(err, 0) end
  local recs, n = {}, 0
  for line in f:lines() do
    n = n + 1
    if line:match("%S") then
      local ok, rec = pcall(cjson.decode, line)
      if ok and type(rec) == "table" and rec.type then
        recs[#recs + 1] = denull(rec)
      else
        io.stderr:write(("strata: %s:%d: unreadable journal line skipped\n")
                        :format(path, n))
      end
    end
  end
  f:close()
  return recs
end

return M
