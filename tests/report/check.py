#!/usr/bin/python3
"""tests/report/check.py OUTDIR: read back what tests/report/write.lua wrote
from fixtures/report/model.lua: the workbook with openpyxl, the JUnit XML
with xml.etree, the JSON with json.  Run with /usr/bin/python3 (Debian's
python3-openpyxl)."""
import json
import os
import sys
import xml.etree.ElementTree as ET

import openpyxl

OUT = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks(quiet=True)
failures = check.fails


def rgb(cell):
    return (cell.fill.fgColor.rgb or "")[-6:].upper() \
        if cell.fill and cell.fill.fill_type == "solid" else None


def find(ws, value, col=None):
    for row in ws.iter_rows():
        for c in row:
            if c.value == value and (col is None or c.column == col):
                return c
    return None


STATUS_FILL = {"PASS": "C6EFCE", "FAIL": "FFC7CE", "ERROR": "8B0000",
               "BLOCKED": "F4B183", "SKIP": "D9D9D9", "INCOMPLETE": "FFEB9C",
               "STOPPED": "FFEB9C", "NOT RUN": "FFFFFF"}

# --- workbook --------------------------------------------------------------
wb = openpyxl.load_workbook(OUT + "/book.xlsx")
S1_NAME = 'S1 S3 GET throughput <warp>'
check(wb.sheetnames == ["Summary", "R1 RDMA device up",
                        "R2 Host RDMA write bandwidth",
                        "R3 Host RDMA latency", S1_NAME, "Metrics",
                        "Counters", "Counter charts", "Counter series",
                        "Thresholds", "Inventory", "Run"],
      "sheet names: %r" % wb.sheetnames)
for name in wb.sheetnames:
    check(len(name) <= 31 and not any(ch in name for ch in "[]:*?/\\"),
          "valid sheet name %r" % name)

for ws in wb.worksheets:
    check(ws.freeze_panes is not None, "%s freezes its header" % ws.title)
s = wb["Summary"]
check(s["A1"].value == "strata validation report", "title")
check(s["A4"].value == "FAIL" and rgb(s["A4"]) == "C00000",
      "verdict FAIL on red: %r %r" % (s["A4"].value, rgb(s["A4"])))
check("A4:C4" in [str(r) for r in s.merged_cells.ranges], "verdict merged")
check(s["D4"].value == "Lowest failed rung: verbs (R2 FAIL) \u2014 results "
      "above it are not trusted", "lowest failed rung: %r" % s["D4"].value)
counts = {}
for r in range(6, 15):
    counts[s.cell(r, 1).value] = s.cell(r, 2).value
check(counts == {"PASS": 3, "FAIL": 1, "ERROR": 1, "BLOCKED": 1, "SKIP": 2,
                 "INCOMPLETE": 0, "STOPPED": 0, "NOT RUN": 0, "Total": 8},
      "counts %r" % counts)
for r in range(6, 14):
    c = s.cell(r, 1)
    check(rgb(c) == STATUS_FILL.get(c.value), "count label %r" % c.value)
hdr = find(s, "ID", col=1)
check(hdr is not None, "Summary header row")
hr = hdr.row
header = [c.value for c in s[hr]][:11]
check(header == ["ID", "Layer", "Status", "Title", "Measured", "Value",
                 "Criterion", "Reason", "Cells", "Time (s)", "Details"],
      "Summary header %r" % header)
check(s.freeze_panes == "A%d" % (hr + 1), "Summary frozen under the header:"
      " %r" % s.freeze_panes)
check(s.auto_filter.ref == "A%d:K%d" % (hr, hr + 8),
      "Summary autofilter %r" % s.auto_filter.ref)
want = [("H1", "PASS"), ("G1", "SKIP"), ("R1", "PASS"), ("R2", "FAIL"),
        ("R3", "ERROR"), ("GR1", "BLOCKED"), ("S1", "PASS"), ("N1", "SKIP")]
