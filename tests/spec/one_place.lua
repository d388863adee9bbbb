-- one_place.lua - one place per shipped number, and no rule outside the
-- criteria (issue 26).  Over every shipped spec (specs/) and the libraries
-- they share (lua/strata/lib/):
--
--  1. loaded, no shipped test carries inline `criteria` (whatever their
--     spelling: the loader's parsed table is what counts), so no spec
--     holds a number that specs/thresholds.yaml or a profile holds;
--  2. every resolved criterion - group members and WARN bands included -
--     comes from the thresholds file or a profile (its source file:line),
--     with the shipped file alone and with each shipped profile over it;
--     and every shipped test is judged by at least one criterion (a test
--     with none would be decided by its run alone);
--  3. read as text, no `fail(` call sits under a condition that compares
--     with a number other than 0, compares two measurements, acts on a
--     computed verdict or reads the site file (a limit in code),
--     and no spec compares a measurement with a decimal literal or keeps a
--     decimal default (`x >= 1.10`, `ratio or 0.9`), nor reads the site
--     keys that held rules before (s3rdma.benefit, vllm.e5_rule,
--     nccl.pair_ratio): the idioms of a rule written in a spec's run;
--     and no line sets a verdict-like state ("mismatch", "FAIL", "agree"
--     ...) from a comparison with a number of its own (in the line, its
--     condition, or a name it uses defined just above);
--  4. the detectors of 3 fire on planted texts (so a silent pass of 3
--     means the tree is clean, not that the scan is blind), the NIC
--     witness's old judge among them;
--  5. the criteria that replaced the last side doors (the s3rdma counter
--     witness's tolerance, E2's witness count, the NIC witness) judge as
--     the code did.
-- Run: strata lua one_place.lua  (STRATA_HOME is the source tree).
local setup = require "strata.setup"
local thresholds = require "strata.thresholds"
local core = require "strata.core"

local root = STRATA_HOME
local bad = 0
local function fail(fmt, ...)
  bad = bad + 1
  print("FAIL " .. fmt:format(...))
end

-- 1 and 2: load as a run loads.
local tfile = root .. "/specs/thresholds.yaml"
local profiles = { false, root .. "/lab/thresholds.yaml",
                   root .. "/tests/s3rdma/thresholds-guest.yaml" }
for _, prof in ipairs(profiles) do
  local s = setup.load { paths = { root .. "/specs" }, thresholds = tfile,
                         profile = prof or nil }
  local judged = {}
  if not prof then
    for _, t in ipairs(s.tests) do
      local names = {}
      for name in pairs(t.criteria) do names[#names + 1] = name end
      table.sort(names)
      if #names > 0 then
        fail("%s (%s) carries inline criteria: %s - they belong in "
             .. "specs/thresholds.yaml", t.id, t.where, table.concat(names, ", "))
      end
    end
  end
  thresholds.each(s.criteria, function(c)
    judged[c.id] = true
    local file = tostring(c.source):match("^(.-):%d+$")
    local ok = file and (core.realpath(file) == core.realpath(tfile) or
                         (prof and core.realpath(file) == core.realpath(prof)))
    if not ok then
      fail("%s.%s.%s: source %s is neither the thresholds file nor the profile",
           c.id, c.metric, c.op, tostring(c.source))
    end
  end)
  for _, t in ipairs(s.tests) do
    if not judged[t.id] then
      fail("%s (%s): no criterion judges it", t.id, t.where)
    end
  end
  print(("ok   %d criteria of %d tests from %s%s"):format(#s.criteria, #s.tests,
        "specs/thresholds.yaml", prof and (" + " .. prof:match("[^/]+/[^/]+$")) or ""))
end

-- 3: the text of the specs and their libraries.
local function lines_of(path)
  local out = {}
  for l in io.lines(path) do out[#out + 1] = l end
  return out
end

-- Strip comments and string literals: numbers in messages are not rules.
local function code(l)
  l = l:gsub("%-%-.*$", "")
  l = l:gsub('"[^"]*"', '""'):gsub("'[^']*'", "''")
  return l
end

-- The condition governing line i: the nearest `if`/`elseif` above it
-- (up to its `then`), within the same block as far as a scan can tell.
local function condition(ls, i)
  for j = i, math.max(1, i - 12), -1 do
    local c = code(ls[j])
    local head = c:match("^%s*if%s+(.*)") or c:match("^%s*elseif%s+(.*)")
                 or c:match("[;%s]if%s+(.-)%s+then")
    if head then
      local text = head
      local k = j
      while not text:find("then") and k < i do
        k = k + 1
        text = text .. " " .. code(ls[k])
      end
      return (text:gsub("then.*$", "")), j
    end
    if j < i and c:match("^%s*end%s*$") then return nil end
  end
end

-- Why a condition is a rule written in code, or nil.
local function rule_in(cond)
  for num in cond:gmatch("[<>=~]=?%s*(%-?[%d%.]+)") do
    if tonumber(num) and tonumber(num) ~= 0 then
      return "compares with " .. num
    end
  end
  for num in cond:gmatch("(%-?[%d%.]+)%s*[<>=~]=?") do
    if tonumber(num) and tonumber(num) ~= 0 and not cond:find("%w" .. num) then
      return "compares with " .. num
    end
  end
  if cond:find("site") then return "reads the site file" end
  -- a measurement against another (x < y): a limit that is a metric
  if cond:find("[%w_%]%)]%s*[<>]=?%s*[%a_]") then
    return "compares two measurements"
  end
  -- a verdict computed in code (p.verdict ~= "PROVEN"): the criterion on
  -- the fact (<phase>.proven) is the one that decides
  if cond:find("verdict%s*[~=]=") then return "acts on a computed verdict" end
  if cond:find("or%s+%d") then return "a number as default" end
end

-- Idioms of a limit kept in a spec's run (specs only: libraries hold
-- parsers whose decimals are formats, not limits).
local function limit_idiom(c)
  -- the site keys that held rules before they were criteria
  for _, k in ipairs { "%.benefit%f[^%w_]", "%.e5_rule%f[^%w_]",
                       "%.pair_ratio%f[^%w_]" } do
    if c:find(k) then return "reads a retired rule key (" .. k .. ")" end
  end
  if c:find("[<>]=?%s*%d+%.%d") then return "compares with a decimal literal" end
  if c:find("%d+%.%d+%s*[<>]") then return "compares with a decimal literal" end
  if c:find("or%s+%d+%.%d+") then return "keeps a decimal default" end
end

-- Decimals in specs that are workload parameters, not limits (file and
-- the text of the line), each with why.
local ALLOWED = {
  { "specs/s3/s3.lua", "s.get_ratio or 0.7",
    "MIX's GET share of the operations (a workload parameter)" },
}
local function allowed(name, line)
  for _, a in ipairs(ALLOWED) do
    if name == a[1] and line:find(a[2], 1, true) then return true end
  end
end

-- A verdict-like state set in code (the NIC witness's "mismatch" before
-- issue 26 closed it): a line that assigns or returns one of these words
-- as a string...
local VERDICT_WORDS = { "mismatch", "disagree", "fail", "failed", "FAIL",
                        "PASS", "WARN", "NOT PROVEN", "PROVEN", "agree" }
local function verdict_word(l)
  local c = l:gsub("%-%-.*$", "")
  if not (c:find("[%w_%]]%s*=[^=]") or c:find("return%s") or
          c:find("[%s%(]and%s+[\"']") or c:find("[%s%(]or%s+[\"']")) then
    return nil
  end
  for _, w in ipairs(VERDICT_WORDS) do
    if c:find('"' .. w .. '"', 1, true) or c:find("'" .. w .. "'", 1, true) then
      return w
    end
  end
end

-- ...decided by a comparison with a number of its own: in the line, in
-- its governing condition, or in the definition (up to 20 lines above,
-- within the function) of a name the line uses.
local function numeric_compare(e)
  if rule_in(e) and rule_in(e):find("^compares with") then return true end
  if not (e:find("[<>]=?") or e:find("[=~]=")) then return false end
  for num in e:gmatch("%f[%w_%.]([%d]+%.?[%d]*)") do
    if tonumber(num) ~= 0 then return true end
  end
  return false
end
local function state_rule(ls, i)
  local c = code(ls[i])
  if numeric_compare(c) then return "in the line" end
  local cond = condition(ls, i)
  if cond and numeric_compare(cond) then return "in its condition" end
  local rhs = c:match("=%s*(.*)$") or c:match("return%s+(.*)$") or c
  for j = i - 1, math.max(1, i - 20), -1 do
    local d = code(ls[j])
    if d:find("function") then break end
    local name, expr = d:match("^%s*local%s+([%a_][%w_]*)%s*=%s*(.*)$")
    if not name then name, expr = d:match("^%s*([%a_][%w_]*)%s*=%s*(.*)$") end
    if name and rhs:find("%f[%w_]" .. name .. "%f[^%w_]") and
       numeric_compare(expr) then
      return ("in %s (line %d)"):format(name, j)
    end
  end
end

local function scan(path, is_spec, report)
  local ls = type(path) == "table" and path or lines_of(path)
  local name = type(path) == "table" and "(planted)" or path:sub(#root + 2)
  for i, l in ipairs(ls) do
    local c = code(l)
    local word = verdict_word(l)
    local where = word and state_rule(ls, i)
    if where then
      report("%s:%d: a verdict-like state (%q) set from a number of its own "
             .. "(%s): %s", name, i, word, where, l:match("^%s*(.-)%s*$"))
    end
    if c:find("[%.:]fail%s*%(") or c:find("^%s*fail%s*%(")
       or c:find("%.fail%s*=[^=]") then
      local cond = condition(ls, i)
      local why = cond and rule_in(cond)
      if why then report("%s:%d: a FAIL decided in code (%s): %s", name, i,
                         why, l:match("^%s*(.-)%s*$")) end
    end
    if is_spec then
      local why = limit_idiom(c)
      if why and not allowed(name, l) then report("%s:%d: %s: %s", name, i, why, l:match("^%s*(.-)%s*$")) end
    end
  end
end

local files = {}
local p = io.popen(("find %q %q -name '*.lua' | sort"):format(
  root .. "/specs", root .. "/lua/strata/lib"))
for f in p:lines() do files[#files + 1] = f end
p:close()
assert(#files > 20, "found only " .. #files .. " files")
for _, f in ipairs(files) do
  scan(f, f:find("/specs/", 1, true) ~= nil, fail)
end
print(("ok   %d spec and library files scanned for rules in code"):format(#files))

-- 4: the detectors fire on what they are for, and stay quiet on what is
-- allowed (an existence check against 0; a number in a message).
local function planted(text, is_spec)
  local n = 0
  local ls = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do ls[#ls + 1] = l end
  scan(ls, is_spec, function() n = n + 1 end)
  return n
end
local cases = {
  { "if r.ratio < 0.9 then\n  t.fail(\"slow\")\nend", false, 1 },
  { "if bw < (t.site.rdma or {}).floor then t.fail(\"low\") end", false, 1 },
  { "if x > 2 and y then\n  o.fail = \"too many\"\nend", false, 1 },
  { "if n > 2 then\n  t.fail(\"too many\")\nend", false, 1 },
  { "if r.ops == 0 and r.errors > 0 then\n  t.fail(\"none of 3 passed\")\nend", false, 0 },
  { "local ok = tr >= 1.10", true, 1 },
  { "local ratio = b.throughput_ratio or 1.10", true, 1 },
  { "local size = s.size or 4096", true, 0 },
  { "t.note((\"x%.2f\"):format(v))", true, 0 },
  { "local rule = (t.site.vllm or {}).e5_rule or {}", true, 1 },
  -- the side doors issue 26 closed last (lib/s3rdma.lua, specs/s3/E2.lua)
  { "if p.verdict == \"DECLINED\" then\n  t.fail(\"DECLINED: \" .. p.reason)\nend", false, 1 },
  { "if a then x = 1\nelseif p.verdict ~= \"PROVEN\" then\n  t.fail(p.reason)\nend", false, 1 },
  { "if m.w and m.recv_bytes < m.write_bytes then\n  t.fail(\"fewer\")\nend", false, 1 },
  { "if #xs > 0 then\n  t.fail(\"none\")\nend", false, 0 },
  -- a verdict-like state from a number (lib/s3nic.lua judge, before)
  { "local grew = rd >= 0.9 * moved\nout.state = grew and \"agree\" or \"mismatch\"", false, 1 },
  { "if nd > 1048576 then\n  return \"fail\"\nend", false, 1 },
  { "local st = share <= 0.05 and \"PASS\" or \"FAIL\"", false, 1 },
  { "out.witness = rd and \"read\" or \"absent\"", false, 0 },
  { "if ok == 0 then\n  return \"failed\"\nend", false, 0 },
}
for _, k in ipairs(cases) do
  local got = planted(k[1], k[2])
  if (got > 0) ~= (k[3] > 0) then
    fail("detector on %q: %d finding(s), wanted %s", k[1], got,
         k[3] > 0 and "one" or "none")
  end
end
print(("ok   detectors checked on %d planted texts"):format(#cases))
-- and on the NIC witness's judge as it was (git show c361a19:lua/strata/
-- lib/s3nic.lua, copied beside this file as a planted text)
do
  local n = 0
  scan(lines_of(root .. "/tests/spec/planted/s3nic_judge.lua.txt"), false,
       function() n = n + 1 end)
  if n == 0 then fail("detector missed the NIC witness's old judge") end
  print(("ok   the NIC witness's old judge caught (%d finding(s))"):format(n))
end

-- 5: the criteria that took over the last side doors (lib/s3rdma.lua's
-- counter tolerance and t.fail, specs/s3/E2.lua's witness comparison)
-- judge as the code did, from specs/thresholds.yaml.
do
  local s = setup.load { paths = { root .. "/specs" }, thresholds = tfile }
  local function judged(id, metric, metrics)
    for _, c in ipairs(s.criteria) do
      if c.id == id and c.metric == metric then
        local all = true
        for _, ck in ipairs(thresholds.judge({ c }, { metrics = metrics })) do
          all = all and ck.ok
        end
        return all
      end
    end
    fail("%s.%s is not a shipped criterion", id, metric)
  end
  local cases = {
    { "E3", "*.counter_gap", { ["put.counter_gap"] = 0, ["get.counter_gap"] = 0 }, true },
    { "E3", "*.counter_gap", { ["put.counter_gap"] = 0, ["get.counter_gap"] = 0.01 }, false },
    { "B15", "*.counter_gap", { ["mp.counter_gap"] = 0 }, true },
    { "E2", "witness_received", { witness = "read", witness_shortfall_bytes = 0 }, true },
    { "E2", "witness_received", { witness = "read", witness_shortfall_bytes = 4096 }, false },
    { "E2", "witness_received", { witness = "n/a" }, true },
    { "E2", "witness_received", { witness = "unreadable" }, false },
    -- the NIC witness (was lib/s3nic.lua judge): RDMA counters >= 0.9 x
    -- the bytes moved, netdev <= 5 % or <= 1 MiB; absent and rxe's
    -- netdev not held against the row
    { "B04", "nic", { nic_witness = "read", nic_rdma_ratio_min = 1.0, nic_netdev = "read",
                      nic_netdev_share_max = 0.0001, nic_netdev_bytes_max = 12565 }, true },
    { "B04", "nic", { nic_witness = "read", nic_rdma_ratio_min = 0.89, nic_netdev = "read",
                      nic_netdev_share_max = 0.0001, nic_netdev_bytes_max = 12565 }, false },
    { "B04", "nic", { nic_witness = "read", nic_rdma_ratio_min = 1.0, nic_netdev = "read",
                      nic_netdev_share_max = 0.06, nic_netdev_bytes_max = 2097152 }, false },
    { "B04", "nic", { nic_witness = "read", nic_rdma_ratio_min = 1.0, nic_netdev = "read",
                      nic_netdev_share_max = 0.06, nic_netdev_bytes_max = 40000 }, true },
    { "E3", "nic", { nic_witness = "read", nic_rdma_ratio_min = 1.3, nic_netdev = "n/a" }, true },
    { "B15", "nic", { nic_witness = "absent" }, true },
  }
  for _, k in ipairs(cases) do
    if judged(k[1], k[2], k[3]) ~= k[4] then
      fail("%s.%s on %s: wanted %s", k[1], k[2], require("cjson").encode(k[3]),
           k[4] and "PASS" or "FAIL")
    end
  end
  print(("ok   %d judgements of the criteria that replaced side doors"):format(#cases))
end

if bad > 0 then
  print(("one_place: %d failure(s)"):format(bad))
  os.exit(1)
end
print("one_place: every shipped rule is a criterion, each number in one place")
