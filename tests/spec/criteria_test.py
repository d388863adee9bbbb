#!/usr/bin/python3
"""The criterion language through the real binary (label "spec"): any_of /
all_of groups (nested, in a spec and in a thresholds file), WARN bands,
record-only runs and the exit codes.  Outputs are read back: the journal,
run.json, JUnit XML, the Prometheus textfile and the workbook (openpyxl)."""
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../pylib"))
from strata_test import SRC, Tmp, journal, results, strata  # noqa: E402

# A spec whose metrics the group below judges (RUNBOOK §32's E2E OR, KPIs
# named as a site would name them).
GROUP_SPEC = '''
test {
  id = "G1", layer = "host", title = "benefit",
  criteria = {
    benefit = { any_of = {
      { throughput_x = { min = 1.10 } },
      { cpu_lower_pct = { min = 20 } },
      { latency = { all_of = {
        { ttft_better_pct = { min = 10 } },
        { itl_better_pct = { min = 10 } },
      } } },
    } },
  },
  run = function()
    return { throughput_x = 1.23, cpu_lower_pct = 8, ttft_better_pct = 12,
             itl_better_pct = 3 }
  end,
}
'''


def checks_of(recs, tid):
    return results(recs)[tid][0]["checks"]


# A fact the spec explains in words (t.explain): the words reach the
# reason of the check that fails it, first, and so the Summary (issue 27:
# E3P's "this site's NIC cannot carry AIStor's S3 over RDMA").
EXPLAIN_SPEC = '''
test {
  id = "X1", layer = "host", title = "explained",
  criteria = { a_ok = { eq = true }, dc = { eq = true }, b_ok = { eq = true } },
  run = function(t)
    t.explain("dc", "this NIC cannot carry it: no DC (a README says so)")
    t.explain("b_ok", "never shown: b_ok holds")
    return { a_ok = false, dc = false, b_ok = true }
  end,
}
'''


class Explain(Tmp):
    def test_reason_leads_with_the_words(self):
        import openpyxl
        spec = self.write("x.lua", EXPLAIN_SPEC)
        p = strata("run", spec, "-o", self.path("x.xlsx"))
        self.assertEqual(p.returncode, 1, p.stderr)
        r = results(journal(self.path("x.jsonl")))["X1"][0]
        self.assertEqual(r["status"], "FAIL")
        self.assertTrue(r["reason"].startswith(
            "dc = false, wanted == true: this NIC cannot carry it: no DC "
            "(a README says so); a_ok = false"), r["reason"])
        self.assertNotIn("never shown", r["reason"])
        ws = openpyxl.load_workbook(self.path("x.xlsx"))["Summary"]
        head, row = None, None
        for v in ws.iter_rows(values_only=True):
            if v[0] == "ID":
                head = list(v)
            elif head and v[0] == "X1":
                row = dict(zip(head, v))
        self.assertIn("this NIC cannot carry it: no DC", row["Reason"])