rows = {}
for i, (tid, st) in enumerate(want):
    r = hr + 1 + i
    rows[tid] = r
    check(s.cell(r, 1).value == tid, "row %d id %r" % (r, s.cell(r, 1).value))
    c = s.cell(r, 3)
    check(c.value == st and rgb(c) == STATUS_FILL[st],
          "%s status %r fill %r" % (tid, c.value, rgb(c)))
v = s.cell(rows["R2"], 6).value
check(isinstance(v, float) and abs(v - 50.44) < 1e-9,
      "R2 value is the number 50.44: %r" % v)
check(s.cell(rows["R2"], 9).value == 8 and
      isinstance(s.cell(rows["R2"], 10).value, float), "cells, time numbers")
check(s.cell(rows["G1"], 6).value is None, "no value for a SKIP")
check("libcuda" in s.cell(rows["G1"], 8).value, "SKIP reason shown")
link = s.cell(rows["R2"], 11).hyperlink
check(link is not None and "R2 Host RDMA write bandwidth" in
      (link.location or link.target or ""), "R2 details link %r" % link)
check(s.cell(rows["H1"], 11).hyperlink is None, "no link without a sheet")

# R1: a single cell -> one row per metric
r1 = wb["R1 RDMA device up"]
mh = find(r1, "Metric")
check(mh is not None and [r1.cell(mh.row, mh.column + j).value
                          for j in range(4)] ==
      ["Metric", "Value", "Unit", "Check"], "R1 vertical metrics header")
got = {r1.cell(r, 1).value: r1.cell(r, 2).value
       for r in range(mh.row + 1, mh.row + 4)}
check(got == {"active_mtu": 4096, "link_width": 4, "port_state": "ACTIVE"},
      "R1 metrics %r" % got)
chk = r1.cell(mh.row + 3, 4).value
check(chk == "ok: port_state = ACTIVE", "R1 check text %r" % chk)
check(find(r1, "Ports") is not None and find(r1, "mlx5_1") is not None,
      "R1 emitted table")
check(s.column_dimensions["G"].width >= 40, "criterion column is wide")
check(s.cell(rows["R2"], 7).alignment.wrap_text, "criterion wraps")

# R2: the matrix sheet
r2 = wb["R2 Host RDMA write bandwidth"]
h = find(r2, "bw_gbps (Gbit/s)")
check(h is not None, "R2 metric header with unit")
col = h.column
vals = [r2.cell(h.row + i, col).value for i in range(1, 9)]
check(vals == [50.44, 51.74, 85.36, 87.56, 96.1, 98.58, 96.88, 99.38],
      "R2 bw column %r" % vals)
check(all(isinstance(x, float) for x in vals), "R2 numbers stored as numbers")
check(rgb(r2.cell(h.row + 1, col)) == "FFC7CE", "failed bw cell is red")
check(rgb(r2.cell(h.row + 5, col)) is None, "passing bw cell not coloured")
mr = find(r2, "msg_rate_mpps")
check(mr is not None and r2.cell(mr.row + 1, mr.column).value is None and
      isinstance(r2.cell(mr.row + 2, mr.column).value, float),
      "NaN metric written as an empty cell")
sizes = [r2.cell(h.row + i, 1).value for i in range(1, 9)]
check(sizes[0] == 4096 and isinstance(sizes[0], int), "params as numbers")
check(r2.auto_filter.ref and r2.auto_filter.ref.startswith("A%d" % h.row),
      "R2 cells autofilter %r" % r2.auto_filter.ref)
piv = find(r2, "size \\ qps")
check(piv is not None, "R2 pivot grid")
if piv:
    cols = [r2.cell(piv.row, piv.column + j).value for j in range(3)]
    check(cols == ["size \\ qps", "qps=1", "qps=4"], "pivot header %r" % cols)
    grid = [[r2.cell(piv.row + i, piv.column + j).value for j in range(3)]
            for i in range(1, 5)]
    check(grid == [[4096, 50.44, 51.74], [65536, 85.36, 87.56],
                   [1048576, 96.1, 98.58], [8388608, 96.88, 99.38]],
          "pivot grid %r" % grid)
charts = r2._charts
check(len(charts) == 2, "R2 has the pivot chart and the table chart: %d"
      % len(charts))
