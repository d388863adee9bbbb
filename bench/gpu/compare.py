#!/usr/bin/env python3
"""Ratio table of strata vs PyTorch copies from the two benches' JSON
lines.  ratio = strata / max(strata, torch): the target is >= 0.95.
usage: compare.py RESULTS.jsonl > table.md"""
import json
import sys

rows = {}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    rows.setdefault((r["dir"], r["size"]), {})[r["tool"]] = r


def human(n):
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f and n % f == 0:
            return "%d %s" % (n // f, unit)
    return str(n)


print("| dir | size | strata GB/s | torch GB/s | strata / best | verified |")
print("|---|---|---|---|---|---|")
worst = None
for (d, n) in sorted(rows, key=lambda k: ("h2d d2h d2d".split().index(k[0]),
                                          k[1])):
    r = rows[(d, n)]
    s, t = r.get("strata"), r.get("torch")
    if not s or not t:
        continue
    ratio = s["gbps"] / max(s["gbps"], t["gbps"])
    worst = ratio if worst is None else min(worst, ratio)
    print("| %s | %s | %.2f | %.2f | %.3f | %s/%s |" % (
        d, human(n), s["gbps"], t["gbps"], ratio,
        "y" if s["verified"] else "n", "y" if t["verified"] else "n"))
print()
print("worst ratio: %s (target >= 0.95)" %
      ("%.3f" % worst if worst is not None else "n/a"))
