-- tests/report/write.lua OUTDIR FIXTURE: write the workbook, JSON and JUnit
-- of the fixture model into OUTDIR (read back by check.py), plus the
-- checks that need Lua: failures raise clear messages, the binding's
-- handle rules, sheet names, JSON round trip, hostile strings, an empty
-- model.  Run: ./build/strata lua tests/report/write.lua OUTDIR FIXTURE
local outdir, fixture = arg[1], arg[2]
assert(outdir and fixture, "usage: write.lua OUTDIR FIXTURE")
local xl = require "strata.report"
local cjson = require "cjson"
local workbook = require "strata.report.workbook"
local json = require "strata.report.json"
local junit = require "strata.report.junit"

local check = dofile(arg[0]:match("^(.*)/") .. "/../lib/check.lua")({ quiet = true })
local function raises(fn, pattern, what)
  local ok, err = pcall(fn)
  check(not ok, what .. ": did not raise")
  if not ok then
    check(tostring(err):find(pattern), ("%s: message %q lacks %q"):format(
      what, tostring(err), pattern))
  end
  return err
end

local model = dofile(fixture)
os.execute("mkdir -p '" .. outdir .. "'")
workbook.write(outdir .. "/book.xlsx", model)
json.write(outdir .. "/run.json", model)
junit.write(outdir .. "/run.xml", model)

-- Failed writes raise, naming the path and the cause: an output the
-- command line named that cannot be written is a usage error (exit 2,
-- no traceback: strata.command.guard)
local bad = "/nonexistent-dir/sub/book.xlsx"
local e = raises(function() workbook.write(bad, model) end,
       "workbook: cannot write /nonexistent%-dir/sub/book%.xlsx: .*Error creating "
       .. "output xlsx file", "workbook to a missing directory")
check(require("strata.args").is_usage_error(e), "a workbook that cannot be written: exit 2")
e = raises(function() json.write("/nonexistent-dir/run.json", model) end,
       "report%.json: cannot write /nonexistent%-dir/run%.json: ",
       "json to a missing directory")
check(require("strata.args").is_usage_error(e), "a JSON that cannot be written: exit 2")
raises(function() junit.write("/nonexistent-dir/run.xml", model) end,
       "report%.junit: cannot write /nonexistent%-dir/run%.xml: ",
       "junit to a missing directory")
-- A directory where the file should be.
raises(function() workbook.write(outdir, model) end, "workbook: cannot write ",
       "workbook over a directory")
raises(function() workbook.write("", model) end, "non%-empty",
       "workbook with an empty path")
raises(function() workbook.write(outdir .. "/x.xlsx", 42) end,
       "model must be a table", "workbook of a number")
check(io.open(outdir .. "/x.xlsx") == nil, "a failed write left a file")

-- The binding's handle rules (STYLE.md, For strata 6).
do
  local wb = xl.workbook(outdir .. "/handles.xlsx")
  local ws = wb:worksheet("S")
  local f = wb:format { bold = true, bg_color = "#C6EFCE" }
  local ch = wb:chart("scatter")
  raises(function() ch:series { values = { ws, 0, 0, 3, 0 } } end,
         "scatter chart needs 'categories'", "scatter without x values")
  raises(function() wb:format { bogus = true } end,
         "unknown option 'bogus'", "unknown format key")
  raises(function() wb:format { bg_color = "green" } end,
         "#RRGGBB", "bad colour")
  raises(function() wb:worksheet("a/b") end, "invalid characters",
         "invalid sheet name")
  raises(function() wb:worksheet("s") end, "already in use",
         "duplicate sheet name (case-insensitive)")
  raises(function() ws:write(-1, 0, 1) end, "row out of range",
         "negative row")
  raises(function() ws:write_number(0, 0, 0 / 0) end, "finite",
         "write_number(NaN)")
  ws:write(0, 0, 0 / 0, f)   -- NaN -> blank, no raise
  local other = xl.workbook(outdir .. "/other.xlsx")
  raises(function() ws:write(0, 0, 1, other:format {}) end,
         "another workbook", "format of another workbook")
  other = nil
  wb:close()
  raises(function() ws:write(0, 1, 1) end, "workbook is closed",
         "sheet use after close")
  raises(function() wb:close() end, "workbook is closed", "double close")
  raises(function() wb:format {} end, "workbook is closed",
         "format after close")
  collectgarbage()   -- __gc of a closed and of an unwritten workbook
  check(io.open(outdir .. "/other.xlsx") == nil,
        "an unclosed workbook was written at gc")
  do
    local tmp <close> = xl.workbook(outdir .. "/discarded.xlsx")
    tmp:worksheet("x")
  end
  check(io.open(outdir .. "/discarded.xlsx") == nil,
        "<close> on an unclosed workbook wrote it")
end

-- Sheet names: sanitised, cut to 31 characters, unique without case.
check(xl.sheet_name("R9 a/b:c*d?e[f]g\\h") == "R9 a_b_c_d_e_f_g_h",
      "sheet_name sanitising")
check(utf8.len(xl.sheet_name(string.rep("\u{00E9}", 40))) == 31,
      "sheet_name cuts at 31 characters")
