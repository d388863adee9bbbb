#!/bin/sh
# guest_ctest.sh BUILD - the s3rdma guest test as ctest runs it: guest.sh
# in one Soft-RoCE guest, then the workbook the specs wrote there read
# back on the host with openpyxl (Summary: host-memory rows PASS, GPU
# rows SKIP with a reason).
set -u
B=$1; here=$(cd "$(dirname "$0")" && pwd)
out="$B/s3rdma-guest-out"
rm -rf "$out"
"$here/../rxe/run-in-guest" --timeout 240 --build "$B" --out "$out" \
  "$here/guest.sh" || exit $?
/usr/bin/python3 - "$out/single/specs.xlsx" <<'PY'
import sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1], read_only=True)
rows = {}
for r in wb["Summary"].iter_rows(values_only=True):
    if r and r[0] and r[1] == "s3rdma":
        rows[r[0]] = r
bad = []
for i in ("E3", "B02", "B04", "B11", "B13", "B15"):
    if not rows.get(i) or rows[i][2] != "PASS":
        bad.append("%s not PASS in the workbook: %r" % (i, rows.get(i)))
for i in ("E4", "B06", "B07", "B08", "B09"):
    r = rows.get(i)
    if not r or r[2] != "SKIP" or not any(isinstance(c, str) and
            ("CUDA" in c or "RDMA" in c) for c in r[4:]):
        bad.append("%s not SKIP with a reason: %r" % (i, r))
print("\n".join(bad) or "workbook: host rows PASS, GPU rows SKIP with a reason")
sys.exit(1 if bad else 0)
PY
