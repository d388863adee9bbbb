-- strata.journal: the kill-safe record of a run.  Every record is one
-- JSON line, written and flushed as it happens, so a kill -9 loses no
-- finished result; `strata report JOURNAL` rebuilds every output from it.
local cjson = require "cjson"
local core = require "strata.core"
local redact = require "strata.redact"

local M = {}
M.__index = M

-- opts.keep: every record is also kept as M.read will read it back (its
-- line decoded as it is written, in the run's loop, while the next cell
-- runs), for M:read_back: `strata run` makes its outputs from them instead
-- of reading its journal again after the last cell.
function M.open(path, opts)
  local f, err = io.open(path, "w")
  if not f then
    error(require("strata.args").usage_error(("cannot write the journal: %s")
      :format(err)), 0)
  end
  -- unbuffered, one write per record: a failed write (ENOSPC) is seen by
  -- the write that failed, not lost in a buffer's later flush
  f:setvbuf("no")
  -- a cell writes its answer, never the journal: it has /dev/null here
  core.hide_from_cells(f)
  return setmetatable({ path = path, f = f, lines = {},
                        records = opts and opts.keep and {} or nil }, M)
end

-- The journal's disk may fill up (ENOSPC) or go away mid-run: say so once
-- and go on; every line stays in memory (self.lines) for the outputs.
function M:fail(err)
  if self.failed then return end
  self.failed = tostring(err)
  io.stderr:write(("strata: journal %s: %s: the journal is incomplete; "
    .. "results are kept in memory and the workbook and other outputs are "
    .. "written at the end\n"):format(self.path, self.failed))
end

function M:write(rec)
  -- secrets masked, text made valid UTF-8 (redact.clean), as it is encoded
  local ok, line = pcall(redact.json, rec)
  if not ok then
    error(("journal: cannot encode a %s record: %s"):format(
      redact.clean(rec.type), line), 0)
  end
  if self.records then
    self.n = (self.n or 0) + 1
    self.records[#self.records + 1] = M.decode_line(line, self.path, self.n)
  else
    self.lines[#self.lines + 1] = line
  end
  if self.failed or not self.f then return end
  local w, err = self.f:write(line .. "\n")
  if not w then self:fail(err) end
end

function M:close()
  if self.f then
    local ok, err = self.f:close()
    self.f = nil
    if not ok then self:fail(err) end
  end
  -- every line is in the file: the copies here are needed no more
  if not self.failed then self.lines = {} end
end

-- JSON null (NaN metrics, holes in rows) reads back as nil, and whole
-- numbers as integers (lua-cjson reads every number as a float: a chart's
-- column index 1 must stay 1, not 1.0): core.denull, in place (C: every
-- value of every record goes through it).
local denull = require("strata.core").denull
M.denull = denull

-- The record of line n of journal name, or nil: a torn line (a kill or a
-- power cut mid-write) is dropped with a warning naming it.
function M.decode_line(line, name, n)
  local ok, rec = pcall(cjson.decode, line)
  if ok and type(rec) == "table" and type(rec.type) == "string" then
    return denull(rec)
  end
  io.stderr:write(("strata: %s:%d: unreadable journal line skipped "
    .. "(cut by a kill or a power loss?)\n"):format(name, n))
end

-- Records from journal lines (an iterator).
local function parse(lines, name)
  local recs, n = {}, 0
  for line in lines do
    n = n + 1
    if line:match("%S") then
      recs[#recs + 1] = M.decode_line(line, name, n)
    end
  end
  return recs
end

-- The lines of text, as text:gmatch("([^\n]*)\n?") gives them (a last
-- line without "\n" too; "" for an empty text), found with a plain search
-- (the pattern tested every byte of a journal of 10 000 results).
local function lines_of(text)
  local pos, len, find, sub = 1, #text, string.find, string.sub
  local empty = len == 0
  return function()
    if pos > len then
      if empty then empty = false return "" end
      return nil
    end
    local nl = find(text, "\n", pos, true)
    local line
    if nl then
      line, pos = sub(text, pos, nl - 1), nl + 1
    else
      line, pos = sub(text, pos), len + 1
    end
    return line
  end
end

-- Read a journal back.  A journal that cannot be opened is a usage error
-- (exit code 2), with the file named.
function M.read(path)
  local f, err = io.open(path, "r")
  local text = f and f:read("a")
  if f and not text then err = select(2, f:read(0)) or "not a file" end
  if f then f:close() end
  if not text then
    require("strata.spec").error(path, "cannot read the journal: %s",
      (tostring(err):gsub("^" .. path:gsub("%p", "%%%0") .. ": ", "")))
  end
  return parse(lines_of(text), path)
end

-- What this run wrote, read back as M.read would read the file: the same
-- records when the file could not be written (ENOSPC).  Kept (opts.keep):
-- those records themselves (the callers only read them).
function M:read_back()
  if self.records then return self.records end
  local i = 0
  return parse(function() i = i + 1 return self.lines[i] end, self.path)
end

return M
