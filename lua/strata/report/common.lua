-- strata.report.common: what the report writers share: status colours,
-- value formatting for text, criterion texts, and safe file writes.  (Cell
-- labels, status order and counts are strata.verdict's.)
local M = {}

-- Status colours (fill, font): Office's good/bad/neutral and kin.
M.STATUS_COLORS = {
  PASS = { bg = "#C6EFCE", fg = "#006100" },
  WARN = { bg = "#FFD966", fg = "#7F6000" },   -- amber: passed, past a warn limit
  FAIL = { bg = "#FFC7CE", fg = "#9C0006" },
  ERROR = { bg = "#8B0000", fg = "#FFFFFF" },
  BLOCKED = { bg = "#F4B183", fg = "#833C0B" },
  SKIP = { bg = "#D9D9D9", fg = "#404040" },
  INCOMPLETE = { bg = "#FFEB9C", fg = "#9C5700" },
  STOPPED = { bg = "#FFEB9C", fg = "#9C5700" },
  ["NOT RUN"] = { bg = "#FFFFFF", fg = "#7F7F7F" },
  FLAKY = { bg = "#E4DFEC", fg = "#5B2C6F" },   -- failed a try, passed another (fleet)
}

-- A finite number (NaN and the infinities are not).
local huge = math.huge
function M.finite(v)
  return type(v) == "number" and v == v and v ~= huge and v ~= -huge
end

-- Short text for a value: integral floats without ".0", others to 6
-- significant digits; NaN/inf as "n/a"; nil as ""; a list as "{a, b}".
-- (Called for every label and every value a JUnit case or a sheet shows
-- as text: the finite test inline, math's functions as locals.)
local mtype, floor, abs = math.type, math.floor, math.abs
function M.fmt(v)
  if v == nil then return "" end
  local tv = type(v)
  if tv == "number" then
    if v ~= v or v == huge or v == -huge then return "n/a" end
    if mtype(v) == "integer" then return tostring(v) end
    if v == floor(v) and abs(v) < 1e15 then
      return ("%d"):format(v)
    end
    return (("%.6g"):format(v))
  end
  if tv == "table" then
    local parts = {}
    for _, x in ipairs(v) do parts[#parts + 1] = M.fmt(x) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end

-- A source "specs/host/h1.lua:30" relative to the spec folder(s) the run
-- loaded ("host/h1.lua:30"); "--set ..." and other places as they are.
function M.short_source(src, roots)
  src = tostring(src or "")
  for _, root in ipairs(roots or {}) do
    root = tostring(root):gsub("/+$", "")
    if root ~= "" and src:sub(1, #root + 1) == root .. "/" then
      return src:sub(#root + 2)
    end
  end
  return src
end

-- Text (a reason, an error) with every "<root>/" of the spec folders cut
-- out: "/opt/strata/specs/s3/s3.lua:40: ..." -> "s3/s3.lua:40: ...".
-- M.shortener(roots) is the same as a function of text alone, for many
-- texts (a sheet's rows).
function M.shortener(roots)
  local rs = {}
  for _, r in ipairs(roots or {}) do
    r = tostring(r):gsub("/+$", "")
    if r ~= "" and r ~= "." then rs[#rs + 1] = r end
  end
  table.sort(rs, function(a, b) return #a > #b end)
  local pats = {}
  for i, r in ipairs(rs) do
    rs[i] = r .. "/"
    pats[i] = rs[i]:gsub("%p", "%%%0")
  end
  local find, gsub = string.find, string.gsub
  return function(text)
    if type(text) ~= "string" then return text end
    -- a plain search first: most texts (a sheet's rows) hold no root
    for i, pat in ipairs(pats) do
      if find(text, rs[i], 1, true) then text = gsub(text, pat, "") end
    end
    return text
  end
end

function M.short_paths(text, roots)
  if type(text) ~= "string" then return text end
  return M.shortener(roots)(text)
end

-- What a resolved limit resolved to: " (= 360)" (strata.model's text).
local function resolved_suffix(c)
  return require("strata.model").resolved(c.ref, c.limit_lo or c.limit_other,
                                          c.limit_hi)
end

-- One line for a test's criterion (strata.verdict's resolved criteria):
-- "bw_gbps >= 0.9 x site.rdma.line_rate_gbps (= 360)  [verbs/r2.lua:14]".
-- The resolved value shows when the limit is an expression; a WARN band
-- follows ("; warn: bw_gbps >= 0.95 x ... (= 380)").
function M.criterion_text(c, roots)
  local text = c.text or (tostring(c.metric) .. " " .. tostring(c.op) .. " "
                          .. M.fmt(c.expr))
  text = text .. resolved_suffix(c)
  if c.warn then
    text = text .. "; warn: " .. tostring(c.warn.text) .. resolved_suffix(c.warn)
  end
  if c.source then
    text = text .. "  [" .. M.short_source(c.source, roots) .. "]"
  end
  return text
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

-- The run model's text (text_of(model)) written at path by write_file,
-- after checking both; who ("report.json") names the writer in every error.
function M.write_model(who, path, model, text_of)
  if type(path) ~= "string" or path == "" then
    error(who .. ": output path must be a non-empty string", 0)
  end
  if type(model) ~= "table" then
    error(who .. ": model must be a table, got " .. type(model), 0)
  end
  M.write_file(who, path, text_of(model))
end

-- An output the command line named that cannot be written: a usage
-- error (exit 2, the path and the system's reason, no traceback).
local function cannot_write(who, path, why)
  error(require("strata.args").usage_error(("%s: cannot write %s: %s")
    :format(who, path, tostring(why))), 0)
end
M.cannot_write = cannot_write

-- Write text to path through path.tmp + rename; raises
-- "<who>: cannot write <path>: <reason>" (cannot_write).
function M.write_file(who, path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then cannot_write(who, path, err) end
  local ok, werr = f:write(text)
  local cok, cerr = f:close()
  if not ok or not cok then
    os.remove(tmp)
    cannot_write(who, path, werr or cerr)
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    cannot_write(who, path, rerr)
  end
end

-- Close a workbook (libxlsxwriter writes the file then), a failure being
-- cannot_write's.
function M.close_book(wb, path)
  local ok, err = pcall(wb.close, wb)
  if not ok then cannot_write("workbook", path, tostring(err):gsub("^report%.close: ", "")) end
end

-- "2026-11-29T19:00:00Z" -> seconds (for differences only), or nil.
local function iso_seconds(s)
  local y, mo, d, h, mi, sec = tostring(s or ""):match(
    "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+%.?%d*)")
  if not y then return nil end
  return os.time { year = tonumber(y), month = tonumber(mo), day = tonumber(d),
                   hour = tonumber(h), min = tonumber(mi), sec = 0,
                   isdst = false } + tonumber(sec)
end

-- How long from ISO time a to b: "42 s", "3 min 5 s", "2 h 10 min"; nil
-- when either is missing or b is before a.
function M.duration_text(a, b)
  local s0, s1 = iso_seconds(a), iso_seconds(b)
  if not s0 or not s1 or s1 < s0 then return nil end
  local s = math.floor(s1 - s0 + 0.5)
  if s < 60 then return ("%d s"):format(s) end
  if s < 3600 then return ("%d min %d s"):format(s // 60, s % 60) end
  return ("%d h %d min"):format(s // 3600, (s % 3600) // 60)
end

return M