if charts:
    c = charts[0]
    check(type(c).__name__ == "ScatterChart" and len(c.series) == 2,
          "pivot chart: scatter, one series per qps")
    check(c.x_axis.scaling.logBase == 10, "log x axis for sizes spanning "
          "decades")
check(find(r2, "Latency histogram [size=8388608,qps=4]") is not None,
      "emitted table heading")
check(find(r2, "[size=4096,qps=1] ib_write_bw reported msg_rate as nan "
           "for this cell") is not None, "notes")

r3 = wb["R3 Host RDMA latency"]
err = find(r3, "ERROR")
check(err is not None and rgb(err) == STATUS_FILL["ERROR"], "R3 ERROR cell")
check(find(r3, "ib_write_lat: peer 10.0.0.2, step connect: timed out "
           "after 10 s") is not None, "R3 error reason in the cells table")

s1 = wb[S1_NAME]
check(len(s1._charts) == 2, "S1: pivot chart + throughput chart")
check(find(s1, "Errors by kind [object_size=67108864,concurrency=32]")
      is not None, "S1 second emitted table")
tt = find(s1, "t_s")
check(tt is not None and s1.cell(tt.row + 4, tt.column + 2).value is None,
      "NaN in an emitted table is empty")

# Metrics, Counters
m = wb["Metrics"]
check(m.freeze_panes == "A5" and m.auto_filter.ref.startswith("A4"),
      "Metrics frozen and filtered")
n_num = sum(1 for row in m.iter_rows(min_row=5, min_col=5, max_col=5)
            if isinstance(row[0].value, (int, float)))
check(n_num > 40, "Metrics values are numbers (%d)" % n_num)
check(not any(str(row[0].value).startswith("delta.")
              for row in m.iter_rows(min_row=5, min_col=4, max_col=4)),
      "no delta.* on Metrics")
# FAIL marks only the metric whose check failed (R2's small cells: bw_gbps)
fails = [(r[0], r[2], r[3]) for r in m.iter_rows(min_row=5, values_only=True)
         if r[6] == "FAIL"]
check(fails and all(f[:1] == ("R2",) and f[2] == "bw_gbps" for f in fails),
      "Metrics FAIL only on failed checks: %r" % fails)
r2small = {r[3]: r[6] for r in m.iter_rows(min_row=5, values_only=True)
           if r[0] == "R2" and r[2] == "size=4096,qps=1"}
check(r2small.get("iterations") is None and r2small.get("bw_gbps") == "FAIL",
      "a failed cell's other metrics are not marked: %r" % r2small)

cn = wb["Counters"]
cc = wb["Counter charts"]
cs = wb["Counter series"]
check(len(cc._charts) == 2, "Counter charts: one chart per sampled test")
nser = sorted(len(c.series) for c in cc._charts)
check(nser == [2, 8], "charted series: R1 2, R2 capped at 8: %r" % nser)
refs = {s.val.numRef.f.split("!")[0] if s.val else
        s.yVal.numRef.f.split("!")[0] for c in cc._charts for s in c.series}
check(refs == {"'Counter series'"}, "charts read the data sheet: %r" % refs)
check(cs.sheet_state == "hidden", "the data sheet is hidden (not printed)")
# the delta pivot: one row per series, one column per test
hdr = [c.value for c in cn[4]]
check(hdr[:3] == ["Counter", "R1", "R2"], "Counters pivot header %r" % hdr)
piv = {r[0]: r[1:3] for r in cn.iter_rows(min_row=5, values_only=True)}
check(piv.get("rdma.mlx5_0.1.link_downed") == (0, None),
      "R1 link_downed delta %r" % (piv.get("rdma.mlx5_0.1.link_downed"),))
