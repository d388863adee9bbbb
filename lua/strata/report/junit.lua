-- strata.report.junit: the run as JUnit XML for CI dashboards.
--
--   require("strata.report.junit").write("reports/run.junit.xml", model)
--
-- One <testsuite> per layer (ladder order), one <testcase> per matrix cell
-- named "R2[size=4096,qps=1]" (just "R2" for a single cell), classname
-- "<layer>.<id>".  FAIL -> <failure> with the failed checks' texts, ERROR
-- -> <error>, SKIP -> <skipped>, BLOCKED, STOPPED, INCOMPLETE and NOT RUN
-- -> <skipped message="STATUS: ...">, FLAKY (a fleet cell that failed a
-- try and passed another) -> a passing case with Maven Surefire's
-- <flakyFailure>; the measured metrics and notes go to <system-out>.  WARN
-- is a passing testcase (nothing in the Ant/Jenkins schema fails or skips
-- a case with a warning) with <properties> (testcase-level properties: the
-- extension testmoapp/junitxml documents) naming strata.status = WARN and
-- the warning, which also opens its <system-out>; a record-only case that
-- did not pass is a passing case the same way (strata.record_only).  Raises on a failed write.
local common = require "strata.report.common"
local verdict = require "strata.verdict"

local M = {}
local fmt, finite = common.fmt, common.finite

local ENT = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
              ['"'] = "&quot;", ["'"] = "&apos;", ["\n"] = "&#10;",
              ["\r"] = "&#13;", ["\t"] = "&#9;" }

-- Text safe for XML 1.0: valid UTF-8, no control characters but tab,
-- newline, carriage return; markup escaped.  attr: escape newlines too.
local utf8_len, find = utf8.len, string.find
local function esc(s, attr)
  s = tostring(s or "")
  -- most texts (names, metrics, times) need nothing: as they are
  if not find(s, "[%c&<>\"'\127]") and utf8_len(s) then return s end
  s = common.utf8_clean(s)
  s = s:gsub("[\0-\8\11\12\14-\31\127]", "?")
  if attr then
    return (s:gsub("[&<>\"'\n\r\t]", ENT))
  end
  return (s:gsub("[&<>]", ENT))
end
M.escape = esc

-- Not measured, and not a failure of what was measured: <skipped>.
local GAP = { STOPPED = true, INCOMPLETE = true, ["NOT RUN"] = true }

local function seconds(v)
  return ("%.3f"):format(finite(v) and v or 0)
end

