-- strata run: execute a collection of specs and write the workbook, the
-- journal beside it, and (on request) JSON and JUnit.
local core = require "strata.core"
local args = require "strata.args"
local setup = require "strata.setup"
local thresholds = require "strata.thresholds"
local spec = require "strata.spec"
local runner = require "strata.runner"
local journal = require "strata.journal"
local verdict = require "strata.verdict"
local command = require "strata.command"
local compare = require "strata.compare"
local outputs = require "strata.outputs"
local redact = require "strata.redact"
local sev = require "strata.severity"

local M = {
  summary = "run specs and write the workbook (+ journal, JSON, JUnit)",
  usage = [[
usage: strata run [options] [PATH...]

PATH: spec files or folders (default: specs/).
  -o, --output FILE.xlsx  workbook (default reports/strata-<host>-<UTC>.xlsx);
                          the journal FILE.jsonl is written beside it
  --site FILE             site facts (GPU count, line rate, peers, endpoints)
  --thresholds FILE       criteria (default: thresholds.yaml next to the specs)
  --profile FILE          criteria overlaid on --thresholds (per metric)
  --lab                   run against the local emulated cluster (docs/lab.md):
                          starts it unless `strata lab up` did, runs in its
                          guest a, stops it; its own site file and profile
  --set ID.metric.op=V    override one criterion (op: min max eq ne in;
                          V=none drops it); repeatable
  --only PATTERN          run only matching IDs, tags or layers (globs; what
                          they need comes along); repeatable
  --json FILE             also write the results as JSON
  --junit FILE            also write JUnit XML
  --prometheus FILE       also write node_exporter textfile gauges (.prom)
  --journal FILE          the journal (default: beside the workbook)
  --fleet slurm           across the nodes of this Slurm allocation, into
                          one fleet workbook (docs/fleet.md)
  --fleet k8s             inside a pod: each agent node's own rungs as a
                          Job pinned to it (docs/kubernetes.md)
  --act drain,resume      with --fleet slurm: drain the nodes the severity
                          model says to, resume those strata drained that
                          pass now (docs/fleet.md, "Acting on verdicts")
  --act label,taint       with --fleet k8s: verdict labels/annotations on
                          each Node, strata's NoSchedule taint while the
                          model says drain
  --dry-run               print what --act would run, run nothing
  --until-pass N          (--fleet slurm) a FAILed or ERRORed cell again, at most N
                          tries: failed then passed is FLAKY
  --repeat N              (--fleet slurm) every cell N times; every try is kept
  --pairs MODE            (--fleet slurm) ring, all or phased: which node
                          pairs R2/R3 run between (site.fleet.pairs.mode)
  --baseline FILE.jsonl   an earlier run's journal: a "vs baseline" column
                          on every test sheet, and criteria may name
                          baseline.<metric> ({ min: "0.95 * baseline.bw_gbps" })
  --no-gate               record only: every test measured and judged, its
                          status shown (marked record only), but none gates
                          the exit code or the tests that need it
  --strict                a test that WARNed (past a warn limit, within its
                          FAIL limit) makes the exit code 3
  -v, --verbose           tracebacks of errors on stderr
  -h, --help              this text
Exit: 0 nothing failed (warnings included), 1 a test FAILED, ERRORed or
was BLOCKED (or the run was interrupted), 2 usage or spec/site/threshold
file errors, 3 with --strict: nothing failed but a test WARNed.]],
}

-- check's options plus --fleet (docs/fleet.md)
M.OPTIONS = setmetatable({ ["--fleet"] = "fleet", ["--act"] = "act",
  ["--dry-run"] = { "dry_run", flag = true },
  ["--repeat"] = "repeat", ["--until-pass"] = "until_pass", ["--pairs"] = "pairs",
  ["--strict"] = { "strict", flag = true },
  ["--no-gate"] = { "no_gate", flag = true } }, { __index = command.RUN_OPTIONS })

