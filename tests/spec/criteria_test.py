#!/usr/bin/python3
"""The criterion language through the real binary (label "spec"): any_of /
all_of groups (nested, in a spec and in a thresholds file), WARN bands,
record-only runs and the exit codes.  Outputs are read back: the journal,
run.json, JUnit XML, the Prometheus textfile and the workbook (openpyxl)."""
import json
import os
import re
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


if __name__ == "__main__":
    unittest.main()
