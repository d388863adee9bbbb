#!/usr/bin/python3
"""tests/report/bulk_check.py OUTDIR: read back OUTDIR/bulk.xlsx (written by
bulk.lua) with openpyxl: the sheet written one ws:put per cell and the one
written by ws:put_rows hold the same cells (value, number format, bold,
font and fill colours, wrap), the same column widths and row heights, and
the cells the rule says (cleaned texts, blanks for NaN and tables)."""
import sys
import openpyxl

wb = openpyxl.load_workbook(sys.argv[1] + "/bulk.xlsx")
a, b = wb["put"], wb["rows"]
bad = []


def key(c):
    return (c.value, c.number_format, c.font.b, c.font.color and c.font.color.rgb,
            c.fill.fgColor.rgb, c.alignment.wrap_text)


n = 0
for ra, rb in zip(a.iter_rows(min_row=1, max_row=8, max_col=8),
                  b.iter_rows(min_row=1, max_row=8, max_col=8)):
    for ca, cb in zip(ra, rb):
        n += 1
        if key(ca) != key(cb):
            bad.append("%s: put %r, put_rows %r" % (ca.coordinate, key(ca), key(cb)))
for k in "ABCDEFGH":
    if a.column_dimensions[k].width != b.column_dimensions[k].width:
        bad.append("width of %s: %r / %r" % (k, a.column_dimensions[k].width,
                                               b.column_dimensions[k].width))
for r in range(1, 9):
    if a.row_dimensions[r].height != b.row_dimensions[r].height:
        bad.append("height of row %d" % r)
# what the rule says, on the put_rows sheet (rows from 3, columns from A)
want = {"A3": "PASS", "B4": -1234567, "C4": None, "D4": "bad ? byte",
        "E3": True, "E4": False, "F4": None, "D6": None, "C5": None}
for cell, v in want.items():
    if b[cell].value != v:
        bad.append("%s = %r, want %r" % (cell, b[cell].value, v))
d5 = b["D5"].value or ""
if len(d5) != 32766 or not d5.endswith("\u2026"):
    bad.append("D5: the long text not cut to 32765 characters + an ellipsis (%d)" % len(d5))
if b["A4"].fill.fgColor.rgb != a["A4"].fill.fgColor.rgb or b["A4"].font.b is not True:
    bad.append("A4: FAIL not in its status format")
if b["C4"].fill.fgColor.rgb in (None, "00000000"):
    bad.append("C4: the red cell (cells[2]) lost its fill")
if n < 64:
    bad.append("only %d cells compared" % n)
for line in bad:
    print("FAIL:", line)
print("bulk_check: %d cells, %s" % (n, "%d failure(s)" % len(bad) if bad else "ok"))
sys.exit(1 if bad else 0)
