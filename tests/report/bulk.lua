-- tests/report/bulk.lua OUTDIR: the workbook's block writes
-- (ws:put_rows, engine/report/report_layout_lua.c) against one ws:put per
-- cell: the same block, with per-column, per-value and per-cell formats,
-- hostile texts (invalid UTF-8, a text past Excel's 32767), NaN, nil,
-- booleans and tables, written both ways to two sheets of OUTDIR/bulk.xlsx
-- (bulk_check.py reads them back and compares every cell); the widths and
-- wrapped lines the layout counted, both ways and against the rule;
-- core.denull, the journal reader's JSON clean-up; and redact.clean's walk
-- (core.clean_copy).
local outdir = assert(arg[1], "usage: bulk.lua OUTDIR")
local sheets = require "strata.report.sheet"
local core = require "strata.core"
local cjson = require "cjson"

local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")({ quiet = true })

os.execute("mkdir -p '" .. outdir .. "'")
local wb, ctx = sheets.open(outdir .. "/bulk.xlsx")
local F = ctx.F
local long = ("x"):rep(40000)        -- cut to 32765 characters + an ellipsis
local rows = {
  { "PASS", 1, 2.5, "a\nlonger second line", true, "x" },
  { "FAIL", -1234567, 0 / 0, "bad \xff byte", false, {} },
  { "odd", 1e300, math.huge, long, nil, "wraps " .. ("w"):rep(120) },
  { nil, math.mininteger, -0.001, "", "t", 7 },
}
-- column formats: by status (else other), numbers / texts, one cell red
local cols = {
  { by = F.status, num = F.status_other, text = F.status_other },
  { num = F.numfmt("#,##0"), text = F.text },
  { num = F.numfmt("0.0##"), text = F.text, cells = { [2] = F.numfmt("0.0##", true) } },
  { num = F.wrap, text = F.wrap, nowidth = false },
  { text = F.key },
  { num = F.text, text = F.wrap, cells = { [3] = F.wrap } },
}
local function pick(i, j, v)
  local c = cols[j]
  if c.cells and c.cells[i] then return c.cells[i] end
  if c.by and v ~= nil and c.by[v] then return c.by[v] end
  if type(v) == "number" then return c.num end
  return c.text
end

local A = sheets.new(ctx, "put")
local B = sheets.new(ctx, "rows")
for i, row in ipairs(rows) do
  for j = 1, #cols do A:put(1 + i, j - 1, row[j], pick(i, j, row[j])) end
end
B:put_rows(2, 0, rows, cols)
-- a cover text that does not count for the width; a link that does
for _, S in ipairs { A, B } do
  S:put(0, 0, "a title far wider than any column of the block", F.h1, true)
  S:url(0, 7, "internal:'Summary'!A1", F.link, "")
end

local wa, wb_ = A.ws:widths(), B.ws:widths()
for c = 0, 7 do
  check(wa[c] == wb_[c], ("width of column %d: put %s, put_rows %s"):format(
    c, tostring(wa[c]), tostring(wb_[c])))
end
-- widths: "FAIL"/"PASS" 4; 1e300: 301 digits + 100 separators + 1;
-- 2.5 and -0.001 (6 and 7: decimals count 4); the cut text's 32766
-- characters; booleans 5; column 7: a link with no text (0, but there)
check(wa[0] == 4, "width of statuses: " .. tostring(wa[0]))
check(wa[1] == 402, "width of 1e300: " .. tostring(wa[1]))
check(wa[2] == 7, "width of -0.001: " .. tostring(wa[2]))
check(wa[3] == 32766, "width of the cut text: " .. tostring(wa[3]))
check(wa[4] == 5, "width of booleans: " .. tostring(wa[4]))
check(wa[7] == 0, "a link with an empty text widens its column to 0")
check(wa[5] == 126, "width of the wrapped text: " .. tostring(wa[5]))
-- wrapped lines in columns 10 characters wide: "a" + "longer second
-- line" (19 -> 2) = 3 lines on row 2; on row 4 the cut text (32766 ->
-- 3277) and "wraps www..." (126 -> 13): the most
local ten = {}
for c = 0, 7 do ten[c] = 10 end
local la, lb = A.ws:wrapped_lines(ten), B.ws:wrapped_lines(ten)
check(la[2] == 3 and lb[2] == 3, ("row 2 lines: %s / %s"):format(la[2], lb[2]))
check(la[4] == 3277 and lb[4] == 3277, ("row 4 lines: %s / %s"):format(la[4], lb[4]))
check(la[3] == 1 or la[3] == nil, "a one-line row is left out")
for _, S in ipairs { A, B } do S:fit_columns({}, 40) end