-- The inventory is taken in a child process, as a cell is: what it
-- probes (NVML, sysfs, libcurl's version) then neither hangs the run nor
-- maps libraries into the runner that every cell's fork would copy
-- (libcurl and its 28 libraries: docs/performance.md, "Runner").
local function inventory()
  local cjson = require "cjson"
  local st, payload = core.isolate(function()
    local ok, sys = pcall(require, "strata.sys")
    if not ok then return "{}" end
    local ok2, r = pcall(sys.inventory)
    return cjson.encode(ok2 and r or { error = tostring(r) })
  end, { timeout = 120 })
  local inv
  if st == "ok" then
    local ok, r = pcall(cjson.decode, payload)
    inv = ok and type(r) == "table" and journal.denull(r)
      or { error = "the inventory's child answered no inventory" }
  else
    inv = { error = ("the inventory did not finish: %s"):format(st) }
  end
  inv.host = inv.host or core.hostname()
  return inv
end

-- The spec folders as given and as real paths: criteria sources are shown
-- relative to them.
local function spec_roots(paths)
  local roots = {}
  for _, p in ipairs(paths) do
    local dir = core.stat(p) == "dir" and p or (p:match("^(.*)/[^/]*$") or ".")
    roots[#roots + 1] = dir
    local real = core.realpath(dir)
    if real and real ~= dir then roots[#roots + 1] = real end
  end
  return roots
end

function M.main(argv)
  return command.guard(function()
    local o, paths = args.parse(argv, M.OPTIONS)
    if o.help then io.stdout:write(M.usage, "\n") return 0 end
    if o.lab then return require("strata.cmd.lab").run(argv, o) end
    if o.fleet == "k8s" then return require("strata.k8s.fleet").main(o, paths, argv) end
    if o.fleet then return require("strata.fleet.run").main(o, paths, argv) end
    if o.act or o.dry_run then
      error(args.usage_error("--act and --dry-run act on a fleet's nodes: "
                             .. "use them with --fleet (docs/fleet.md)"), 0)
    end
    if o.pairs then
      error(args.usage_error("--pairs is a fleet option (strata run --fleet slurm)"), 0)
    end
    if o["repeat"] or o.until_pass then
      error(args.usage_error((o["repeat"] and "--repeat" or "--until-pass")
        .. " is a fleet option (strata run --fleet slurm): a single host's cells run once"), 0)
    end
    local s = setup.load { paths = paths, site = o.site, profile = o.profile,
                           thresholds = o.thresholds, set = o.set,
                           no_gate = o.no_gate }
    local order = runner.plan(s.tests, s.by_id, o.only)
    if #order == 0 then
      io.stderr:write("strata: no test matches ", table.concat(o.only or {}, ", "), "\n")
      return 2
    end
    redact.add_from_env(s.site)
    local base
    if o.baseline then
      local ok, recs = pcall(journal.read, o.baseline)
      if not ok or #recs == 0 then
        error(args.usage_error(("--baseline %s: %s"):format(o.baseline,
          ok and "no records" or tostring(recs))), 0)
      end
      base = verdict.build(recs)
    end

    local host = core.hostname()
    local xlsx = o.output or ("reports/strata-%s-%s.xlsx"):format(
      host:gsub("[^%w%-_.]", "_"), core.utc(nil, "%Y%m%dT%H%M%SZ"))
    if not xlsx:match("%.xlsx$") then
      error(args.usage_error("-o must name an .xlsx file: " .. xlsx), 0)
    end
    local dir = xlsx:match("^(.*)/[^/]*$")
    if dir and dir ~= "" then core.mkdir_p(dir) end
    local jpath = o.journal or outputs.journal_path(xlsx)
    local j = journal.open(jpath, { keep = true })
    local argv0 = { "strata", "run" }
    for _, a in ipairs(argv) do argv0[#argv0 + 1] = a end
    j:write { type = "run", version = STRATA_VERSION, argv = argv0,
              host = host, started = core.utc(), files = s.files,
              stamp = type(s.site.site) == "table" and s.site.site.stamp or nil,
              output = xlsx, journal = jpath, cwd = core.realpath("."),
              severity = sev.load_record(o.site, s.site, s.thresholds_file),
              packs = s.packs }
    j:write { type = "inventory", data = inventory() }
    j:write { type = "thresholds", criteria = thresholds.records(s.criteria) }
    local expect = type(s.site.site) == "table" and s.site.site.expect or nil
    if expect ~= nil then
      local ok = type(expect) == "table"
      for _, l in ipairs(ok and expect or {}) do
        if not spec.LAYER_RANK[l] then ok = false end
      end
      if not ok then
        spec.error(o.site, "site.expect must be a list of layers (%s)",
                   table.concat(spec.LAYERS, ", "))
      end
    end
    j:write(runner.plan_record(order, expect, spec_roots(s.paths)))
    local bidx
    if base then
      local rec = compare.baseline_record(o.baseline, base)
      j:write(rec)
      bidx = compare.index(rec.results)
    end

    core.trap_signals()
    io.stderr:write(("strata: %d tests, journal %s\n"):format(#order, jpath))
    for _, p in ipairs(s.packs or {}) do
      io.stderr:write(("strata: hardware pack %s: %s\n"):format(p.name, p.why))
    end
    -- the results the loop kept are dropped here (select): the outputs
    -- are made from the journal, and 10 000 records still referenced make
    -- every collection after the loop walk them
    local interrupted = select(2, runner.run(order, {
      site = s.site, criteria = s.criteria, journal = j, baseline = bidx,
      progress = core.isatty(2), verbose = o.verbose }))
    j:write { type = "end", ended = core.utc(), interrupted = interrupted }
    j:close()

    -- the outputs come from the journal as written, through the same
    -- function as `strata report`: a replay shows what this run shows.
    -- Its records as journal.read reads them were kept as they were
    -- written (journal.open's keep: also when its disk filled up).
    local m = verdict.build(j:read_back())
    outputs.write(m, { xlsx = xlsx, json = o.json, junit = o.junit,
                       prometheus = o.prometheus })
    local c, parts = m.counts, {}
    for _, st in ipairs(verdict.STATUSES) do
      if c[st] > 0 or st == "PASS" or st == "FAIL" then
        parts[#parts + 1] = ("%d %s"):format(c[st], st)
      end
    end
    io.stderr:write(("strata: %s \u{2014} %s%s\n"):format(m.verdict,
      table.concat(parts, ", "), interrupted and " (interrupted)" or ""))
    if m.lowest_failed then
      io.stderr:write(("strata: lowest failed rung: %s (%s %s)\n"):format(
        m.lowest_failed.layer, m.lowest_failed.id, m.lowest_failed.status))
    elseif m.verdict ~= "PASS" and m.message then
      io.stderr:write("strata: ", m.message, "\n")
    end
    io.stderr:write("strata: workbook ", xlsx, "\n")
    return verdict.exit_code(m, o.strict)
  end)
end

return M
