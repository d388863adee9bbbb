#!/usr/bin/python3
"""The site file's scale: block (lua/strata/scale.lua) through the real
binary: matrices restricted and cut, figures cut by t.scale, every cut
named in the result's notes, bad blocks rejected with exit 2."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "fixtures", "scaled.lua")
BIN = os.environ.get("STRATA_BIN") or os.path.join(HERE, "../../build/strata")
MiB = 1048576

SITE = """scale:
  max_object_mb: 64
  max_streams: 16
  max_duration_s: 2
  max_iterations: 100
  matrix:
    SC2: { peers: [1, 4] }
"""


class Scale(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="strata-scale-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_site(self, text):
        site = os.path.join(self.dir, "site.yaml")
        with open(site, "w") as f:
            f.write(text)
        out = os.path.join(self.dir, "r.xlsx")
        p = subprocess.run([BIN, "run", SPEC, "--site", site, "-o", out],
                           capture_output=True, text=True, timeout=60)
        recs = []
        if os.path.exists(out[:-5] + ".jsonl"):
            with open(out[:-5] + ".jsonl") as f:
                recs = [json.loads(l) for l in f if l.strip()]
        return p, [r for r in recs if r["type"] == "result"]

    def test_scaled(self):
        p, res = self.run_site(SITE)
        self.assertEqual(p.returncode, 0, p.stderr)
        sc1 = [r for r in res if r["id"] == "SC1"]
        cells = sorted((r["cell"]["size"], r["cell"]["concurrency"]) for r in sc1)
        self.assertEqual(cells, [(MiB, 1), (MiB, 16), (64 * MiB, 1), (64 * MiB, 16)])
        for r in sc1:
            self.assertEqual(r["status"], "PASS")
            self.assertIn("scaled by the site (scale:): size 1 MiB, 64 MiB, "
                          "1024 MiB -> 1 MiB, 64 MiB", r["notes"])
            self.assertIn("scaled by the site (scale:): concurrency 1, 16, 64 "
                          "-> 1, 16", r["notes"])
        sc2 = [r for r in res if r["id"] == "SC2"]
        # part_size: 512 MiB cut (64 MiB stays); peers restricted to 1, 4
        self.assertEqual(sorted((r["cell"]["part_size"], r["cell"]["peers"])
                                for r in sc2), [(64 * MiB, 1), (64 * MiB, 4)])
        m = sc2[0]["metrics"]
        self.assertEqual((m["object"], m["streams"], m["window"], m["iters"],
                          m["small"]), (64 * MiB, 16, 2, 100, 1024))
        notes = sc2[0]["notes"]
        for want in ["scaled by the site (scale.max_object_mb): size 4096 MiB -> 64 MiB",
                     "scaled by the site (scale.max_streams): streams 256 -> 16",
                     "scaled by the site (scale.max_duration_s): duration_s 30 -> 2",
                     "scaled by the site (scale.max_iterations): iterations 5000 -> 100",
                     "scaled by the site (scale:): peers 1, 2, 4 -> 1, 4"]:
            self.assertIn(want, notes)

    def summary_titles(self):
        """ID -> Title of the Summary's test table, read back by openpyxl."""
        import openpyxl
        ws = openpyxl.load_workbook(os.path.join(self.dir, "r.xlsx"))["Summary"]
        rows = list(ws.iter_rows(values_only=True))
        hr = next(i for i, r in enumerate(rows) if r[0] == "ID")
        col = rows[hr].index("Title")
        return {r[0]: r[col] for r in rows[hr + 1:] if r[0]}

    def test_summary_marks_scaled_rows(self):
        p, _ = self.run_site(SITE)
        self.assertEqual(p.returncode, 0, p.stderr)
        titles = self.summary_titles()
        self.assertEqual(titles["SC1"], "scaled matrix (scaled: size 1 MiB, "
                         "64 MiB, 1024 MiB -> 1 MiB, 64 MiB; concurrency 1, "
                         "16, 64 -> 1, 16)")
        # five cuts: three named, the rest counted (all on SC2's sheet)
        self.assertEqual(titles["SC2"], "scaled figures (scaled: part_size "
                         "64 MiB, 512 MiB -> 64 MiB; peers 1, 2, 4 -> 1, 4; "
                         "size 4096 MiB -> 64 MiB; 3 more on its sheet)")

    def test_unscaled(self):
        p, res = self.run_site("site: { name: x }\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.summary_titles(),
                         {"SC1": "scaled matrix", "SC2": "scaled figures"})
        self.assertEqual(len([r for r in res if r["id"] == "SC1"]), 9)
        m = [r for r in res if r["id"] == "SC2"][0]["metrics"]
        self.assertEqual(m["object"], 4096 * MiB)
        self.assertFalse(any("scaled" in n for r in res for n in r["notes"]))

    def test_bad_blocks(self):
        for text, want in [
            ("scale: { max_objects: 4 }\n", "scale.max_objects: unknown key"),
            ("scale: { max_streams: -1 }\n", "scale.max_streams: must be a number > 0"),
            ("scale: { matrix: { SC1: { size: [3] } } }\n",
             "scale.matrix.SC1.size: 3 is not one of SC1's values"),
            ("scale: { matrix: { SC1: { qps: [1] } } }\n",
             "scale.matrix.SC1.qps: SC1 has no matrix parameter 'qps'"),
        ]:
            p, _ = self.run_site(text)
            self.assertEqual(p.returncode, 2, text + p.stderr)
            self.assertIn("site.yaml: " + want, p.stderr)


if __name__ == "__main__":
    unittest.main()
