#!/usr/bin/python3
"""The Summary's cover fits its cells (issue 26, item 7): every wrapped
text above the test table has the room its row and its (merged) columns
give it, so no viewer draws it over its neighbours.  LibreOffice drew the
lab's stamp, wrapped in column A alone into a 15-point row, over the title
rows; docs/report.md ("Checked in LibreOffice") has the manual rendering
check this geometry stands in for (soffice is not in .ci/packages)."""
import math
import os
import sys
import unittest

import openpyxl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../pylib"))
from strata_test import Tmp, strata  # noqa: E402

SPEC = os.path.join(HERE, "../spec/fixtures/scaled.lua")
LAB_STAMP = ("LAB: emulated Soft-RoCE under TCG and a one-node RGW: the "
             "figures prove the method, not this hardware")  # lab/lab.sh
DEFAULT_WIDTH, DEFAULT_HEIGHT = 8.43, 15.0   # Excel's, in characters, points


def span(ws, cell):
    """(first column, last column) of the merged range holding cell."""
    for rng in ws.merged_cells.ranges:
        if cell.coordinate in rng:
            return rng.min_col, rng.max_col
    return cell.column, cell.column


def width(ws, c0, c1):
    total = 0.0
    for c in range(c0, c1 + 1):
        w = ws.column_dimensions[openpyxl.utils.get_column_letter(c)].width
        total += w or DEFAULT_WIDTH
    return total


def lines_needed(ws, cell):
    """Lines the text takes in its span: column widths count characters of
    the default 11-point font; a larger or bold font takes more room."""
    size = cell.font.sz or 11
    per_line = width(ws, *span(ws, cell)) * 11 / size / (1.1 if cell.font.b else 1)
    return math.ceil(len(str(cell.value)) / per_line)


def lines_held(ws, cell):
    height = ws.row_dimensions[cell.row].height or DEFAULT_HEIGHT
    return max(1, math.floor(height / ((cell.font.sz or 11) * 1.3)))


class Cover(Tmp):
    def summary(self, stamp):
        site = self.write("site.yaml", 'site:\n  name: lab\n  stamp: "%s"\n'
                          % stamp)
        out = self.path("r.xlsx")
        p = strata("run", SPEC, "--site", site, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        return openpyxl.load_workbook(out)["Summary"]

    def check_cover(self, ws):
        header = next(r for r in range(1, 40) if ws.cell(r, 1).value == "ID")
        checked = 0
        for row in ws.iter_rows(min_row=1, max_row=header - 1):
            for cell in row:
                if cell.value is None or not cell.alignment.wrap_text:
                    continue
                checked += 1
                self.assertLessEqual(
                    lines_needed(ws, cell), lines_held(ws, cell),
                    "%s (%r) needs more room than its row and columns give"
                    % (cell.coordinate, cell.value))
        return checked

    def test_lab_stamp(self):
        ws = self.summary(LAB_STAMP)
        self.assertEqual(ws["A3"].value, LAB_STAMP)
        self.assertIn("A3:G3", [str(r) for r in ws.merged_cells.ranges])
        self.assertGreaterEqual(self.check_cover(ws), 2)  # stamp, message

    def test_long_stamp_gets_rows(self):
        stamp = " ".join([LAB_STAMP] * 4)
        ws = self.summary(stamp)
        self.assertEqual(ws["A3"].value, stamp)
        self.assertGreaterEqual(lines_held(ws, ws["A3"]), 3)
        self.check_cover(ws)


if __name__ == "__main__":
    unittest.main()
