-- strata.report.common: what the three report writers share: status
-- order, cell labels, value formatting for text, and safe file writes.
local M = {}

M.STATUSES = { "PASS", "FAIL", "ERROR", "BLOCKED", "SKIP" }

-- Status colours (fill, font): Office's good/bad/neutral and kin.
M.STATUS_COLORS = {
  PASS = { bg = "#C6EFCE", fg = "#006100" },
  FAIL = { bg = "#FFC7CE", fg = "#9C0006" },
  ERROR = { bg = "#8B0000", fg = "#FFFFFF" },
  BLOCKED = { bg = "#F4B183", fg = "#833C0B" },
  SKIP = { bg = "#D9D9D9", fg = "#404040" },
}

-- A finite number (NaN and the infinities are not).
function M.finite(v)
  return type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge
end

-- Short text for a value: integral floats without ".0", others to 6
-- significant digits; NaN/inf as "n/a"; nil as "".
function M.fmt(v)
  if v == nil then return "" end
  if type(v) == "number" then
    if not M.finite(v) then return "n/a" end
    if math.type(v) == "integer" then return tostring(v) end
    if v == math.floor(v) and math.abs(v) < 1e15 then
      return ("%d"):format(v)
    end
    return (("%.6g"):format(v))
  end
  return tostring(v)
end

-- "size=4096,qps=1" for a result's cell, in the test's parameter order.
function M.cell_label(params, cell)
  local parts = {}
  for _, p in ipairs(params or {}) do
    if cell and cell[p] ~= nil then
      parts[#parts + 1] = p .. "=" .. M.fmt(cell[p])
    end
  end
  return table.concat(parts, ",")
end

-- Results grouped by test id, in run order.
function M.results_by_test(model)
  local by = {}
  for _, r in ipairs(model.results or {}) do
    by[r.id] = by[r.id] or {}
    table.insert(by[r.id], r)
  end
  return by
end

-- The texts of a result's failed checks (why, else the criterion text).
function M.failed_checks(r)
  local out = {}
  for _, c in ipairs(r.checks or {}) do
    if not c.ok then
      local t = c.why or c.text or c.metric or "check failed"
      if c.source and not t:find(c.source, 1, true) then
        t = t .. " [" .. c.source .. "]"
      end
      out[#out + 1] = t
    end
  end
  return out
end

-- Per-status counts of model.tests (every status present, 0 if none).
function M.counts(model)
  local c = { total = 0 }
  for _, s in ipairs(M.STATUSES) do c[s] = 0 end
  for _, t in ipairs(model.tests or {}) do
    local st = tostring(t.status)
    c[st] = (c[st] or 0) + 1
    c.total = c.total + 1
  end
  return c
end

-- Replace invalid UTF-8 with "?" (XML and Excel both reject it).
function M.utf8_clean(s)
  s = tostring(s)
  if utf8.len(s) then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = s:byte(i)
    local w = c >= 0xf0 and 4 or c >= 0xe0 and 3 or c >= 0xc0 and 2 or 1
    local ch = s:sub(i, i + w - 1)
    if (w > 1 or c < 0x80) and utf8.len(ch) == 1 then
      out[#out + 1] = ch
      i = i + w
    else
      out[#out + 1] = "?"
      i = i + 1
    end
  end
  return table.concat(out)
end

-- Write text to path through path.tmp + rename; raises
-- "<who>: cannot write <path>: <reason>".
function M.write_file(who, path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then
    error(("%s: cannot write %s: %s"):format(who, path, err), 0)
  end
  local ok, werr = f:write(text)
  local cok, cerr = f:close()
  if not ok or not cok then
    os.remove(tmp)
    error(("%s: cannot write %s: %s"):format(who, path, werr or cerr), 0)
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    error(("%s: cannot write %s: %s"):format(who, path, rerr), 0)
  end
end

return M
