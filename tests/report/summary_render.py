#!/usr/bin/python3
"""The Summary as LibreOffice draws it (issue 26, item 7): the lab's stamp
is clear of the title rows.  Renders the workbook as docs/report.md
("Checked in LibreOffice") says - soffice --headless --convert-to pdf -
and reads every word's box on the first page back with poppler's
pdftotext -bbox-layout: above the test table no two words overlap, and
the stamp sits whole between the subtitle and the verdict.  The same
check on the layout before the fix (the stamp in column A alone, a row of
the default height: rebuilt with openpyxl) must find the overlap, so a
pass means the render is clean, not that the check is blind.
Exit 77 (SKIP) without soffice or pdftotext: LibreOffice is not in
.ci/packages (284 MB installed), so there the geometry test
report_summary_layout stands in for it."""
import os
import shutil
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../pylib"))
from strata_test import Tmp, strata  # noqa: E402

SPEC = os.path.join(HERE, "../spec/fixtures/scaled.lua")
LAB_STAMP = ("LAB: emulated Soft-RoCE under TCG and a one-node RGW: the "
             "figures prove the method, not this hardware")  # lab/lab.sh
NS = "{http://www.w3.org/1999/xhtml}"


def render(tmp, xlsx):
    """Page 1 of xlsx as LibreOffice prints it: [(text, x0, y0, x1, y1)]."""
    profile = "file://" + os.path.join(tmp, "lo-profile")  # its own, not ~'s
    p = subprocess.run(["soffice", "-env:UserInstallation=" + profile,
                        "--headless", "--convert-to", "pdf", "--outdir", tmp,
                        xlsx], capture_output=True, text=True, timeout=180)
    pdf = os.path.join(tmp, os.path.basename(xlsx)[:-5] + ".pdf")
    if p.returncode != 0 or not os.path.exists(pdf):
        raise AssertionError("soffice did not render %s: %s" % (xlsx, p.stderr))
    html = pdf[:-4] + ".html"
    subprocess.run(["pdftotext", "-f", "1", "-l", "1", "-bbox-layout", pdf,
                    html], check=True, timeout=60)
    words = []
    for w in ET.parse(html).iter(NS + "word"):
        words.append((w.text or "", float(w.get("xMin")), float(w.get("yMin")),
                      float(w.get("xMax")), float(w.get("yMax"))))
    return words


def overlaps(a, b, eps=0.5):
    return (a[1] < b[3] - eps and b[1] < a[3] - eps and
            a[2] < b[4] - eps and b[2] < a[4] - eps)


def cover(words):
    """The words above the test table's header (its first cell, "ID")."""
    top = min((w[2] for w in words if w[0] == "ID"), default=None)
    assert top is not None, "no test table on page 1: %s" % words[:20]
    return [w for w in words if w[4] <= top]


class Render(Tmp):
    def workbook(self):
        site = self.write("site.yaml", 'site:\n  name: lab\n  stamp: "%s"\n'
                          % LAB_STAMP)
        out = self.path("lab.xlsx")
        p = strata("run", SPEC, "--site", site, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        return out

    def clashes(self, words):
        ws = cover(words)
        return [(a[0], b[0]) for i, a in enumerate(ws) for b in ws[i + 1:]
                if overlaps(a, b)]

    def test_stamp_clear_of_title_rows(self):
        words = render(self.dir, self.workbook())
        self.assertEqual(self.clashes(words), [], "words drawn over others")
        stamp = LAB_STAMP.split()
        texts = [w[0] for w in words]
        i = next(k for k in range(len(texts)) if texts[k:k + len(stamp)] == stamp)
        box = words[i:i + len(stamp)]
        title = next(w for w in words if w[0] == "validation")
        verdict = next(w for w in words if w[0] == "PASS")
        self.assertLess(title[4], min(w[2] for w in box), "stamp below the title")
        self.assertLess(max(w[4] for w in box), verdict[2],
                        "stamp above the verdict")

    def test_old_layout_is_caught(self):
        # the layout LibreOffice drew badly: the stamp wrapped in A3 alone,
        # row 3 at the default height
        path = self.workbook()
        wb = openpyxl.load_workbook(path)
        ws = wb["Summary"]
        for rng in list(ws.merged_cells.ranges):
            if str(rng).startswith("A3:"):
                ws.unmerge_cells(str(rng))
        ws.row_dimensions[3].height = None
        old = self.path("old.xlsx")
        wb.save(old)
        self.assertNotEqual(self.clashes(render(self.dir, old)), [],
                            "the old layout rendered without an overlap")


if __name__ == "__main__":
    if not (shutil.which("soffice") and shutil.which("pdftotext")):
        print("SKIP: soffice or pdftotext not installed (libreoffice-calc, "
              "poppler-utils; not in .ci/packages)")
        sys.exit(77)
    unittest.main()