do
  local sheets = require "strata.report.sheet"
  local ctx = { names = { summary = true } }
  local long = "R10 A very long title that is cut at thirty-one"
  local a = sheets.unique(ctx, long)
  local b = sheets.unique(ctx, long)
  local c = sheets.unique(ctx, "SUMMARY")
  check(#a <= 31 and #b <= 31 and a ~= b and b:find(" %(2%)$"),
        ("unique names: %q %q"):format(a, b))
  check(c == "SUMMARY (2)", "unique is case-insensitive: " .. c)
end

-- JSON: round trip through cjson (NaN -> null, integers, strings, order).
do
  local f = assert(io.open(outdir .. "/run.json"))
  local text = f:read("a")
  f:close()
  local doc = cjson.decode(text)
  check(doc.verdict == "FAIL" and doc.format == "strata-report",
        "json verdict/format")
  check(#doc.results == #model.results, "json results count")
  local r1 = doc.results[4]   -- R2 first cell: msg_rate NaN -> null
  check(r1.metrics.msg_rate_mpps == cjson.null, "json NaN -> null")
  check(r1.metrics.bw_gbps == model.results[4].metrics.bw_gbps,
        "json float round trip")
  check(doc.results[1].cell and next(doc.results[1].cell) == nil,
        "json empty cell")
  check(text:find('"params": %[%]'), "json empty params as []")
  check(text:find('"empty": {}'), "json empty map as {}")
  check(json.encode { 0.1, 1 / 3, 2 ^ 53, -0.0 } ==
        "[0.1,0.3333333333333333,9007199254740992,-0]",
        "json shortest round-trip numbers: " ..
        json.encode { 0.1, 1 / 3, 2 ^ 53, -0.0 })
  check(json.encode { s = "a\"b\\c\n\1/é" } ==
        '{\n  "s": "a\\"b\\\\c\\n\\u0001/é"\n}', "json string escapes")
  local t = {}
  t.self = t
  raises(function() json.encode(t) end, "cycle", "json cycle")
  raises(function() json.encode { f = print } end, "cannot encode a function",
         "json function")
  -- stable: the same model gives the same bytes
  check(json.encode(json.document(model)) == json.encode(json.document(model)),
        "json stable output")
end

-- Hostile strings and an empty model: every writer still produces files
-- the readers accept (check.py parses them).
do
  local m = dofile(fixture)
  local evil = "bad \xff utf8 \1 ctl <x> & \"q\" ]]> '" .. string.rep("z", 40000)
  m.tests[1].title = evil
  m.tests[1].reason = evil
  m.results[1].notes = { evil }
  m.results[1].metrics.text = evil
  m.inventory.evil = evil
  workbook.write(outdir .. "/evil.xlsx", m)
  json.write(outdir .. "/evil.json", m)
  junit.write(outdir .. "/evil.xml", m)
  local empty = { run = {}, tests = {}, results = {}, criteria = {},
                  layers = {}, verdict = "NO TESTS" }
  workbook.write(outdir .. "/empty.xlsx", empty)
  json.write(outdir .. "/empty.json", empty)
  junit.write(outdir .. "/empty.xml", empty)
end

-- Odd but legal shapes: string parameters (a line chart over categories),
-- a missing status, series without values, a bad chart spec, a result
-- without metrics.  Every writer copes.
do
  local odd = {
    run = { started = "2026-11-29T19:00:00Z", interrupted = true },
    criteria = {},
    layers = { "host", "s3" }, verdict = "FAIL",
    message = "The run was interrupted: results are incomplete.",
    tests = {
      { id = "X1", layer = "s3", title = "op matrix", status = "PASS",
        cells = 4, params = { "op", "size" } },
      { id = "X2", layer = "odd-layer", title = "no status", cells = 1 },
    },
    results = {},
  }
  local i = 0
  for _, op in ipairs { "read", "write" } do
    for _, size in ipairs { 1, 2 } do
      i = i + 1
      odd.results[i] = { id = "X1", layer = "s3", params = { "op", "size" },
        cell = { op = op, size = size }, status = "PASS", headline = "v",
        metrics = { v = i * 1.5, ok = true },
        series = i == 1 and { t = { 0, 1 } } or nil,
        tables = i == 2 and { { name = "bad chart", columns = { "a" },
          rows = { { 1 }, { 2 } }, chart = { x = 3, y = { 1 } } } } or nil }
    end
  end
  odd.results[5] = { id = "X2", layer = "odd-layer", cell = {} }
  -- a long sampled series: thinned on Counters to at most 5000 rows
  local t, v = {}, {}
  for k = 1, 12001 do t[k] = (k - 1) * 0.1 v[k] = k % 100 end
  odd.results[1].series = { t = t, values = { ["cpu.total.user"] = v } }
  workbook.write(outdir .. "/odd.xlsx", odd)
  json.write(outdir .. "/odd.json", odd)
  junit.write(outdir .. "/odd.xml", odd)
end

if check.n > 0 then
  io.stderr:write(check.n, " failure(s)\n")
  return 1
end
print("report write: all checks passed; outputs in " .. outdir)
return 0
