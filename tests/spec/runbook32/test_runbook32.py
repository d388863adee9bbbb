#!/usr/bin/python3
"""ctest spec_runbook32 (label spec): RUNBOOK section 32's PASS/FAIL policy
written by a site in a thresholds file of its own (theirs.yaml: the
end-to-end OR over a chosen subset of KPIs, a drop tolerance band, a TCP
fallback limit, latency stability) loads with `strata check --criteria`
and judges the shipped T1T4 spec with no spec edit; switching one KPI off
- by editing the file, or with --set - flips T1T4's verdict, with no
rebuild.  The rows T1T4 compares are the recorded fixture rows of
tests/s3rdma/t1t4 (the RUNBOOK's own example: +4.5 % throughput, CPU 45 %
-> 12 %), R7 a stand-in with 3 drops (r7.lua).  Outcomes are read back
from the workbook (openpyxl) and the journal.

usage: STRATA_BIN=... test_runbook32.py
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import openpyxl

STRATA = os.environ["STRATA_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SPECS = ["specs/s3rdma/T1T4.lua", "tests/s3rdma/t1t4/fixture.lua",
         "tests/s3rdma/t1t4/rdma-benefit.lua", "tests/spec/runbook32/r7.lua"]
THEIRS = os.path.join(HERE, "theirs.yaml")
WORK = tempfile.mkdtemp(prefix="strata-runbook32-")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks()
fails = check.fails


def line_of(path, needle):
    with open(path) as f:
        for i, text in enumerate(f, 1):
            if needle in text:
                return i
    raise AssertionError(needle + " not in " + path)


def sha(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run(name, thresholds, *extra):
    """strata run over the fixture rows; the Summary's statuses by ID,
    the Thresholds sheet's rows and the journal's results by ID."""
    xlsx = os.path.join(WORK, name + ".xlsx")
    p = subprocess.run([STRATA, "run"] + SPECS + ["--thresholds", thresholds,
                                                  "-o", xlsx] + list(extra),
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    if not os.path.exists(xlsx):
        print(p.stdout, p.stderr)
        return {}, [], {}
    wb = openpyxl.load_workbook(xlsx)
    status, head = {}, None
    for row in wb["Summary"].iter_rows(values_only=True):
        if row and row[0] == "ID":
            head = list(row)
        elif head and row and row[0]:
            status[row[0]] = dict(zip(head, row))
    sheet = [r for r in wb["Thresholds"].iter_rows(values_only=True)]
    res = {}
    with open(xlsx[:-5] + ".jsonl") as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "result":
                res[r["id"]] = r
    return status, sheet, res


def benefit(rec):
    for c in rec.get("checks", []):
        if c.get("criterion") == "benefit" and c.get("op") == "any_of":
            return c
    return {}


before = {p: sha(p) for p in SPECS[:1]}

# 1. the site's file loads and reads back as written, each line its own
th = os.path.relpath(THEIRS, ROOT)
p = subprocess.run([STRATA, "check", "--criteria", "--thresholds", th]
                   + SPECS, cwd=ROOT, capture_output=True, text=True,
                   timeout=60)
rows = [re.split(r"\s{2,}", l.rstrip()) for l in p.stdout.splitlines()[1:]
        if not l.startswith("ok: ")]
got = {(r[0], r[1], r[3]): r for r in rows if len(r) == 7}


def src(needle):
    return "%s:%d" % (th, line_of(THEIRS, needle))


check(p.returncode == 0, "strata check --criteria loads theirs.yaml (exit %d)"
      % p.returncode)
g = got.get(("T1T4", "benefit", "FAIL"), [])
check(g[2:5] == ["any of", "FAIL", "one of the 2 below"] and
      g[6] == src("benefit:"), "the E2E OR over 2 chosen KPIs: %s" % g)
check(got.get(("T1T4", "benefit: host.cpu_reduction_pct", "FAIL"), [])[4:7]
      == ["20", "20", src("host.cpu_reduction_pct")], "the CPU KPI, its line")
check(got.get(("R7", "drops", "WARN"), [])[4:] == ["0", "0", src("drops:")]
      and got.get(("R7", "drops", "FAIL"), [])[4] == "10",
      "the drop band: FAIL past 10, WARN past 0")
check(got.get(("B04", "get.fallback_requests", "FAIL"), [])[4] == "5" and
      ("B04", "get.fallback_requests", "WARN") in got, "the fallback limit")
check(got.get(("B04", "get.lat_p99_ms", "FAIL"), [])[4] ==
      "2 x get.lat_p50_ms", "latency stable: p99 within 2 x p50")

# 2. as written: T1T4 PASSes on CPU alone, R7 WARNs (3 drops, tolerated)
status, sheet, res = run("theirs", th)
st = {k: v.get("Status") for k, v in status.items()}
check(st.get("T1T4") == "PASS" and st.get("R7") == "WARN" and
      st.get("B04") == "PASS", "Summary: T1T4 PASS, R7 WARN, B04 PASS (%s)"
      % st)
bf = benefit(res.get("T1T4", {}))
check(bf.get("held") == ["host.cpu_reduction_pct"] and
      str(bf.get("source")).endswith(src("benefit:")),
      "the check says the CPU KPI held: %s" % bf.get("text"))
check("past the warn limit" in str(status.get("R7", {}).get("Reason")),
      "R7's reason names the band: %s" % status.get("R7", {}).get("Reason"))
listed = [r for r in sheet if r and r[0] == "T1T4"]
check(len(listed) == 3 and all(str(r[5]).endswith("theirs.yaml:%d" % n)
                               for r, n in zip(listed, [
                                   line_of(THEIRS, "benefit:"),
                                   line_of(THEIRS, "host.throughput_ratio"),
                                   line_of(THEIRS, "host.cpu_reduction_pct")])),
      "the Thresholds sheet lists the group and its members with file:line")

# 3. the site decides CPU does not matter: deletes the line, no rebuild
edited = os.path.join(WORK, "theirs.yaml")
with open(THEIRS) as f, open(edited, "w") as out:
    out.writelines(l for l in f if "host.cpu_reduction_pct" not in l)
status, sheet, res = run("no-cpu", edited)
bf = benefit(res.get("T1T4", {}))
check(status.get("T1T4", {}).get("Status") == "FAIL" and not bf.get("held")
      and len(bf.get("members", [])) == 1,
      "CPU KPI deleted from the file: T1T4 FAIL (%s)" % bf.get("text"))
# ... or switches it off for one run
status, _, _ = run("set-off", th,
                   "--set", "T1T4.benefit.host.cpu_reduction_pct.min=none")
check(status.get("T1T4", {}).get("Status") == "FAIL",
      "CPU KPI off with --set: T1T4 FAIL")

# 4. the bands move with the file: 3 drops past a tolerance of 2 FAIL;
# a stricter stability rule (p99 97 > 1.5 x p50 58) FAILs B04 and T1T4,
# which needs it, is BLOCKED
status, _, _ = run("tight", th, "--set", "R7.drops.max=2",
                   "--set", "B04.get.lat_p99_ms.max=1.5 * get.lat_p50_ms")
st = {k: v.get("Status") for k, v in status.items()}
check(st.get("R7") == "FAIL" and st.get("B04") == "FAIL" and
      st.get("T1T4") == "BLOCKED",
      "drops past the tolerance FAIL; p99 unstable FAILs B04, T1T4 BLOCKED "
      "(%s)" % st)

check({p: sha(p) for p in SPECS[:1]} == before, "no spec was edited")
shutil.rmtree(WORK, ignore_errors=True)
if fails:
    print("%d failure(s)" % len(fails))
    sys.exit(1)
print("runbook32: RUNBOOK s.32 as a site's own thresholds file: all checks passed")
