#!/usr/bin/python3
"""Runner tests: real spec files through the real strata binary.

Each class is one ctest entry (tests/spec/CMakeLists.txt).  Outputs are
read back: the journal (JSON lines), the JSON report, and the workbook
through openpyxl.
"""
import json
import os
import signal
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "fixtures")
sys.path.insert(0, os.path.join(HERE, "../pylib"))
from strata_test import BIN, Tmp, journal, results, strata  # noqa: E402,F401

# Lua for a spec: the parent's pid of a process ("self" or a pid), from
# /proc/PID/stat's fourth field
PARENT_OF = '''
local function parent_of(pid)
  local f = assert(io.open("/proc/" .. pid .. "/stat"))
  local ppid = f:read("a"):match("^%d+ %b() %S (%d+)")
  f:close()
  return ppid
end
'''


class Verdicts(Tmp):
    def test_every_status(self):
        out = self.path("run.xlsx")
        p = strata("run", os.path.join(FIX, "ladder.lua"), "--site",
                   os.path.join(FIX, "site.yaml"), "-o", out,
                   "--json", self.path("run.json"))
        self.assertEqual(p.returncode, 1, p.stderr)
        res = results(journal(self.path("run.jsonl")))
        status = {k: [c["status"] for c in v] for k, v in res.items()}
        self.assertEqual(status["T1"], ["PASS"])
        # log2(size)*qps against 0.5 * 20 = 10: 12*1 PASS ... 12 >= 10
        t2 = {(c["cell"]["size"], c["cell"]["qps"]): c for c in res["T2"]}
        self.assertEqual(len(t2), 6)
        self.assertEqual(t2[(4096, 1)]["status"], "PASS")
        self.assertEqual(t2[(4096, 4)]["metrics"]["bw_gbps"], 48)
        self.assertEqual(t2[(4096, 1)]["metrics"]["lat.p99"], 3.0)
        ck = t2[(4096, 1)]["checks"][0]
        self.assertIn("bw_gbps >= 0.5 x site.rdma.line_rate_gbps (= 10)",
                      ck["text"])
        # the criterion's own line, not that of `test {`
        self.assertTrue(ck["source"].endswith("ladder.lua:19"), ck["source"])
        self.assertEqual((ck["criterion"], ck["op"], ck["limit"]),
                         ("bw_gbps", "min", 10))
        self.assertEqual(ck["expr"], "0.5 * site.rdma.line_rate_gbps")
        # T3 is judged against the same cell of T2 (qps=1 matches first)
        self.assertEqual([c["status"] for c in res["T3"]], ["PASS", "PASS"])
        self.assertEqual(status["T4"], ["ERROR"])
        self.assertIn("ladder.lua:", res["T4"][0]["reason"])
        self.assertIn("the endpoint said no", res["T4"][0]["reason"])
        self.assertEqual(status["T5"], ["ERROR"])
        self.assertIn("timed out after 1 s", res["T5"][0]["reason"])
        self.assertLess(res["T5"][0]["duration_s"], 5)
        self.assertEqual(status["T6"], ["SKIP"])
        self.assertEqual(res["T6"][0]["reason"], "no S3 endpoint in the site file")
        self.assertEqual(status["T7"], ["BLOCKED"])
        self.assertIn("needs T4", res["T7"][0]["reason"])
        self.assertEqual(status["T8"], ["ERROR"])
        # a plain build dies of SIGSEGV; under ASan its handler exits 1
        self.assertRegex(res["T8"][0]["reason"],
                         r"^crashed: (killed by signal 11|exited with code 1)")
        self.assertEqual(status["T9"], ["ERROR"])
        self.assertIn("unknown option 'bogus'", res["T9"][0]["reason"])
        self.assertIn("ladder.lua:", res["T9"][0]["reason"])
        # the plan runs the ladder bottom up and needs first
        order = [r["id"] for r in journal(self.path("run.jsonl"))
                 if r["type"] == "result"]
        self.assertLess(order.index("T1"), order.index("T2"))
        self.assertLess(order.index("T2"), order.index("T4"))
        self.assertEqual(order[-1], "T7")  # s3rdma is the highest rung here
        with open(self.path("run.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["verdict"], "FAIL")
        self.assertIn("lowest failed rung: s3 (T4 ERROR)", p.stderr)

    def test_cells_map_no_libcurl(self):
        # libcurl is loaded on first use (engine/http/curl_load.c): neither
        # a cell's process nor the fork server it came from has it mapped,
        # even when the spec loads the HTTP families (as the runbook's do),
        # yet the inventory (taken in a child of its own) names its version.
        # So are libibverbs (with its libnl-3, libnl-route-3) and liburing
        # (engine/verbs/verbs_load.c, engine/storage/uring_load.c) with the
        # verbs and storage families loaded; so are libxlsxwriter (with its
        # libminizip, libz and libcrypto: engine/report/xlsx_load.c,
        # engine/core/crypto_load.c), which only the runner needs, after
        # the cells, and libyaml (engine/yaml/yaml_load.c) in a run that
        # reads no YAML, with the report and yaml families loaded.  A run
        # that reads a site file loads libyaml before the fork server: its
        # cells map that one too, and nothing else.
        spec = self.path("curl.lua")
        with open(spec, "w") as f:
            f.write(PARENT_OF + '''
local s3, counters, k8s = require "strata.s3", require "strata.counters", require "strata.k8s"
local verbs, storage = require "strata.verbs", require "strata.storage"
local report, yaml = require "strata.report", require "strata.yaml"
local LAZY = { "libcurl.so", "libibverbs.so", "libnl-3.so", "libnl-route-3.so",
               "liburing.so", "libxlsxwriter.so", "libminizip.so", "libz.so",
               "libcrypto.so" }
local function curl_in(pid)   -- how many of LAZY the process maps
  local f = assert(io.open("/proc/" .. pid .. "/maps"))
  local maps = f:read("a")
  f:close()
  local n = 0
  for _, lib in ipairs(LAZY) do
    if maps:find("/" .. lib, 1, true) then n = n + 1 end
  end
  return n
end
test {
  id = "C1", layer = "host", title = "no library loaded on first use in the cells",
  criteria = { cell = { max = 0 }, server = { max = 0 }, runner = { max = 0 } },
  run = function()
    local ppid = parent_of("self")
    local runner = parent_of(ppid)
    local f = assert(io.open("/proc/self/maps"))
    local maps = f:read("a")
    f:close()
    return { cell = curl_in("self"), server = curl_in(ppid),
             runner = curl_in(runner),
             linked = maps:find("/libm.so", 1, true) and 1 or 0,
             yaml = maps:find("/libyaml-0.so", 1, true) and 1 or 0 }
  end,
}
''')
        p = strata("run", spec, "-o", self.path("c.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        recs = journal(self.path("c.jsonl"))
        res = results(recs)
        # linked: a library the binary does link is seen in the same maps
        self.assertEqual(res["C1"][0]["metrics"],
                         {"cell": 0, "server": 0, "runner": 0, "linked": 1,
                          "yaml": 0})
        inv = [r for r in recs if r["type"] == "inventory"][0]["data"]
        self.assertRegex(inv["libraries"]["libcurl"], r"^\d+\.\d+")
        self.assertRegex(inv["libraries"]["libyaml"], r"^0\.\d+")
        p = strata("run", spec, "--site", os.path.join(FIX, "site.yaml"),
                   "-o", self.path("y.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(results(journal(self.path("y.jsonl")))["C1"][0]["metrics"],
                         {"cell": 0, "server": 0, "runner": 0, "linked": 1,
                          "yaml": 1})

    def test_cells_are_named(self):
        # ps and top tell the fork server and its cells from the runner
        # (prctl PR_SET_NAME: /proc/PID/comm)
        spec = self.path("names.lua")
        with open(spec, "w") as f:
            f.write(PARENT_OF + '''
local function comm(pid)
  local f = assert(io.open("/proc/" .. pid .. "/comm"))
  local c = f:read("l")
  f:close()
  return c
end
test {
  id = "N1", layer = "host", title = "names", matrix = { i = { 1, 2, 3 } },
  run = function()
    local ppid = parent_of("self")
    return { cell = comm("self") == "strata-cell" and 1 or 0,
             server = comm(ppid) == "strata-server" and 1 or 0 }
  end,
}
''')
        p = strata("run", spec, "-o", self.path("n.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        res = results(journal(self.path("n.jsonl")))
        self.assertEqual([r["metrics"] for r in res["N1"]],
                         [{"cell": 1, "server": 1}] * 3)

    def test_cells_do_not_hold_the_journal(self):
        # the journal is the runner's: a cell (and the fork server) has
        # /dev/null in its descriptor's place, with or without the server
        spec = self.path("fds.lua")
        with open(spec, "w") as f:
            f.write(PARENT_OF + '''
local core = require "strata.core"
local function journals(pid)
  local n = 0
  for _, fd in ipairs(core.listdir("/proc/" .. pid .. "/fd")) do
    local to = core.realpath("/proc/" .. pid .. "/fd/" .. fd)
    if to and to:match("%.jsonl$") then n = n + 1 end
  end
  return n
end
test {
  id = "J1", layer = "host", title = "fds", matrix = { i = { 1, 2 } },
  run = function()
    local ppid = parent_of("self")
    local grand = parent_of(ppid)
    return { cell = journals(core.getpid()), parent = journals(ppid),
             grandparent = journals(grand) }
  end,
}
''')
        # the fork server: the runner (the grandparent) alone holds it
        p = strata("run", spec, "-o", self.path("f.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        res = results(journal(self.path("f.jsonl")))
        self.assertEqual([r["metrics"] for r in res["J1"]],
                         [{"cell": 0, "parent": 0, "grandparent": 1}] * 2)
        # cells forked from the runner (the parent)
        p = strata("run", spec, "-o", self.path("g.xlsx"),
                   env={"STRATA_FORK_SERVER": "0"})
        self.assertEqual(p.returncode, 0, p.stderr)
        res = results(journal(self.path("g.jsonl")))
        self.assertEqual([r["metrics"]["cell"] for r in res["J1"]], [0, 0])
        self.assertEqual([r["metrics"]["parent"] for r in res["J1"]], [1, 1])

    def test_only_pulls_needs(self):
        p = strata("run", os.path.join(FIX, "ladder.lua"), "--site",
                   os.path.join(FIX, "site.yaml"), "-o", self.path("o.xlsx"),
                   "--only", "T3")
        self.assertEqual(p.returncode, 0, p.stderr)
        ids = sorted(results(journal(self.path("o.jsonl"))))
        self.assertEqual(ids, ["T1", "T2", "T3"])

    def test_list_and_check(self):
        p = strata("list", os.path.join(FIX, "ladder.lua"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("T2     verbs", p.stdout)
        self.assertIn("6 (size x qps)", p.stdout)
        p = strata("check", os.path.join(FIX, "ladder.lua"), "--site",
                   os.path.join(FIX, "site.yaml"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ok: 9 tests", p.stdout)
        # the shipped runbook loads (units, criteria lines, charts' specs)
        p = strata("check", os.path.join(HERE, "../../specs"))
        self.assertEqual(p.returncode, 0, p.stderr)
        p = strata("check", os.path.join(FIX, "ladder.lua"), "--site",
                   os.path.join(FIX, "thresholds.yaml"))
        self.assertIn("needs site.rdma.line_rate_gbps", p.stderr)



class Lookups(Tmp):
    """t.result / t.results in a cell: what the runner holds, asked for
    while the cell runs; the same with cells forked from the runner."""

    def run_it(self, env):
        p = strata("run", os.path.join(FIX, "lookup.lua"), "-o",
                   self.path("l.xlsx"), "--journal", self.path("l.jsonl"),
                   env=env)
        self.assertEqual(p.returncode, 1, p.stderr)   # L0 fails, L2 blocked
        return results(journal(self.path("l.jsonl")))

    def check(self, res):
        l3 = sorted(res["L3"], key=lambda r: r["cell_index"])
        self.assertEqual([r["status"] for r in l3], ["PASS", "PASS"])
        self.assertEqual(l3[0]["metrics"],
                         {"got": 20, "half": 1, "n": 3, "mine": 0, "first": 10})
        self.assertEqual(l3[1]["metrics"]["got"], 30)
        self.assertEqual(l3[1]["metrics"]["half"], 1.5)
        self.assertEqual(l3[1]["metrics"]["mine"], 1)   # its own first cell
        # cells come back as the plan's own tables: integers stay integers
        self.assertEqual(l3[0]["notes"][0], "1/a/PASS 2/a/PASS 3/a/PASS")
        self.assertEqual(l3[0]["notes"][1], "nil: L9 has not run")
        self.assertEqual(l3[0]["notes"][2],
                         "L2: 1 result, cell keys 0, status BLOCKED")
        return l3

    def test_fork_server_and_runner_agree(self):
        a = self.check(self.run_it({}))
        b = self.check(self.run_it({"STRATA_FORK_SERVER": "0"}))
        self.assertEqual([r["metrics"] for r in a], [r["metrics"] for r in b])

class Thresholds(Tmp):
    SPEC = """
test {
  id = "Q1", layer = "host", title = "Edit thresholds, no rebuild",
  run = function() return { rate = 50 } end,
}
"""

    def run_q(self, *extra):
        return strata("run", self.path("q.lua"), "-o", self.path("q.xlsx"),
                      *extra)

    def test_edit_flips_verdict(self):
        with open(self.path("q.lua"), "w") as f:
            f.write(self.SPEC)
        with open(self.path("thresholds.yaml"), "w") as f:
            f.write("Q1:\n  rate: { min: 10 }\n")
        p = self.run_q()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = results(journal(self.path("q.jsonl")))["Q1"][0]
        self.assertEqual(r["checks"][0]["source"],
                         self.path("thresholds.yaml") + ":2")
        with open(self.path("thresholds.yaml"), "w") as f:
            f.write("# stricter now\nQ1:\n  rate: { min: 100 }\n")
        p = self.run_q()
        self.assertEqual(p.returncode, 1, p.stderr)
        r = results(journal(self.path("q.jsonl")))["Q1"][0]
        self.assertEqual(r["status"], "FAIL")
        self.assertEqual(r["checks"][0]["source"],
                         self.path("thresholds.yaml") + ":3")
        p = self.run_q("--set", "Q1.rate.min=49.5")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = results(journal(self.path("q.jsonl")))["Q1"][0]
        self.assertEqual(r["checks"][0]["source"], "--set Q1.rate.min=49.5")
        p = self.run_q("--set", "Q1.rate.in=1,2,3")
        self.assertEqual(p.returncode, 1, p.stderr)
        # editing the spec itself also takes effect at once
        with open(self.path("q.lua"), "w") as f:
            f.write(self.SPEC.replace("rate = 50", "rate = 500"))
        p = self.run_q()
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_site_relative_unset_is_not_judged(self):
        # issue 27 item 5: an expectation the user has not given is not a
        # failure; the check is "not judged" and the reason says why
        with open(self.path("q.lua"), "w") as f:
            f.write(self.SPEC)
        p = self.run_q("--set", "Q1.rate.min=0.9 * site.nic.rate",
                       "--set", "Q1.rate.max=100")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = results(journal(self.path("q.jsonl")))["Q1"][0]
        self.assertEqual(r["status"], "PASS")
        self.assertIn("rate not judged: site.nic.rate is not set",
                      r["reason"])
        by_op = {c["op"]: c for c in r["checks"]}
        self.assertTrue(by_op["min"]["not_judged"])
        self.assertTrue(by_op["max"]["ok"])
        self.assertNotIn("not_judged", by_op["max"])
        # the workbook's sheets shows the check as not judged
        import openpyxl
        wb = openpyxl.load_workbook(self.path("q.xlsx"))
        texts = [str(c.value) for ws in wb for row in ws.iter_rows()
                 for c in row if c.value is not None]
        self.assertTrue(any("not judged: site.nic.rate" in t for t in texts))
        # the judged criteria still fail the cell
        p = self.run_q("--set", "Q1.rate.min=0.9 * site.nic.rate",
                       "--set", "Q1.rate.max=10")
        self.assertEqual(p.returncode, 1, p.stderr)
        r = results(journal(self.path("q.jsonl")))["Q1"][0]
        self.assertEqual(r["status"], "FAIL")
        self.assertIn("rate = 50, wanted <= 10", r["reason"])

    def test_group_member_not_judged(self):
        # a group is decided by its judged members; with none judged it is
        # not judged itself (never a FAIL for an expectation not given)
        with open(self.path("q.lua"), "w") as f:
            f.write(self.SPEC)
        with open(self.path("thresholds.yaml"), "w") as f:
            f.write("Q1:\n  g:\n    any_of:\n"
                    "      - rate: { min: site.nic.rate }\n"
                    "      - rate: { max: 10 }\n")
        p = self.run_q()
        self.assertEqual(p.returncode, 1, p.stderr)   # the judged one failed
        r = results(journal(self.path("q.jsonl")))["Q1"][0]
        self.assertEqual(r["status"], "FAIL")
        with open(self.path("thresholds.yaml"), "w") as f:
            f.write("Q1:\n  g:\n    all_of:\n"
                    "      - rate: { min: site.nic.rate }\n"
                    "      - rate: { max: 100 }\n")
        p = self.run_q()
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path("thresholds.yaml"), "w") as f:
            f.write("Q1:\n  g:\n    any_of:\n"
                    "      - rate: { min: site.nic.rate }\n"
                    "      - rate: { max: site.nic.max }\n")
        p = self.run_q()
        self.assertEqual(p.returncode, 0, p.stderr)
        r = results(journal(self.path("q.jsonl")))["Q1"][0]
        self.assertEqual(r["status"], "PASS")
        self.assertIn("not judged", r["reason"])

    def test_other_unresolved_is_error(self):
        # a limit naming a metric the test did not report is still ERROR
        with open(self.path("q.lua"), "w") as f:
            f.write(self.SPEC + "-- other: named, never reported\n")
        p = self.run_q("--set", "Q1.rate.min=0.5 * other")
        r = results(journal(self.path("q.jsonl")))["Q1"][0]
        self.assertEqual(r["status"], "ERROR", p.stderr)
        self.assertIn("this test did not report other", r["reason"])


class BadInput(Tmp):
    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def expect2(self, args, needle):
        p = strata(*args)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(needle, p.stderr)
        return p

    def test_spec_syntax_error(self):
        f = self.write("bad.lua", "test {\n  id = 'B1',\n  layer = = 'host',\n}\n")
        self.expect2(["check", f], f + ":3:")

    def test_unknown_field(self):
        f = self.write("bad.lua", "test {\n id='B1', layer='host', title='x',\n"
                       " timout = 5, run = function() end }\n")
        self.expect2(["run", f, "-o", self.path("o.xlsx")],
                     f + ":1: test B1: unknown field 'timout'")

    def test_unknown_layer_and_need(self):
        f = self.write("bad.lua", "test { id='B1', layer='disk', title='x', "
                       "run=function() end }\n")
        self.expect2(["list", f], "unknown layer 'disk'")
        f = self.write("bad.lua", "\ntest { id='B1', layer='host', title='x', "
                       "needs={'Z9'}, run=function() end }\n")
        self.expect2(["list", f], f + ":2: test B1 needs 'Z9'")

    def test_duplicate_id_and_strict_globals(self):
        f = self.write("bad.lua", "test { id='B1', layer='host', title='x', run=function() end }\n"
                       "test { id='B1', layer='host', title='y', run=function() end }\n")
        self.expect2(["check", f], f + ":2: test B1 already defined at " + f + ":1")
        f = self.write("bad.lua", "x = 1\n")
        self.expect2(["check", f], "assignment to global 'x'")
        f = self.write("bad.lua", "local y = undefined_thing + 1\n")
        self.expect2(["check", f], "undefined global 'undefined_thing'")

    def test_malformed_yaml(self):
        spec = self.write("ok.lua", "test { id='B1', layer='host', title='x', run=function() return {} end }\n")
        y = self.write("t.yaml", "B1:\n  rate: { min: 10\n  other: [\n")
        self.expect2(["check", spec, "--thresholds", y], y + ":")
        y = self.write("t.yaml", "B1:\n  rate: { most: 10 }\n")
        self.expect2(["check", spec, "--thresholds", y],
                     y + ":2: B1.rate: unknown operator 'most'")
        s = self.write("site.yaml", "a: [1, 2\n")
        self.expect2(["run", spec, "--site", s, "-o", self.path("o.xlsx")],
                     s + ":")
        self.expect2(["check", spec, "--site", self.path("absent.yaml")],
                     "site file not found")

    def test_cli_usage(self):
        self.expect2(["frobnicate"], "unknown command 'frobnicate'")
        self.expect2(["run", "--bogus"], "unknown option '--bogus'")
        self.expect2(["run", "-o"], "option -o needs a value")
        spec = self.write("ok.lua", "test { id='B1', layer='host', title='x', run=function() return {} end }\n")
        self.expect2(["check", spec, "--set", "B1.rate=3"], "expected ID.metric.op=VALUE")
        self.expect2(["check", spec, "--set", "B1.rate.most=3"], "unknown operator 'most'")
        self.expect2(["run", spec, "-o", self.path("x.pdf")], "-o must name an .xlsx")
        self.expect2(["list", self.path("nowhere")], "no such file or folder")
        p = strata("--help")
        self.assertEqual(p.returncode, 0)
        for cmd in ("run", "list", "check", "report"):
            self.assertIn(cmd, p.stdout)
            q = strata(cmd, "--help")
            self.assertEqual(q.returncode, 0, q.stderr)
            self.assertIn("usage: strata " + cmd, q.stdout)

    def test_run_returning_non_table(self):
        f = self.write("bad.lua", "test { id='B1', layer='host', title='x', run=function() return 5 end }\n")
        p = strata("run", f, "-o", self.path("o.xlsx"))
        self.assertEqual(p.returncode, 1)
        r = results(journal(self.path("o.jsonl")))["B1"][0]
        self.assertIn("must return a table of metrics", r["reason"])


class KillSafe(Tmp):
    def start(self, spec="slow.lua"):
        return subprocess.Popen([BIN, "run", os.path.join(FIX, spec),
                                 "-o", self.path("k.xlsx")],
                                stderr=subprocess.PIPE, text=True)

    def wait_results(self, n):
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                recs = journal(self.path("k.jsonl"))
                if sum(r["type"] == "result" for r in recs) >= n:
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        self.fail("no results appeared")

    def report(self):
        q = strata("report", self.path("k.jsonl"), "--json",
                   self.path("k.json"))
        self.assertEqual(q.returncode, 0, q.stderr)
        with open(self.path("k.json")) as f:
            return json.load(f)

    def test_kill_9_then_report(self):
        p = self.start()
        self.wait_results(2)
        p.kill()
        p.wait()
        done = results(journal(self.path("k.jsonl")))
        self.assertGreaterEqual(len(done), 2)
        self.assertLess(len(done), 6)
        self.assertFalse(os.path.exists(self.path("k.xlsx")))
        doc = self.report()
        self.assertTrue(os.path.exists(self.path("k.xlsx")))
        # every planned test is listed; those that never ran as NOT RUN
        st = {t["id"]: t["status"] for t in doc["tests"]}
        self.assertEqual(sorted(st, key=lambda k: int(k[1:])),
                         ["S%d" % i for i in range(1, 7)])
        for tid in st:
            self.assertEqual(st[tid], "PASS" if tid in done else "NOT RUN",
                             (tid, st))
        self.assertTrue(doc["run"]["interrupted"])
        self.assertEqual(doc["verdict"], "INCOMPLETE")
        self.assertIsNone(doc.get("lowest_failed"))

    def test_kill_9_mid_matrix_is_incomplete(self):
        import openpyxl
        p = self.start("matrix_slow.lua")
        self.wait_results(2)
        p.kill()
        p.wait()
        n = len(results(journal(self.path("k.jsonl")))["M1"])
        self.assertLess(n, 6)
        doc = self.report()
        t = {t["id"]: t for t in doc["tests"]}
        self.assertEqual(t["M1"]["status"], "INCOMPLETE")
        self.assertIn("%d of 6 cells recorded" % n, t["M1"]["reason"])
        self.assertEqual(t["M2"]["status"], "NOT RUN")
        self.assertEqual(doc["verdict"], "INCOMPLETE")
        s = openpyxl.load_workbook(self.path("k.xlsx"))["Summary"]
        self.assertEqual(s["A4"].value, "INCOMPLETE")
        self.assertIn("Not measured: host (M1 INCOMPLETE", s["D4"].value)
        self.assertIn("verbs (M2 NOT RUN", s["D4"].value)
        rows = {r[0]: r for r in s.iter_rows(values_only=True)}
        self.assertEqual(rows["M1"][2], "INCOMPLETE")
        self.assertEqual(rows["M2"][2], "NOT RUN")
        # JUnit: the cells never recorded and the test never run are skipped
        q = strata("report", self.path("k.jsonl"), "--junit", self.path("k.xml"))
        self.assertEqual(q.returncode, 0, q.stderr)
        import xml.etree.ElementTree as ET
        cases = {c.get("name"): c for c in ET.parse(self.path("k.xml")).iter("testcase")}
        self.assertTrue(cases["M1[not recorded]"].find("skipped").get(
            "message").startswith("INCOMPLETE: %d of 6 cells recorded" % n))
        self.assertTrue(cases["M2"].find("skipped").get("message").startswith(
            "NOT RUN: "))

    def test_sigint_is_stopped(self):
        p = self.start("matrix_slow.lua")
        self.wait_results(2)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 1, err)
        self.assertNotIn("lowest failed rung", err)
        recs = journal(self.path("k.jsonl"))
        last = [r for r in recs if r["type"] == "result"][-1]
        self.assertEqual(last["status"], "STOPPED", last)
        self.assertEqual(last["outcome"]["kind"], "stopped")
        doc = self.report()
        t = {t["id"]: t for t in doc["tests"]}
        self.assertEqual(t["M1"]["status"], "STOPPED")
        self.assertEqual(t["M2"]["status"], "NOT RUN")
        self.assertEqual(doc["verdict"], "INCOMPLETE")
        self.assertIsNone(doc.get("lowest_failed"))

    def test_old_journal_interrupted_is_stopped(self):
        # journals written before the outcome field: "ERROR interrupted"
        with open(self.path("k.jsonl"), "w") as f:
            for rec in (
                {"type": "run", "started": "2026-11-29T19:00:00Z"},
                {"type": "result", "id": "A1", "layer": "host",
                 "title": "old", "cell": {}, "cells": 1, "params": [],
                 "status": "ERROR", "reason": "interrupted"},
                {"type": "end", "ended": "2026-11-29T19:00:01Z",
                 "interrupted": True}):
                f.write(json.dumps(rec) + "\n")
        doc = self.report()
        self.assertEqual(doc["tests"][0]["status"], "STOPPED")
        self.assertEqual(doc["verdict"], "INCOMPLETE")

    def test_sigterm_writes_workbook(self):
        p = self.start()
        self.wait_results(2)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 1, err)
        self.assertIn("interrupted", err)
        self.assertTrue(os.path.exists(self.path("k.xlsx")))
        recs = journal(self.path("k.jsonl"))
        self.assertEqual(recs[-1]["type"], "end")
        self.assertTrue(recs[-1]["interrupted"])


class Charts(Tmp):
    """Every chart of the shipped GPU specs draws: the workbook rebuilt from
    the journal of a real run (bench/gpu/results, an H200 x2 VM,
    2026-11-29) has each t.table chart, its series pointing at the table's
    own columns, bandwidth axes from zero."""

    JOURNAL = os.path.join(HERE, "../../bench/gpu/results/"
                           "run-h200x2-2026-11-29.jsonl")

    def test_gpu_charts_draw(self):
        import openpyxl
        out = self.path("g.xlsx")
        q = strata("report", self.JOURNAL, "-o", out)
        self.assertEqual(q.returncode, 0, q.stderr)
        wb = openpyxl.load_workbook(out)
        for ws in wb.worksheets:
            for row in ws.iter_rows(values_only=True):
                for v in row:
                    self.assertFalse(isinstance(v, str) and
                                     v.startswith("Chart not drawn"), ws.title)
        seen = 0
        for name in ("G4", "G5"):
            ws = wb[[n for n in wb.sheetnames if n.startswith(name + " ")][0]]
            self.assertEqual(len(ws._charts), 3, name)  # pivot + 2 tables
            for ch in ws._charts:
                self.assertEqual(ch.y_axis.scaling.min, 0, name)
                for s in ch.series:
                    ref = (s.val or s.yVal).numRef.f
                    col, r0 = ref.split("!")[1].split(":")[0].split("$")[1:3]
                    head = ws["%s%d" % (col, int(r0) - 1)].value
                    if type(ch).__name__ == "ScatterChart":
                        xref = s.xVal.numRef.f.split("!")[1].split(":")[0]
                        xc, xr = xref.split("$")[1:3]
                        self.assertEqual(ws["%s%d" % (xc, int(xr) - 1)].value,
                                         "bytes", name)
                        self.assertEqual(head, "GB/s (median)", name)
                        seen += 1
                    else:
                        self.assertEqual(head, "gbps (GB/s)", name)
                        self.assertEqual(type(ch).__name__, "BarChart")
        self.assertEqual(seen, 4)

    def test_bad_chart_is_the_specs_error(self):
        f = self.path("c.lua")
        with open(f, "w") as fh:
            fh.write('test { id = "C1", layer = "host", title = "bad chart",\n'
                     '  run = function(t)\n'
                     '    t.table("t", { "a", "b" }, { { 1, 2 } }, { x = 1, y = { 3 } })\n'
                     '    return {}\n  end }\n')
        p = strata("run", f, "-o", self.path("c.xlsx"))
        self.assertEqual(p.returncode, 1, p.stderr)
        r = results(journal(self.path("c.jsonl")))["C1"][0]
        self.assertEqual(r["status"], "ERROR")
        self.assertIn(f + ":3:", r["reason"])
        self.assertIn("y = 3 is not a column number 1..2", r["reason"])


class Compare(Tmp):
    """strata diff on two real runs of specs/host, and run --baseline."""

    SPECS = os.path.join(HERE, "../../specs/host")

    def run_host(self, name, *extra):
        p = strata("run", self.SPECS, "-o", self.path(name + ".xlsx"), *extra)
        self.assertIn(p.returncode, (0, 1), p.stderr)  # H1 judges the load
        return results(journal(self.path(name + ".jsonl")))

    def test_diff_two_runs(self):
        import openpyxl
        a, b = self.run_host("a"), self.run_host("b")
        p = strata("diff", self.path("a.jsonl"), self.path("b.jsonl"), "-o",
                   self.path("d.xlsx"), "--tolerance", "1000")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)  # all within
        for tid in ("H1", "H2", "H3"):
            self.assertIn(tid, p.stdout)
        ws = openpyxl.load_workbook(self.path("d.xlsx"))["Diff"]
        rows = {r[0]: r for r in ws.iter_rows(min_row=6, values_only=True)}
        va = a["H3"][0]["metrics"]["loopback_gbps"]
        vb = b["H3"][0]["metrics"]["loopback_gbps"]
        self.assertEqual(rows["H3"][3:6], ("loopback_gbps", va, vb))
        self.assertAlmostEqual(rows["H3"][6], (vb - va) / va * 100)

    def test_diff_flags_changes(self):
        import openpyxl
        self.run_host("a")
        # B: run A's journal with three changes a real regression shows:
        # H3 at half the bandwidth, H2 failing, another MTU on the NIC
        recs = journal(self.path("a.jsonl"))
        for r in recs:
            if r["type"] == "result" and r["id"] == "H3":
                r["metrics"]["loopback_gbps"] /= 2
            if r["type"] == "result" and r["id"] == "H2":
                r["outcome"] = {"kind": "ok", "fail": "constructed"}
            if r["type"] == "result" and r["id"] == "H1":
                r["metrics"]["cpu_model"] += " (replaced)"
            if r["type"] == "inventory":
                nic = r["data"]["nics"][0]
                nic["mtu"] = nic.get("mtu", 1500) + 1000
                name = nic["name"]
        with open(self.path("b.jsonl"), "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
        p = strata("diff", self.path("a.jsonl"), self.path("b.jsonl"), "-o",
                   self.path("d.xlsx"))
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("H2       host     PASS -> FAIL  VERDICT WORSE", p.stdout)
        self.assertRegex(p.stdout, r"loopback_gbps .* -50\.0%  worse")
        self.assertIn("nics[%s].mtu" % name, p.stdout)
        wb = openpyxl.load_workbook(self.path("d.xlsx"))
        ws = wb["Diff"]
        rows = {r[0].value: r for r in ws.iter_rows(min_row=6)}
        self.assertEqual(rows["H3"][9].value, "worse")
        self.assertEqual(rows["H3"][6].fill.fgColor.rgb[-6:], "FFC7CE")
        self.assertIn("test PASS -> FAIL", rows["H2"][9].value)
        inv = {r[0]: r for r in wb["Inventory diff"].iter_rows(min_row=4,
                                                              values_only=True)}
        self.assertIn("nics[%s].mtu" % name, inv)
        self.assertIn("H1 cpu_model", inv)   # a fact a test measured

    def test_baseline(self):
        import openpyxl
        a = self.run_host("a")
        va = a["H3"][0]["metrics"]["loopback_gbps"]
        c = self.run_host("c", "--baseline", self.path("a.jsonl"), "--set",
                          "H3.loopback_gbps.min=0.01 * baseline.loopback_gbps")
        ck = [k for k in c["H3"][0]["checks"] if k["metric"] == "loopback_gbps"][0]
        self.assertAlmostEqual(ck["limit"], 0.01 * va)
        self.assertTrue(ck["ok"], ck)
        wb = openpyxl.load_workbook(self.path("c.xlsx"))
        s = wb["Summary"]
        hr = [r[0].row for r in s.iter_rows() if r[0].value == "ID"][0]
        hdr = [x.value for x in s[hr]]
        self.assertIn("vs baseline %", hdr)
        rows = {r[0]: r for r in s.iter_rows(min_row=hr + 1, values_only=True)}
        vc = c["H3"][0]["metrics"]["loopback_gbps"]
        self.assertAlmostEqual(rows["H3"][hdr.index("vs baseline %")],
                               (vc - va) / va * 100)
        h3 = wb[[n for n in wb.sheetnames if n.startswith("H3")][0]]
        got = {}
        for row in h3.iter_rows(values_only=True):
            if row[0] == "loopback_gbps":
                got = row
        self.assertEqual(got[4], va)   # Baseline column
        # the report of c's journal needs nothing but the journal
        q = strata("report", self.path("c.jsonl"), "-o", self.path("c2.xlsx"))
        self.assertEqual(q.returncode, 0, q.stderr)
        s2 = openpyxl.load_workbook(self.path("c2.xlsx"))["Summary"]
        self.assertEqual([x.value for x in s2[hr]], hdr)

    def test_baseline_missing(self):
        c = self.run_host("c", "--set", "H3.loopback_gbps.min=baseline.loopback_gbps")
        self.assertEqual(c["H3"][0]["status"], "ERROR")
        self.assertIn("needs a baseline: strata run --baseline",
                      c["H3"][0]["reason"])
        self.run_host("a")
        c = self.run_host("c", "--baseline", self.path("a.jsonl"), "--set",
                          "H3.nothing.min=baseline.nothing")
        self.assertIn("the baseline did not report nothing",
                      c["H3"][0]["reason"])
        p = strata("run", self.SPECS, "-o", self.path("x.xlsx"), "--baseline",
                   self.path("absent.jsonl"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--baseline " + self.path("absent.jsonl"), p.stderr)


class Progress(Tmp):
    def test_plain_line_without_terminal(self):
        f = self.path("p.lua")
        with open(f, "w") as fh:
            fh.write('local core = require "strata.core"\n'
                     'test { id = "P1", layer = "host", title = "slow",\n'
                     '  matrix = { n = { 1, 2 } },\n'
                     '  run = function() core.sleep(1.2) return {} end }\n')
        # stderr is a pipe here, as in CI logs and nohup runs
        p = strata("run", f, "-o", self.path("p.xlsx"),
                   env={"STRATA_PROGRESS_EVERY": "0.4"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("\r", p.stderr)
        self.assertRegex(p.stderr, r"strata: test 1/1 P1, cell 1/2 n=1, "
                         r"\d+ s in this cell, \d+ s in all\n")
        self.assertIn("cell 2/2 n=2", p.stderr)


class Incomplete(Tmp):
    """Rungs that were not measured make the run INCOMPLETE, not PASS; a
    cell that skips inside a passing test shows on the Summary."""

    def run_skips(self, *extra):
        out = self.path("i.xlsx")
        p = strata("run", os.path.join(FIX, "skips.lua"), "-o", out,
                   "--json", self.path("i.json"), *extra)
        with open(self.path("i.json")) as f:
            doc = json.load(f)
        import openpyxl
        return p, doc, openpyxl.load_workbook(out)["Summary"]

    def test_skipped_rung_is_incomplete(self):
        p, doc, s = self.run_skips()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["verdict"], "INCOMPLETE")
        self.assertIn("Not measured: gpu (K2 SKIP: no GPU in this fixture)",
                      p.stderr)
        self.assertEqual(s["A4"].value, "INCOMPLETE")
        self.assertIn("K2 SKIP: no GPU in this fixture", s["D4"].value)
        rows = {r[0]: r for r in s.iter_rows(values_only=True)}
        self.assertEqual(rows["K3"][2], "PASS")
        self.assertEqual(rows["K3"][7], "1 of 2 cells skipped: [peer=p2p] "
                         "one GPU: no peer to copy to")

    def test_bad_expect(self):
        bad = self.path("site.yaml")
        with open(bad, "w") as f:
            f.write("site:\n  expect: host\n")
        p = strata("run", os.path.join(FIX, "skips.lua"), "--site", bad,
                   "-o", self.path("i.xlsx"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(bad + ": site.expect must be a list of layers", p.stderr)

    def test_site_expects_only_host(self):
        p, doc, s = self.run_skips("--site",
                                   os.path.join(FIX, "site-expect-host.yaml"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["verdict"], "PASS")
        self.assertEqual(s["D4"].value,
                         "Every rung the site expects was measured and "
                         "passed. 1 skipped test on rungs the site does not "
                         "expect.")


class Replay(Tmp):
    """`strata report` of a journal gives the live run's workbook, cell for
    cell (values, formats' fills, merged ranges, charts)."""

    def cells(self, path):
        import openpyxl
        wb = openpyxl.load_workbook(path)
        out = {}
        for ws in wb.worksheets:
            sheet = {}
            for row in ws.iter_rows():
                for c in row:
                    if c.value is not None:
                        sheet[c.coordinate] = (c.value, c.number_format,
                                               c.fill.fgColor.rgb)
            out[ws.title] = (sheet, sorted(map(str, ws.merged_cells.ranges)),
                             len(ws._charts), ws.freeze_panes)
        return out

    def test_report_reproduces_run(self):
        live = self.path("live.xlsx")
        p = strata("run", os.path.join(FIX, "ladder.lua"), "--site",
                   os.path.join(FIX, "site.yaml"), "-o", live)
        self.assertEqual(p.returncode, 1, p.stderr)
        q = strata("report", self.path("live.jsonl"), "-o",
                   self.path("again.xlsx"))
        self.assertEqual(q.returncode, 0, q.stderr)
        a, b = self.cells(live), self.cells(self.path("again.xlsx"))
        self.assertEqual(list(a), list(b))
        for name in a:
            self.assertEqual(a[name], b[name], name)
        self.assertGreater(len(a["Summary"][0]), 50)

    def test_outputs_match_report_bytes(self):
        """The run makes its outputs from the records it kept as it wrote
        them (journal.open's keep), not from its journal read back: the
        JSON and JUnit are byte for byte those of `strata report` of the
        journal, and so is every part of the workbook (core.xml's
        timestamps aside)."""
        import re
        import zipfile
        run = {k: self.path("live." + k) for k in ("xlsx", "json", "xml")}
        rep = {k: self.path("again." + k) for k in ("xlsx", "json", "xml")}
        p = strata("run", os.path.join(FIX, "ladder.lua"), "--site",
                   os.path.join(FIX, "site.yaml"), "-o", run["xlsx"],
                   "--json", run["json"], "--junit", run["xml"])
        self.assertEqual(p.returncode, 1, p.stderr)
        q = strata("report", self.path("live.jsonl"), "-o", rep["xlsx"],
                   "--json", rep["json"], "--junit", rep["xml"])
        self.assertEqual(q.returncode, 0, q.stderr)
        for k in ("json", "xml"):
            with open(run[k], "rb") as a, open(rep[k], "rb") as b:
                self.assertEqual(a.read(), b.read(), k)
        za, zb = zipfile.ZipFile(run["xlsx"]), zipfile.ZipFile(rep["xlsx"])
        self.assertEqual(sorted(za.namelist()), sorted(zb.namelist()))
        stamp = re.compile(rb"\d{4}-\d\d-\d\dT[\d:]+Z")
        for n in za.namelist():
            x, y = za.read(n), zb.read(n)
            if n == "docProps/core.xml":
                x, y = stamp.sub(b"T", x), stamp.sub(b"T", y)
            self.assertEqual(x, y, n)
        self.assertGreater(len(za.namelist()), 10)


class Secrets(Tmp):
    def test_secret_never_written(self):
        secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        p = strata("run", os.path.join(FIX, "secret.lua"), "-o",
                   self.path("s.xlsx"), "--json", self.path("s.json"),
                   "--junit", self.path("s.xml"),
                   env={"AWS_SECRET_ACCESS_KEY": secret})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn(secret, p.stderr + p.stdout)
        for name in ("s.jsonl", "s.json", "s.xml"):
            with open(self.path(name), "rb") as f:
                data = f.read()
            self.assertNotIn(secret.encode(), data, name)
            self.assertIn(b"***", data, name)
        import zipfile
        with zipfile.ZipFile(self.path("s.xlsx")) as z:
            for n in z.namelist():
                self.assertNotIn(secret.encode(), z.read(n), n)


class Counters(Tmp):
    """A spec that samples a Prometheus endpoint which answers garbage, or
    never answers: that cell is an ERROR naming the endpoint and the
    step, within its timeout, and the other tests' results stand."""

    def test_bad_endpoints(self):
        fx = subprocess.Popen(
            ["/usr/bin/python3",
             os.path.join(HERE, "../../fixtures/host/http_fixture.py"),
             "--lifetime", "60"], stdout=subprocess.PIPE, text=True)
        try:
            port = int(fx.stdout.readline().split()[1])
            base = "http://127.0.0.1:%d" % port
            spec = self.path("c.lua")
            with open(spec, "w") as f:
                f.write("""
local core = require "strata.core"
local function t(id, path)
  test {
    id = id, layer = "host", title = "samples " .. path, timeout = 20,
    sample = { interval = 0.2, sources = { "cpu" },
               prometheus = { { name = "fx", url = "%s" .. path, timeout = 1 } } },
    run = function() core.sleep(1.5) return { ok = 1 } end,
  }
end
t("C1", "/metrics")
t("C2", "/garbage")
t("C3", "/hang")
""" % base)
            p = strata("run", spec, "-o", self.path("c.xlsx"))
            self.assertEqual(p.returncode, 1, p.stderr)
            res = results(journal(self.path("c.jsonl")))
            self.assertEqual(res["C1"][0]["status"], "PASS", res["C1"][0])
            self.assertTrue(any(k.startswith("delta.prom.fx.")
                                for k in res["C1"][0]["metrics"]))
            for cid in ("C2", "C3"):
                r = res[cid][0]
                self.assertEqual(r["status"], "ERROR", r)
                self.assertIn("counters could not be read", r["reason"])
                self.assertIn(base, r["reason"])
                self.assertLess(r["duration_s"], 15)
        finally:
            fx.kill()
            fx.wait()


class Workbook(Tmp):
    def test_read_back(self):
        import openpyxl
        out = self.path("w.xlsx")
        p = strata("run", os.path.join(FIX, "ladder.lua"), "--site",
                   os.path.join(FIX, "site.yaml"), "-o", out,
                   "--junit", self.path("w.xml"))
        self.assertEqual(p.returncode, 1, p.stderr)
        wb = openpyxl.load_workbook(out)
        self.assertEqual(wb.sheetnames[0], "Summary")
        for name in ("Inventory", "Thresholds", "Run"):
            self.assertIn(name, wb.sheetnames)
        ws = wb["Summary"]
        cells = {}
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str):
                    cells.setdefault(c.value, c)
        self.assertIn("T2", cells)
        row = cells["T2"].row
        values = [c.value for c in ws[row]]
        self.assertIn("PASS", values)
        status = [c for c in ws[cells["T4"].row] if c.value == "ERROR"][0]
        self.assertNotEqual(status.fill.fgColor.rgb, "00000000")
        text = " ".join(str(c.value) for row in ws.iter_rows() for c in row
                        if c.value is not None)
        self.assertIn("s3", text)   # lowest failed rung is named
        # no absolute spec paths: criteria and reasons name ladder.lua:N
        self.assertNotIn(FIX + "/", text)
        self.assertIn("ladder.lua:36: the endpoint said no", text)
        # the matrix test has its own sheet with a chart
        t2 = [n for n in wb.sheetnames if n.startswith("T2")]
        self.assertTrue(t2, wb.sheetnames)
        self.assertTrue(wb[t2[0]]._charts)
        # a chart a spec asked for with t.table (indexes survive the JSON
        # trip from the cell's process as integers)
        t1 = [n for n in wb.sheetnames if n.startswith("T1")]
        self.assertTrue(t1 and wb[t1[0]]._charts, wb.sheetnames)
        # Metrics: FAIL only on a metric whose check failed
        m = wb["Metrics"]
        hdr = [c.value for c in m[4]]
        self.assertEqual(hdr[3:7], ["Metric", "Value", "Unit", "Check"])
        marks = {}
        for row in m.iter_rows(min_row=5, values_only=True):
            if row[0] == "T2" and row[2] == "size=4096,qps=1":
                marks[row[3]] = row[6]
        self.assertEqual(marks, {"bw_gbps": "PASS", "lat.p50": None,
                                 "lat.p99": None})
        for row in m.iter_rows(min_row=5, values_only=True):
            if row[6] == "FAIL":
                self.assertEqual(row[3], "bw_gbps", row)
        import xml.etree.ElementTree as ET
        root = ET.parse(self.path("w.xml")).getroot()
        errors = sum(int(s.get("errors", 0)) for s in root.iter("testsuite"))
        self.assertGreaterEqual(errors, 3)


if __name__ == "__main__":
    sys.argv[1:] = [a for a in sys.argv[1:]]
    unittest.main()