# R2: the 8 cells' deltas summed (size * 5000 / 4 each, qps 1 and 4)
want = sum(sz * 5000 // 4 * 2 for sz in (4096, 65536, 1048576, 8388608))
check(piv.get("rdma.mlx5_0.1.port_xmit_data") == (None, want),
      "R2 xmit delta %r" % (piv.get("rdma.mlx5_0.1.port_xmit_data"),))
check(cn.freeze_panes == "B5", "Counters frozen: %r" % cn.freeze_panes)
check(cn.print_title_rows in ("4:4", "$4:$4"), "Counters header repeats: %r"
      % cn.print_title_rows)
check(cn.page_setup.orientation == "landscape" and
      cn.sheet_properties.pageSetUpPr.fitToPage, "Counters printable")
ser = find(cs, "rdma.mlx5_0.1.link_downed", col=3)
check(ser is not None, "R1 series table column")
hdr = [c.value for c in cs[find(cs, "t (s)").row]]
check(len([x for x in hdr if x and x.startswith(("cpu.", "rdma.", "net."))])
      in (2, 11), "series columns")

# Thresholds, Inventory, Run
th = wb["Thresholds"]
srcs = [row[0].value for row in th.iter_rows(min_row=5, min_col=6,
                                             max_col=6)]
check(srcs == ["thresholds.yaml:4", "thresholds.yaml:8",
               "thresholds.yaml:12", "thresholds.yaml:14",
               "thresholds.yaml:20", "--set S1.get_gbps.min=1"],
      "threshold sources %r" % srcs)
check(th.freeze_panes == "A5", "Thresholds frozen")
check(find(th, "0.9 * site.rdma.line_rate_gbps") is not None,
      "threshold expression")

inv = wb["Inventory"]
check(find(inv, "AMD EPYC 9454 48-Core Processor") is not None, "cpu model")
pa = find(inv, "addr")
check(pa is not None and inv.cell(pa.row + 1, pa.column).value ==
      "0000:17:00.0", "PCI table")
check(find(inv, "mlx5_ib, ib_uverbs, nvidia_peermem") is not None,
      "list of scalars inline")
check(find(inv, "libxlsxwriter") is not None, "library versions")

run = wb["Run"]
cmd = find(run, "Command line")
check(cmd is not None and "--set S1.get_gbps.min=1" in
      run.cell(cmd.row, 2).value, "command line")
intr = find(run, "Interrupted")
check(intr is not None and run.cell(intr.row, 2).value is False,
      "interrupted flag as a boolean")
check(find(run, "ab" * 32) is not None, "file checksum")

# Every part of every workbook is well-formed XML (bad XML is what makes
# Excel offer to repair a file).
import zipfile
for name in ("book.xlsx", "evil.xlsx", "empty.xlsx", "odd.xlsx"):
    with zipfile.ZipFile(OUT + "/" + name) as z:
        check(z.testzip() is None, name + " zip CRCs")
        for part in z.namelist():
            if part.endswith((".xml", ".rels")):
                try:
                    ET.fromstring(z.read(part))
                except ET.ParseError as e:
                    check(False, "%s:%s: %s" % (name, part, e))
        parts = z.namelist()
        if name == "book.xlsx":
            check(sum(p.startswith("xl/charts/chart") for p in parts) == 6,
                  "6 charts: R2 2, S1 2, Counters 2")

odd = openpyxl.load_workbook(OUT + "/odd.xlsx")
x1 = [n for n in odd.sheetnames if n.startswith("X1")]
check(x1 and len(odd[x1[0]]._charts) == 1 and
      type(odd[x1[0]]._charts[0]).__name__ == "BarChart",
      "string parameter -> column chart over categories")
check(find(odd[x1[0]], "Chart not drawn: its x/y column numbers do not match "
           "the table's columns.") is not None, "bad chart spec noted")
check(odd["Summary"]["D4"].value == "The run was interrupted: results are "
      "incomplete.", "interrupted run: %r" % odd["Summary"]["D4"].value)
oc = odd["Counter series"]
note = find(oc, "One sample in 3 shown (12001 in all); run.json has them all.")
check(note is not None, "long series thinned, with a note")
tcol = find(oc, "t (s)")
n = 0
for row in oc.iter_rows(min_row=tcol.row + 1, min_col=2, max_col=2):
    if isinstance(row[0].value, (int, float)):
        n += 1
check(n == 4001 and oc.max_row < 4100, "thinned rows: %d" % n)
r = ET.parse(OUT + "/odd.xml").getroot()
check([s.get("name") for s in r.findall("testsuite")] == ["s3", "odd-layer"],
      "unknown layer gets its own suite, last")

for extra in ("evil.xlsx", "empty.xlsx"):
    w = openpyxl.load_workbook(OUT + "/" + extra)
    check(w.sheetnames[0] == "Summary", extra + " opens")
ev = openpyxl.load_workbook(OUT + "/evil.xlsx")["Summary"]
t = ev.cell(rows["H1"], 4).value
check(t.startswith("bad ? utf8 _x0001_ ctl <x>") and len(t) < 32800
      and t.endswith("\u2026"),
      "hostile text cleaned and cut: %r" % t[:30])

# --- JUnit ------------------------------------------------------------------
root = ET.parse(OUT + "/run.xml").getroot()
check(root.tag == "testsuites", "junit root")
a = root.attrib
check((a["tests"], a["failures"], a["errors"], a["skipped"]) ==
      ("24", "4", "1", "3"), "junit totals %r" % a)
suites = root.findall("testsuite")
check([x.get("name") for x in suites] == ["host", "gpu", "verbs", "gpu-rdma",
                                          "nccl", "s3"],
      "suites in ladder order %r" % [x.get("name") for x in suites])
tot = {k: sum(int(x.get(k)) for x in suites)
       for k in ("tests", "failures", "errors", "skipped")}
check(tot == {"tests": 24, "failures": 4, "errors": 1, "skipped": 3},
      "suite sums %r" % tot)
cases = {c.get("name"): c for c in root.iter("testcase")}
f = cases["R2[size=4096,qps=1]"].find("failure")
check(f is not None and "50.44" in f.get("message") and
      "specs/thresholds.yaml:12" in f.text, "R2 failure with its check")
check(cases["R2[size=4096,qps=1]"].get("classname") == "verbs.R2" and
      cases["R2[size=4096,qps=1]"].get("time") == "4.300", "classname, time")
check(cases["R2[size=1048576,qps=1]"].find("failure") is None, "R2 pass cell")
e = cases["R3[size=4096]"].find("error")
check(e is not None and "peer 10.0.0.2" in e.get("message"), "R3 error")
b = cases["GR1"].find("skipped")
check(b is not None and b.get("message") == "BLOCKED: needs R2, which is FAIL",
      "BLOCKED as skipped")
check(cases["G1"].find("skipped").get("message") ==
      "no NVIDIA driver: libcuda.so.1 not found", "SKIP reason")
out = cases["S1[object_size=1048576,concurrency=1]"].find("system-out").text
check(out.startswith('S3 GET throughput <warp> & "friends"'), "XML escaping")
for extra in ("evil.xml", "empty.xml"):
    r = ET.parse(OUT + "/" + extra).getroot()
    check(r.tag == "testsuites", extra + " parses")

# --- JSON -------------------------------------------------------------------
doc = json.load(open(OUT + "/run.json"))
check(doc["format"] == "strata-report" and doc["verdict"] == "FAIL", "json")
res = [r for r in doc["results"] if r["id"] == "R2"]
check([r["metrics"]["bw_gbps"] for r in res] == vals, "json values")
check(res[0]["metrics"]["msg_rate_mpps"] is None, "json NaN -> null")
check(res[0]["cell"] == {"size": 4096, "qps": 1}, "json cell")
check(doc["counts"]["SKIP"] == 2 and doc["lowest_failed"]["id"] == "R2",
      "json counts, lowest failed")
check(doc["results"][0]["params"] == [] and doc["inventory"]["empty"] == {},
      "json empty list vs empty map")
text = open(OUT + "/run.json").read()
check(text == json.dumps(json.loads(text), indent=2, sort_keys=True,
                         ensure_ascii=False) + "\n" or
      text.index('"counts"') < text.index('"verdict"'), "json sorted keys")
ev = json.load(open(OUT + "/evil.json"))
check(ev["tests"][0]["title"].startswith("bad ? utf8 \u0001"),
      "json hostile strings")
check(json.load(open(OUT + "/empty.json"))["tests"] == [], "json empty")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("report readback: all checks passed")
