#!/usr/bin/python3
"""The Warnings sheet (lua/strata/report/sheets/warnings.lua): a run with
WARN checks lists each, with its value, both limits, why and the source;
a run without a warning has no such sheet (its workbook as it was)."""
import os
import sys
import unittest

import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../pylib"))
from strata_test import Tmp, strata  # noqa: E402

# The criterion tests' spec: W1 crosses its warn limit (p99 25 us: within
# 3 x p50 = 30, past 2 x p50 = 20); W2 and W3 pass plainly; W4's cell n=1
# warns (10 < 15), n=2 does not.
sys.path.insert(0, os.path.join(HERE, "../spec"))
from criteria_test import WARN_SPEC as SPEC  # noqa: E402
PLAIN = '''
test {
  id = "P1", layer = "host", title = "plain",
  criteria = { answer = { eq = 42 } },
  run = function() return { answer = 42 } end,
}
'''


class Warnings(Tmp):
    def test_rows(self):
        spec = self.write("w.lua", SPEC)
        p = strata("run", spec, "-o", self.path("w.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        wb = openpyxl.load_workbook(self.path("w.xlsx"))
        self.assertIn("Warnings", wb.sheetnames)
        ws = wb["Warnings"]
        header = [c.value for c in ws[4]]
        self.assertEqual(header, ["Test", "Layer", "Cell", "Metric", "Value",
                                  "Unit", "Limit; warn limit", "Why",
                                  "Source"])
        rows = [[c.value for c in r] for r in ws.iter_rows(min_row=5)]
        self.assertEqual([r[:6] for r in rows],
                         [["W1", "host", None, "lat_p99_us", 25, None],
                          ["W4", "verbs", "n=1", "bw", 10, None]])
        self.assertEqual(rows[0][6], "lat_p99_us <= 3 x lat_p50_us (= 30); "
                         "warn: lat_p99_us <= 2 x lat_p50_us (= 20)")
        self.assertEqual(rows[0][7],
                         "lat_p99_us = 25, past the warn limit <= 20")
        self.assertEqual(rows[0][8], "w.lua:5")
        # after the test sheets, before Metrics
        names = wb.sheetnames
        self.assertEqual(names.index("Warnings") + 1, names.index("Metrics"))

    def test_none_without_a_warning(self):
        spec = self.write("p.lua", PLAIN)
        p = strata("run", spec, "-o", self.path("p.xlsx"))
        self.assertEqual(p.returncode, 0, p.stderr)
        wb = openpyxl.load_workbook(self.path("p.xlsx"))
        self.assertNotIn("Warnings", wb.sheetnames)


if __name__ == "__main__":
    unittest.main()