class Groups(Tmp):
    def run_spec(self, name, *args):
        out = self.path(name + ".xlsx")
        p = strata("run", self.path("g.lua"), "-o", out, *args)
        return p, journal(self.path(name + ".jsonl"))

    def test_spec_group_members_reported(self):
        self.write("g.lua", GROUP_SPEC)
        p, recs = self.run_spec("a")
        self.assertEqual(p.returncode, 0, p.stderr)
        res = results(recs)["G1"][0]
        self.assertEqual(res["status"], "PASS")
        ck = res["checks"][0]
        self.assertEqual((ck["metric"], ck["op"], ck["ok"]),
                         ("benefit", "any_of", True))
        self.assertEqual(ck["held"], ["throughput_x"])
        self.assertEqual(
            ck["text"], "benefit: throughput_x = 1.23 >= 1.1; "
            "cpu_lower_pct = 8 < 20; latency (all of: ttft_better_pct = 12 "
            ">= 10; itl_better_pct = 3 < 10)")
        # each member keeps its own source: the line of its limit
        srcs = [m["source"] for m in ck["members"]]
        self.assertEqual([s.rsplit(":", 1)[1] for s in srcs], ["6", "7", "8"])
        nested = ck["members"][2]
        self.assertEqual((nested["op"], nested["ok"]), ("all_of", False))
        self.assertEqual([m["source"].rsplit(":", 1)[1]
                          for m in nested["members"]], ["9", "10"])
        # the criteria record keeps the members with their texts
        crit = [r for r in recs if r["type"] == "thresholds"][0]["criteria"]
        self.assertEqual(crit[0]["text"], "benefit: any of (throughput_x >= "
                         "1.1; cpu_lower_pct >= 20; latency: all of "
                         "(ttft_better_pct >= 10; itl_better_pct >= 10))")
        self.assertEqual(crit[0]["members"][2]["members"][1]["metric"],
                         "itl_better_pct")

    def test_thresholds_group_switches_kpis(self):
        # the file's group replaces the spec's; dropping the KPI that held
        # flips the verdict with no spec edit
        self.write("g.lua", GROUP_SPEC)
        y = self.write("t.yaml", "G1:\n  benefit:\n    any_of:\n"
                       "      - throughput_x: { min: 1.30 }\n"
                       "      - latency:\n          all_of:\n"
                       "            - ttft_better_pct: { min: 10 }\n"
                       "            - itl_better_pct: { min: 2 }\n")
        p, recs = self.run_spec("b", "--thresholds", y)
        self.assertEqual(p.returncode, 0, p.stderr)
        ck = checks_of(recs, "G1")[0]
        self.assertEqual(ck["held"], ["latency"])
        self.assertEqual(ck["source"], y + ":2")
        self.assertEqual([m["source"] for m in ck["members"]],
                         [y + ":4", y + ":5"])
        self.assertEqual([m["source"] for m in ck["members"][1]["members"]],
                         [y + ":7", y + ":8"])
        p, recs = self.run_spec("c", "--thresholds", y, "--set",
                                "G1.benefit.latency.itl_better_pct.min=5")
        self.assertEqual(p.returncode, 1, p.stderr)
        res = results(recs)["G1"][0]
        self.assertEqual(res["status"], "FAIL")
        self.assertEqual(res["reason"], "benefit: none held (throughput_x = "
                         "1.23 < 1.3; latency (all of: ttft_better_pct = 12 "
                         ">= 10; itl_better_pct = 3 < 5))")
        # a KPI switched off on the command line: the spec's group without
        # the member that held
        p, recs = self.run_spec("d", "--set", "G1.benefit.throughput_x.min=none")
        self.assertEqual(p.returncode, 1, p.stderr)
        ck = checks_of(recs, "G1")[0]
        self.assertEqual([m["metric"] for m in ck["members"]],
                         ["cpu_lower_pct", "latency"])
        self.assertFalse(ck["ok"])
        # a profile's group replaces the file's whole: only cpu_lower_pct
        prof = self.write("p.yaml", "G1:\n  benefit:\n    all_of:\n"
                          "      - cpu_lower_pct: { min: 5 }\n")
        p, recs = self.run_spec("e", "--thresholds", y, "--profile", prof)
        self.assertEqual(p.returncode, 0, p.stderr)
        ck = checks_of(recs, "G1")[0]
        self.assertEqual((ck["op"], ck["held"], ck["source"]),
                         ("all_of", ["cpu_lower_pct"], prof + ":2"))
        # a group and its members on the Thresholds sheet, with sources
        import openpyxl
        ws = openpyxl.load_workbook(self.path("b.xlsx"))["Thresholds"]
        rows = [r for r in ws.iter_rows(min_row=5, values_only=True)]
        self.assertEqual(rows[0][:4], ("G1", "benefit", "any of",
                                       "one of the 2 below"))
        self.assertEqual(rows[1][1:], ("benefit: throughput_x", "\u2265",
                                       "1.3", 1.3, "t.yaml:4"))
        self.assertEqual(rows[4][1:3], ("benefit: latency: itl_better_pct",
                                        "\u2265"))

    def test_docs_example_checks(self):
        # docs/specs.md's example, as written there, passes strata check
        with open(os.path.join(SRC, "docs/specs.md")) as f:
            text = f.read()
        part = text[text.index("### Groups: any_of, all_of"):]
        lua = re.search(r"```lua\n(.*?)```", part, re.S).group(1)
        yml = re.search(r"```yaml\n(.*?)```", part, re.S).group(1)
        spec = self.write("x.lua", lua)
        y = self.write("x.yaml", yml)
        p = strata("check", spec, "--thresholds", y)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = strata("run", spec, "--thresholds", y, "-o", self.path("x.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        ck = checks_of(journal(self.path("x.jsonl")), "X1")[0]
        self.assertIn(ck["text"], text.replace("\n", " "))

    def expect2(self, args, needle):
        p = strata(*args)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(needle, p.stderr)

    def test_bad_shapes_name_file_and_line(self):
        spec = self.write("g.lua", GROUP_SPEC)
        for text, line, what in [
            ("G1:\n  benefit:\n    any_of: { a: 1 }\n", 3,
             "G1.benefit.any_of: expected a non-empty list"),
            ("G1:\n  benefit:\n    any_of:\n      - 5\n", 4,
             "G1.benefit.any_of item 1: expected a member"),
            ("G1:\n  benefit:\n    any_of:\n      - a: { most: 1 }\n", 4,
             "G1.benefit.a: unknown operator 'most'"),
            ("G1:\n  benefit:\n    any_of: [ {a: {min: 1}} ]\n    min: 3\n",
             4, "G1.benefit: a group holds only 'any_of', not 'min'"),
            ("G1:\n  x:\n    max: 3\n    warn: { min: 1 }\n", 4,
             "G1.x.warn.min: a WARN band sits beside a FAIL limit"),
            ("G1:\n  benefit:\n    all_of:\n      - 'a*': { min: 1 }\n", 4,
             "G1.a*: a member of benefit all_of names one metric"),
        ]:
            y = self.write("t.yaml", text)
            self.expect2(["check", spec, "--thresholds", y],
                         "%s:%d: %s" % (y, line, what))
        bad = self.write("b.lua", "test { id='B1', layer='host', title='x',\n"
                         "  criteria = {\n    g = { any_of = {\n"
                         "      { a = 5 } } } },\n"
                         "  run = function() return {} end }\n")
        self.expect2(["check", bad], bad + ":4: test B1: criteria.g.a: "
                     "expected a mapping")



# W1 crosses its warn limit (p99 25 us: within 3 x p50 = 30, past 2 x p50
# = 20); W2 passes; W3 needs W1, which WARNed: the gate opens.
WARN_SPEC = '''
test {
  id = "W1", layer = "host", title = "latency stable",
  criteria = {
    lat_p99_us = { max = "3 * lat_p50_us", warn = { max = "2 * lat_p50_us" } },
  },
  run = function() return { lat_p50_us = 10, lat_p99_us = 25 } end,
}
test {
  id = "W2", layer = "host", title = "plain",
  criteria = { answer = { eq = 42 } },
  run = function() return { answer = 42 } end,
}
test {
  id = "W3", layer = "verbs", title = "after W1", needs = { "W1" },
  criteria = { answer = { eq = 42 } },
  run = function() return { answer = 42 } end,
}
test {
  id = "W4", layer = "verbs", title = "matrix", matrix = { n = { 1, 2 } },
  criteria = { bw = { min = 5, warn = { min = 15 } } },
  run = function(t) return { bw = 10 * t.cell.n } end,
}
'''
AMBER = "FFFFD966"


# A bandwidth matrix as R2's (size x QPs): small cells far below the
# floor, as a real 400 Gb/s port is at 4 KiB over one QP.
WHERE_SPEC = '''
test {
  id = "M1", layer = "verbs", title = "matrix",
  matrix = { size = { 4096, 65536, 1048576 }, qps = { 1, 4 },
             order = { "size", "qps" } },
  headline = "bw_gbps", units = { bw_gbps = "Gbit/s" },
  run = function(t)
    local bw = { [4096] = 40, [65536] = 300, [1048576] = 380 }
    return { bw_gbps = bw[t.cell.size] * (t.cell.qps == 4 and 1 or 0.5),
             line_rate_gbps = 400 }
  end,
}
'''


class Where(Tmp):
    def run_where(self, name, yaml, *args):
        spec = self.write("m.lua", WHERE_SPEC)
        y = self.write(name + ".yaml", yaml)
        p = strata("run", spec, "--thresholds", y, "-o", self.path(name + ".xlsx"),
                   *args)
        return p, journal(self.path(name + ".jsonl")), y

    def test_cells_judged_and_not(self):
        floor = 'M1:\n  bw_gbps: { min: "0.9 * line_rate_gbps",\n' \
                '            where: { size: { min: 65536 }, qps: [4] } }\n'
        p, recs, y = self.run_where("a", floor)
        self.assertEqual(p.returncode, 1, p.stderr)
        cells = results(recs)["M1"]
        st = {(c["cell"]["size"], c["cell"]["qps"]): c for c in cells}
        # 64 KiB x 4 QPs is judged and below 360; 1 MiB x 4 holds; the
        # rest are outside the where: not judged, and said why
        self.assertEqual(st[(65536, 4)]["status"], "FAIL")
        self.assertEqual(st[(1048576, 4)]["status"], "PASS")
        for k in ((4096, 1), (4096, 4), (65536, 1), (1048576, 1)):
            self.assertEqual(st[k]["status"], "PASS", k)
            ck = st[k]["checks"][0]
            self.assertTrue(ck["ok"] and ck["not_judged"] and ck["out_of_scope"])
            self.assertIsNone(st[k].get("reason"))
        self.assertEqual(st[(4096, 4)]["checks"][0]["why"],
                         "not judged in this cell: size = 4096, not >= 65536")
        self.assertEqual(st[(65536, 1)]["checks"][0]["why"],
                         "not judged in this cell: qps = 1, not in {4}")
        # the criterion says which cells, in the journal and on Thresholds
        crit = [r for r in recs if r["type"] == "thresholds"][0]["criteria"]
        c = [x for x in crit if x["id"] == "M1"][0]
        self.assertEqual(c["text"], "bw_gbps >= 0.9 x line_rate_gbps "
                         "where qps in {4}, size >= 65536")
        self.assertEqual(c["where"], [{"param": "qps", "op": "in", "value": [4]},
                                      {"param": "size", "op": "min",
                                       "value": 65536}])
        import openpyxl
        wb = openpyxl.load_workbook(self.path("a.xlsx"))
        rows = list(wb["Thresholds"].iter_rows(values_only=True))
        self.assertTrue(any(r[0] == "M1" and any(isinstance(x, str) and
                            "where qps in {4}, size >= 65536" in x for x in r)
                            for r in rows), rows)
        # the Summary's headline is the worst judged cell, not 4 KiB x 1
        summ = [r for r in wb["Summary"].iter_rows(values_only=True)
                if r[0] == "M1"][0]
        self.assertIn("bw_gbps = 300 Gbit/s (lowest of 2 judged cells)", summ)
        # the cell table says which cells were measured and not judged
        sheet = [wb[n] for n in wb.sheetnames if n.startswith("M1 ")][0]
        rows = list(sheet.iter_rows(values_only=True))
        small = [r for r in rows if r[:2] == (4096, 4)][0]
        self.assertIn("bw_gbps not judged in this cell: size = 4096, not >= 65536",
                      small)
        # --set keeps the where: only the judged cells move
        p, recs, _ = self.run_where("b", floor, "--set", "M1.bw_gbps.min=250")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual({c["status"] for c in results(recs)["M1"]}, {"PASS"})
        # a profile's where: {} judges every cell again
        prof = self.write("p.yaml", "M1:\n  bw_gbps: { min: 100, where: {} }\n")
        p, recs, _ = self.run_where("c", floor, "--profile", prof)
        self.assertEqual(p.returncode, 1, p.stderr)
        bad = sorted((c["cell"]["size"], c["cell"]["qps"])
                     for c in results(recs)["M1"] if c["status"] == "FAIL")
        self.assertEqual(bad, [(4096, 1), (4096, 4)])

    def test_no_cell_in_where(self):
        # a matrix scaled below the where: nothing judged, and the test says so
        p, recs, _ = self.run_where(
            "n", "M1:\n  bw_gbps: { min: 100, where: { size: { min: 2097152 } } }\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = strata("report", self.path("n.jsonl"), "--json", self.path("n.json"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path("n.json")) as f:
            doc = json.load(f)
        t = [x for x in doc["tests"] if x["id"] == "M1"][0]
        self.assertEqual(t["status"], "PASS")
        self.assertIn("judged in no cell: bw_gbps >= 100 where size >= 2097152",
                      t["reason"])

    def test_bad_where_names_file_and_line(self):
        spec = self.write("m.lua", WHERE_SPEC)
        for text, line, what in [
            ("M1:\n  bw_gbps:\n    min: 1\n    where: [size]\n", 4,
             "M1.bw_gbps.where: expected a mapping of matrix parameters"),
            ("M1:\n  bw_gbps:\n    min: 1\n    where: { sizes: 4096 }\n", 4,
             "M1.bw_gbps.where: 'sizes' is not a matrix parameter of M1 "
             "(its parameters: size, qps)"),
            ("M1:\n  bw_gbps:\n    min: 1\n    where: { size: { most: 1 } }\n",
             4, "M1.bw_gbps.where.size: unknown operator 'most'"),
            ("M1:\n  bw_gbps:\n    min: 1\n    where:\n      size: { min: [1] }\n",
             5, "M1.bw_gbps.where.size.min: expected a number or a word"),
        ]:
            y = self.write("t.yaml", text)
            p = strata("check", spec, "--thresholds", y)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("%s:%d: %s" % (y, line, what), p.stderr)


def fill_of(cell):
    return cell.fill.fgColor.rgb


class Warn(Tmp):
    def run_warn(self, name, *args):
        spec = self.write("w.lua", WARN_SPEC)
        p = strata("run", spec, "-o", self.path(name + ".xlsx"),
                   "--json", self.path(name + ".json"),
                   "--junit", self.path(name + ".xml"),
                   "--prometheus", self.path(name + ".run.prom"), *args)
        return p, journal(self.path(name + ".jsonl"))

    def test_warn_everywhere(self):
        import openpyxl
        import xml.etree.ElementTree as ET
        p, recs = self.run_warn("w")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("strata: PASS \u2014 2 PASS, 2 WARN, 0 FAIL", p.stderr)
        res = results(recs)
        self.assertEqual([res[t][0]["status"] for t in ("W1", "W2", "W3")],
                         ["WARN", "PASS", "PASS"])
        # a matrix test: WARN where one cell warned, PASS in the other
        self.assertEqual([c["status"] for c in res["W4"]], ["WARN", "PASS"])
        ck = res["W1"][0]["checks"][0]
        self.assertTrue(ck["ok"] and ck["warn"])
        self.assertEqual((ck["limit"], ck["warn_limit"]), (30, 20))
        self.assertEqual(ck["text"], "lat_p99_us <= 3 x lat_p50_us (= 30); "
                         "warn: lat_p99_us <= 2 x lat_p50_us (= 20)")
        self.assertEqual(res["W1"][0]["reason"],
                         "lat_p99_us = 25, past the warn limit <= 20")
        # JSON: counted, the verdict PASS "with 1 warning"
        with open(self.path("w.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["verdict"], "PASS")
        self.assertEqual((doc["counts"]["WARN"], doc["counts"]["PASS"]), (2, 2))
        self.assertIn("with 2 warnings (W1, W4)", doc["message"])
        # the workbook: amber status on the Summary and the test's sheet,
        # counted, and the warn limit with its source on Thresholds
        wb = openpyxl.load_workbook(self.path("w.xlsx"))
        ws = wb["Summary"]
        cells = [c for row in ws.iter_rows() for c in row]
        w1 = [c for c in cells if c.value == "W1"][0]
        status = [c for c in ws[w1.row] if c.value == "WARN"][0]
        self.assertEqual(fill_of(status), AMBER)
        count = [c for c in cells if c.value == "WARN" and c.column == 1][0]
        self.assertEqual(ws.cell(count.row, 2).value, 2)
        self.assertEqual(fill_of(count), AMBER)
        self.assertTrue(any(isinstance(c.value, str) and
                            "with 2 warnings (W1, W4)" in c.value for c in cells))
        # the matrix test's own sheet: its status amber, the cell's too
        sheet = [wb[n] for n in wb.sheetnames if n.startswith("W4 ")][0]
        self.assertEqual((sheet["A2"].value, fill_of(sheet["A2"])),
                         ("WARN", AMBER))
        warned = [c for row in sheet.iter_rows() for c in row
                  if c.value == "WARN" and c.row > 2]
        self.assertTrue(warned and all(fill_of(c) == AMBER for c in warned),
                        [c.coordinate for c in warned])
        # the Metrics sheet's Check column: WARN on the metric, amber
        ms = wb["Metrics"]
        row = [r for r in ms.iter_rows(min_row=5) if r[0].value == "W1"
               and r[3].value == "lat_p99_us"][0]
        self.assertEqual((row[6].value, fill_of(row[6])), ("WARN", AMBER))
        rows = list(wb["Thresholds"].iter_rows(min_row=5, values_only=True))
        warn = [r for r in rows if r[0] == "W1" and r[2] == "warn \u2264"][0]
        self.assertEqual(warn[3:5], ("2 * lat_p50_us", 20))
        self.assertTrue(warn[5].endswith("w.lua:5"), warn)
        # JUnit: a passing testcase naming the warning in its properties
        root = ET.parse(self.path("w.xml")).getroot()
        self.assertEqual((root.get("failures"), root.get("errors"),
                          root.get("tests")), ("0", "0", "5"))
        case = [c for c in root.iter("testcase") if c.get("name") == "W1"][0]
        self.assertIsNone(case.find("failure"))
        self.assertIsNone(case.find("skipped"))
        props = {x.get("name"): x.get("value")
                 for x in case.find("properties")}
        self.assertEqual(props["strata.status"], "WARN")
        self.assertIn("past the warn limit", props["strata.warning"])
        self.assertTrue(case.find("system-out").text.startswith("WARN: "))
        # Prometheus: counted, the run passed
        prom = self.path("w.prom")
        q = strata("report", self.path("w.jsonl"), "-o", self.path("r.xlsx"),
                   "--prometheus", prom)
        self.assertEqual(q.returncode, 0, q.stderr)
        with open(prom) as f:
            text = f.read()
        # strata run --prometheus wrote the same file from the same journal
        with open(self.path("w.run.prom")) as f:
            self.assertEqual(f.read(), text)
        self.assertIn('strata_run_warnings{host=', text)
        self.assertRegex(text, r'strata_tests\{host="[^"]*",status="WARN"\} 2\n')
        self.assertRegex(text, r'strata_run_warnings\{host="[^"]*"\} 2\n')
        self.assertRegex(text, r'strata_test_pass\{host="[^"]*",layer="host",'
                         r'status="WARN",test="W1"\} 1\n')
        self.assertRegex(text, r'strata_run_verdict\{host="[^"]*",'
                         r'verdict="PASS"\} 1\n')
        promtool = os.environ.get("PROMTOOL") or shutil.which("promtool")
        if promtool:
            with open(prom) as f:
                r = subprocess.run([promtool, "check", "metrics"], stdin=f,
                                   capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        else:
            print("promtool not installed (Debian package prometheus): "
                  "the textfile was checked by the patterns above only")

    def test_gpu_link_warns(self):
        # the shipped R4 gpu_link criterion (specs/thresholds.yaml): a GPU
        # behind the NIC's own switch passes, any other path WARNs
        with open(os.path.join(SRC, "specs/thresholds.yaml")) as f:
            text = f.read()
        part = text[text.index("\nR4:"):]
        line = re.search(r"^  gpu_link: .*$", part, re.M).group(0)
        y = self.write("g.yaml", "R4:\n" + line + "\n")
        spec = self.write("r4.lua", '''
test {
  id = "R4", layer = "gpu-rdma", title = "gpu link",
  matrix = { link = { "PIX", "PXB", "PHB", "NODE", "SYS", "unknown" } },
  run = function(t) return { gpu_link = t.cell.link } end,
}
''')
        p = strata("run", spec, "--thresholds", y, "-o", self.path("g.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        got = {c["cell"]["link"]: c["status"]
               for c in results(journal(self.path("g.jsonl")))["R4"]}
        self.assertEqual(got, {"PIX": "PASS", "PXB": "PASS", "PHB": "WARN",
                               "NODE": "WARN", "SYS": "WARN", "unknown": "WARN"})

    def test_strict_exit_code(self):
        p, _ = self.run_warn("s", "--strict")
        self.assertEqual(p.returncode, 3, p.stderr)
        # nothing past a warn limit: --strict exits 0
        p, _ = self.run_warn("t", "--strict", "--set", "W1.lat_p99_us.warn.max=none",
                          "--set", "W4.bw.warn.min=none")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_diff_warn_pass(self):
        p, _ = self.run_warn("a", "--set", "W1.lat_p99_us.warn.max=30")
        self.assertEqual(p.returncode, 0, p.stderr)
        p, _ = self.run_warn("b")
        self.assertEqual(p.returncode, 0, p.stderr)
        d = strata("diff", self.path("a.jsonl"), self.path("b.jsonl"))
        self.assertEqual(d.returncode, 1, d.stdout + d.stderr)
        self.assertIn("W1       host     PASS -> WARN  VERDICT WORSE", d.stdout)
        d = strata("diff", self.path("b.jsonl"), self.path("a.jsonl"))
        self.assertEqual(d.returncode, 0, d.stdout + d.stderr)
        self.assertIn("W1       host     WARN -> PASS  VERDICT BETTER", d.stdout)


class Stability(Tmp):
    def test_ratio_and_cv(self):
        spec = self.write("s.lua", '''
test {
  id = "S1", layer = "host", title = "stable",
  run = function()
    return { iter_gbps = { 10, 10.2, 9.8 }, lat_p50_us = 10, lat_p99_us = 25,
             once = { 5 } }
  end,
}
''')
        y = self.write("s.yaml", "S1:\n"
                       '  "cv(iter_gbps)": { max: 5, warn: { max: 1 } }\n'
                       '  lat_p99_us: { max: "3 * lat_p50_us" }\n'
                       '  "cv(lat_p50_us, lat_p99_us)": { max: 50 }\n')
        p = strata("run", spec, "--thresholds", y, "-o", self.path("s.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        res = results(journal(self.path("s.jsonl")))["S1"][0]
        cks = {c["metric"]: c for c in res["checks"]}
        cv = cks["cv(iter_gbps)"]
        # population sd of 10, 10.2, 9.8 over the mean 10, in %
        self.assertAlmostEqual(cv["value"], (0.08 / 3) ** 0.5 / 10 * 100)
        self.assertTrue(cv["ok"] and cv["warn"])
        self.assertEqual(cv["source"], y + ":2")
        self.assertEqual(res["status"], "WARN")
        self.assertIn("cv(iter_gbps) = 1.63299, past the warn limit <= 1",
                      res["reason"])
        ratio = cks["lat_p99_us"]
        self.assertEqual((ratio["limit"], ratio["ok"]), (30, True))
        self.assertEqual(ratio["text"], "lat_p99_us <= 3 x lat_p50_us (= 30)")
        # 10 and 25: sd 7.5 over the mean 17.5
        two = cks["cv(lat_p50_us, lat_p99_us)"]
        self.assertAlmostEqual(two["value"], 7.5 / 17.5 * 100)
        self.assertTrue(two["ok"])
        # the ratio fails past 3 x p50; one number is no spread
        p = strata("run", spec, "--thresholds", y, "--set",
                   "S1.lat_p99_us.max=2 * lat_p50_us", "--set",
                   "S1.cv(once).max=5", "-o", self.path("t.xlsx"))
        self.assertEqual(p.returncode, 1, p.stderr)
        res = results(journal(self.path("t.jsonl")))["S1"][0]
        self.assertIn("lat_p99_us = 25, wanted <= 20", res["reason"])
        self.assertIn("cv(once): 1 number to compare, 2 or more needed",
                      res["reason"])


RECORD_SPEC = '''
test {
  id = "R1", layer = "host", title = "fails", gate = false,
  criteria = { answer = { eq = 43 } },
  run = function() return { answer = 42 } end,
}
test {
  id = "R2", layer = "verbs", title = "needs R1", needs = { "R1" },
  criteria = { answer = { eq = 42 } },
  run = function() return { answer = 42 } end,
}
test {
  id = "R3", layer = "host", title = "fails too",
  criteria = { answer = { eq = 41 } },
  run = function() return { answer = 42 } end,
}
'''


class RecordOnly(Tmp):
    def run_rec(self, name, *args):
        spec = self.write("r.lua", RECORD_SPEC)
        p = strata("run", spec, "-o", self.path(name + ".xlsx"), "--json",
                   self.path(name + ".json"), "--junit",
                   self.path(name + ".xml"), *args)
        with open(self.path(name + ".json")) as f:
            doc = json.load(f)
        return p, {t["id"]: t for t in doc["tests"]}, doc

    def test_gate_false_and_no_gate(self):
        import xml.etree.ElementTree as ET
        # R3 gates and fails; R1 (gate = false) fails as judged, R2 runs
        p, tests, doc = self.run_rec("a")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual((tests["R1"]["status"], tests["R2"]["status"]),
                         ("FAIL", "PASS"))
        self.assertTrue(tests["R1"]["record_only"])
        self.assertTrue(tests["R1"]["reason"].startswith(
            "record only (gates nothing): answer = 42, wanted == 43"))
        self.assertEqual(doc["lowest_failed"]["id"], "R3")
        # the thresholds file takes R3 out of the gate too: exit 0
        y = self.write("t.yaml", "R3:\n  gate: false\n")
        p, tests, doc = self.run_rec("b", "--thresholds", y)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["verdict"], "PASS")
        self.assertIn("Record only (gates nothing): 2 tests, as judged 2 FAIL.",
                      doc["message"])
        root = ET.parse(self.path("b.xml")).getroot()
        self.assertEqual(root.get("failures"), "0")
        case = [c for c in root.iter("testcase") if c.get("name") == "R3"][0]
        self.assertIsNone(case.find("failure"))
        props = {x.get("name"): x.get("value") for x in case.find("properties")}
        self.assertEqual(props, {"strata.status": "FAIL",
                                 "strata.record_only": "true"})
        # Prometheus: a record-only FAIL is 0 like any FAIL, and the label
        # (and the run's count) say it gated nothing; R2 gates, no label
        prom = self.path("b.prom")
        q = strata("report", self.path("b.jsonl"), "-o", self.path("bb.xlsx"),
                   "--prometheus", prom)
        self.assertEqual(q.returncode, 0, q.stderr)
        with open(prom) as f:
            text = f.read()
        for tid in ("R1", "R3"):
            self.assertRegex(text, r'strata_test_pass\{host="[^"]*",layer="host",'
                             r'record_only="true",status="FAIL",test="%s"\} 0\n' % tid)
        self.assertRegex(text, r'strata_test_pass\{host="[^"]*",layer="verbs",'
                         r'status="PASS",test="R2"\} 1\n')
        self.assertRegex(text, r'strata_run_record_only\{host="[^"]*"\} 2\n')
        self.assertRegex(text, r'strata_run_verdict\{host="[^"]*",'
                         r'verdict="PASS"\} 1\n')
        promtool = os.environ.get("PROMTOOL") or shutil.which("promtool")
        if promtool:
            with open(prom) as f:
                r = subprocess.run([promtool, "check", "metrics"], stdin=f,
                                   capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # --no-gate: every test record only, verdict RECORDED, exit 0
        p, tests, doc = self.run_rec("c", "--no-gate")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["verdict"], "RECORDED")
        self.assertIn("As judged: FAIL", doc["message"])
        self.assertEqual([tests[i]["status"] for i in ("R1", "R2", "R3")],
                         ["FAIL", "PASS", "FAIL"])
        # a bad gate value names its line
        y = self.write("t.yaml", "R3:\n  gate: maybe\n")
        p = strata("check", self.path("r.lua"), "--thresholds", y)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(y + ":2: R3.gate: expected true or false", p.stderr)


if __name__ == "__main__":
    unittest.main()