-- ISO time without the zone letter (the JUnit schema's xs:dateTime).
local function stamp(s)
  return (tostring(s or ""):gsub("Z$", ""))
end

-- Testcases of one test: its results, else one from the test itself.
local function cases_of(t, rs)
  local out = {}
  for _, r in ipairs(rs) do
    local label = verdict.label(r.params or t.params, r.cell)
    out[#out + 1] = {
      name = t.id .. (label ~= "" and ("[" .. label .. "]") or ""),
      classname = tostring(t.layer) .. "." .. t.id, title = t.title,
      status = r.status, reason = r.reason, time = r.duration_s,
      checks = common.failed_checks(r), metrics = r.metrics,
      notes = r.notes, started = r.started,
      -- record only (gate = false, --no-gate): shown as judged, failing
      -- nothing
      recorded = t.record_only and r.status ~= "PASS" and r.status ~= "SKIP",
    }
  end
  if #out == 0 or t.status == "INCOMPLETE" then
    -- NOT RUN, or the cells a killed run never recorded
    out[#out + 1] = { name = t.id .. (#out > 0 and "[not recorded]" or ""),
                      classname = tostring(t.layer) .. "." .. t.id,
                      title = t.title, status = t.status, reason = t.reason,
                      time = #out > 0 and 0 or t.duration_s, checks = {} }
  end
  return out
end

local function by_text(a, b) return tostring(a) < tostring(b) end
local function sorted_keys(t)
  local ks, texts = {}, true
  for k in pairs(t or {}) do
    ks[#ks + 1] = k
    if type(k) ~= "string" then texts = false end
  end
  -- texts only (a journal's metrics): the same order without tostring
  table.sort(ks, not texts and by_text or nil)
  return ks
end

local function testcase(out, c)
  out[#out + 1] = ('    <testcase name="%s" classname="%s" time="%s">')
    :format(esc(c.name, true), esc(c.classname, true), seconds(c.time))
  local reason = c.reason or (#c.checks > 0 and c.checks[1]) or nil
  if c.recorded then
    out[#out + 1] = "      <properties>"
    out[#out + 1] = ('        <property name="strata.status" value="%s"/>')
      :format(esc(c.status, true))
    out[#out + 1] = '        <property name="strata.record_only" value="true"/>'
    out[#out + 1] = "      </properties>"
  elseif c.status == "FAIL" then
    local body = #c.checks > 0 and table.concat(c.checks, "\n") or reason
    out[#out + 1] = ('      <failure message="%s" type="FAIL">%s</failure>')
      :format(esc(reason or "failed", true), esc(body or ""))
  elseif c.status == "ERROR" then
    out[#out + 1] = ('      <error message="%s" type="ERROR">%s</error>')
      :format(esc(reason or "error", true), esc(reason or ""))
  elseif c.status == "SKIP" then
    out[#out + 1] = ('      <skipped message="%s"/>'):format(
      esc(reason or "skipped", true))
  elseif c.status == "BLOCKED" or GAP[c.status] then
    out[#out + 1] = ('      <skipped message="%s"/>'):format(
      esc(c.status .. ": " .. (reason or "a test it needs did not pass"), true))
  elseif c.status == "FLAKY" then
    -- Maven Surefire's rerun report: a passing case carrying the failed try
    out[#out + 1] = ('      <flakyFailure message="%s" type="FLAKY">%s</flakyFailure>')
      :format(esc(reason or "failed a try", true), esc(reason or ""))
  elseif c.status == "WARN" then
    out[#out + 1] = "      <properties>"
    out[#out + 1] = '        <property name="strata.status" value="WARN"/>'
    out[#out + 1] = ('        <property name="strata.warning" value="%s"/>')
      :format(esc(reason or "", true))
    out[#out + 1] = "      </properties>"
  elseif c.status ~= "PASS" then
    out[#out + 1] = ('      <error message="%s" type="%s"/>'):format(
      esc("unknown status " .. tostring(c.status), true),
      esc(tostring(c.status), true))
  end
  local lines = {}
  if c.recorded then
    lines[#lines + 1] = ("RECORD ONLY: %s: %s"):format(c.status, tostring(reason))
  elseif c.status == "WARN" or c.status == "FLAKY" then
    lines[#lines + 1] = c.status .. ": " .. tostring(reason)
  end
  if c.title then lines[#lines + 1] = tostring(c.title) end
  for _, k in ipairs(sorted_keys(c.metrics)) do
    local v = c.metrics[k]
    if type(v) ~= "table" then
      lines[#lines + 1] = ("%s = %s"):format(k, fmt(v))
    end
  end
  for _, n in ipairs(c.notes or {}) do
    lines[#lines + 1] = "note: " .. tostring(n)
  end
  if #lines > 0 then
    out[#out + 1] = "      <system-out>" .. esc(table.concat(lines, "\n"))
      .. "</system-out>"
  end
  out[#out + 1] = "    </testcase>"
end

local function tally(cases)
  local n = { tests = #cases, failures = 0, errors = 0, skipped = 0,
              time = 0 }
  for _, c in ipairs(cases) do
    if c.recorded then   -- a passing case: record only
    elseif c.status == "FAIL" then n.failures = n.failures + 1
    elseif c.status == "SKIP" or c.status == "BLOCKED" or GAP[c.status] then
      n.skipped = n.skipped + 1
    elseif c.status ~= "PASS" and c.status ~= "WARN" and c.status ~= "FLAKY" then
      n.errors = n.errors + 1
    end
    n.time = n.time + (finite(c.time) and c.time or 0)
  end
  return n
end

local function counts_attrs(n)
  return ('tests="%d" failures="%d" errors="%d" skipped="%d" time="%s"')
    :format(n.tests, n.failures, n.errors, n.skipped, seconds(n.time))
end

-- The XML text of suites (each { name =, cases = { case, ... }, host = the
-- hostname when not run.host }, a case
-- as cases_of makes them: name, classname, title, status, reason, time,
-- checks, metrics, notes), every suite stamped with run's start, host and
-- version and the verdict.  The run's suites are its layers; the fleet's
-- (fleet/report.lua) its nodes, their classnames "<node>.<layer>.<id>".
function M.text(name, suites, run, verdict_)
  local body, all = {}, {}
  for _, suite in ipairs(suites) do
    for _, c in ipairs(suite.cases) do all[#all + 1] = c end
    body[#body + 1] = ('  <testsuite name="%s" %s timestamp="%s" '
      .. 'hostname="%s">'):format(esc(suite.name, true),
      counts_attrs(tally(suite.cases)), esc(stamp(run.started), true),
      esc(suite.host or run.host or "", true))
    body[#body + 1] = "    <properties>"
    body[#body + 1] = ('      <property name="strata.version" '
      .. 'value="%s"/>'):format(esc(run.version or "", true))
    body[#body + 1] = ('      <property name="verdict" value="%s"/>')
      :format(esc(verdict_ or "", true))
    body[#body + 1] = "    </properties>"
    for _, c in ipairs(suite.cases) do testcase(body, c) end
    body[#body + 1] = "  </testsuite>"
  end
  local head = {
    '<?xml version="1.0" encoding="UTF-8"?>',
    ('<testsuites name="%s" %s timestamp="%s">'):format(esc(name, true),
      counts_attrs(tally(all)), esc(stamp(run.started), true)),
  }
  return table.concat(head, "\n") .. "\n" .. table.concat(body, "\n")
    .. (#body > 0 and "\n" or "") .. "</testsuites>\n"
end

-- The XML text for model: a suite per layer, in ladder order, then any
-- layer the ladder does not name.
function M.encode(model)
  local by = verdict.by_test(model.results)
  local order, seen, tests_of = {}, {}, {}
  for _, l in ipairs(model.layers or {}) do
    order[#order + 1] = l
    seen[l] = true
  end
  for _, t in ipairs(model.tests or {}) do
    local l = tostring(t.layer)
    if not seen[l] then order[#order + 1] = l seen[l] = true end
    tests_of[l] = tests_of[l] or {}
    table.insert(tests_of[l], t)
  end
  local suites = {}
  for _, l in ipairs(order) do
    if tests_of[l] then
      local cases = {}
      for _, t in ipairs(tests_of[l]) do
        for _, c in ipairs(cases_of(t, by[t.id] or {})) do cases[#cases + 1] = c end
      end
      suites[#suites + 1] = { name = l, cases = cases }
    end
  end
  return M.text("strata", suites, model.run or {}, model.verdict)
end

-- Write model as JUnit XML at path (through path.tmp + rename); raises.
function M.write(path, model)
  common.write_model("report.junit", path, model, M.encode)
end

return M
