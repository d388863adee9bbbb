#!/usr/bin/python3
"""strata check on part of the runbook: the tests a thresholds file names
that no loaded spec defines are one warning line per file (their count and
the first few IDs), not one line per test (issue 26)."""
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../pylib"))
from strata_test import SRC, Tmp, strata  # noqa: E402


class Unloaded(Tmp):
    def warnings(self, p):
        return [l for l in p.stderr.splitlines() if "no loaded spec" in l]

    def test_one_line_for_the_shipped_rest(self):
        # the S3 folder with the whole runbook's thresholds: every other
        # shipped test is named once, in one line, with the count
        p = strata("check", "--site", "specs/site.example.yaml", "specs/s3",
                   cwd=SRC)
        self.assertEqual(p.returncode, 0, p.stderr)
        w = self.warnings(p)
        self.assertEqual(len(w), 1, p.stderr)
        m = re.match(r"strata: warning: specs/thresholds\.yaml: names (\d+) "
                     r"tests no loaded spec defines: H1 \(line \d+\), "
                     r"H2 \(line \d+\), H3 \(line \d+\), .*, and (\d+) more "
                     r"\(specs left out of this run, or a typo\)$", w[0])
        self.assertTrue(m, w[0])
        self.assertEqual(int(m.group(1)) - 5, int(m.group(2)))
        self.assertGreater(int(m.group(1)), 30)
        # the whole runbook: nothing to say
        p = strata("check", "--site", "specs/site.example.yaml", "specs",
                   cwd=SRC)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.warnings(p), [])

    def test_a_typo_names_its_line(self):
        spec = self.write("q.lua", 'test { id = "Q1", layer = "host", '
                          'title = "q", run = function() return { a = 1 } end }\n')
        self.write("thresholds.yaml", "Q1:\n  a: { min: 0 }\nQ2:\n"
                   "  a: { min: 1 }\n")
        p = strata("check", spec)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.warnings(p), [
            "strata: warning: %s: names a test no loaded spec defines: "
            "Q2 (line 3) (specs left out of this run, or a typo)"
            % self.path("thresholds.yaml")])


if __name__ == "__main__":
    unittest.main()