-- misuse raises, naming the call
local ok, err = pcall(B.ws.put_rows, B.ws, 0, 0, { { 1 } }, { "x" })
check(not ok and tostring(err):find("report.put_rows: column 1"), "bad column: " .. tostring(err))
ok, err = pcall(B.ws.put_rows, B.ws, 0, 0, { 5 }, { {} })
check(not ok and tostring(err):find("report.put_rows: row 1"), "bad row: " .. tostring(err))
ok, err = pcall(B.ws.put, B.ws, 0, 0, 1, "not a format")
check(not ok and tostring(err):find("report.put: a format expected"), "bad format: " .. tostring(err))
wb:close()

-- core.denull: nulls out, whole floats as integers, nested, in place
local rec = cjson.decode('{"a":1,"b":null,"c":[1,2.5,null,3],"d":{"e":2.0,"f":"x"},"g":-0.0,"h":1e300}')
check(core.denull(rec) == rec, "denull returns its table")
check(math.type(rec.a) == "integer" and rec.b == nil, "denull: a, b")
check(math.type(rec.c[1]) == "integer" and rec.c[2] == 2.5 and rec.c[3] == nil
      and math.type(rec.c[4]) == "integer", "denull: a list")
check(math.type(rec.d.e) == "integer" and rec.d.f == "x", "denull: nested")
check(math.type(rec.g) == "integer" and math.type(rec.h) == "float", "denull: -0.0, 1e300")
check(core.denull("x") == "x", "denull of a string")

-- journal.read's lines: blank lines, a torn one, none at the end
local jpath = outdir .. "/lines.jsonl"
local jf = assert(io.open(jpath, "w"))
jf:write('{"type":"run","n":1}\n\n  \n{"type":"result","v":2.0}\n{"type":"res', '\n{"type":"end"}')
jf:close()
local recs = require("strata.journal").read(jpath)
check(#recs == 3 and recs[1].n == 1 and math.type(recs[2].v) == "integer"
      and recs[3].type == "end", "journal.read: " .. #recs .. " records")

-- redact.clean (core.clean_copy): secrets masked in texts and keys, the
-- value of a secret key masked, shared tables copied once, a cycle kept,
-- metatables kept, numbers and booleans under a secret key left as they are
local redact = require "strata.redact"
redact.add("s3cr3t-value-42")
local shared = { "s3cr3t-value-42 in a list" }
local mt = { kind = "row" }
local model = setmetatable({ note = "token s3cr3t-value-42 here", password = "plain",
  secret_count = 3, access_key = true, ["key s3cr3t-value-42"] = 1,
  a = shared, b = shared, deep = { url = "https://user:pw1234@host/x" },
  bad = "bytes \xff" }, mt)
model.self = model
local c = redact.clean(model)
check(c ~= model and getmetatable(c) == mt, "clean: a copy with the metatable")
check(c.note == "token *** here", "clean: a text: " .. tostring(c.note))
check(c.password == "***", "clean: a secret key's text")
check(c.secret_count == 3 and c.access_key == true, "clean: numbers and booleans kept")
check(c["key ***"] == 1 and c["key s3cr3t-value-42"] == nil, "clean: a key masked")
check(c.a == c.b and c.a ~= shared and c.a[1] == "*** in a list", "clean: shared once")
check(c.self == c, "clean: a cycle stays a cycle")
check(c.deep.url == "https://***@host/x", "clean: user:password@ " .. tostring(c.deep.url))
check(c.bad == "bytes \u{FFFD}", "clean: invalid UTF-8")
check(redact.clean("s3cr3t-value-42") == "***" and redact.clean(7) == 7, "clean: scalars")
check(model.note == "token s3cr3t-value-42 here", "clean: the original untouched")
-- what nothing changes in is kept as it is (the writers only read)
local plain = { t = { "a", 1 }, s = "text" }
local held = { plain = plain, n = "token s3cr3t-value-42" }
local ch = redact.clean(held)
check(ch ~= held and ch.plain == plain and ch.n == "token ***", "clean: unchanged parts shared")
check(redact.clean(plain) == plain, "clean: nothing to mask, v itself")

if check.n > 0 then
  io.stderr:write(check.n, " failure(s)\n")
  os.exit(1)
end
print("report bulk: ok")
