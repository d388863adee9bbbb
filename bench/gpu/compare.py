#!/usr/bin/env python3
"""Ratio table of strata vs PyTorch copies from the two benches' JSON
lines.  ratio = strata / torch (above 1: strata is faster); the target is
>= 0.95 at every size.  A second strata pass ("strata2", when present)
shows one tool's run-to-run spread as its own ratio to torch.
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


print("| dir | size | strata GB/s | torch GB/s | strata / torch "
      "| strata2 / torch | verified |")
print("|---|---|---|---|---|---|---|")
worst = None
for (d, n) in sorted(rows, key=lambda k: ("h2d d2h d2d".split().index(k[0]),
                                          k[1])):
    r = rows[(d, n)]
    s, t, s2 = r.get("strata"), r.get("torch"), r.get("strata2")
    if not s or not t:
        continue
    ratio = s["gbps"] / t["gbps"]
    worst = ratio if worst is None else min(worst, ratio)
    print("| %s | %s | %.2f | %.2f | %.3f | %s | %s/%s |" % (
        d, human(n), s["gbps"], t["gbps"], ratio,
        "%.3f" % (s2["gbps"] / t["gbps"]) if s2 else "-",
        "y" if s["verified"] else "n", "y" if t["verified"] else "n"))
print()
print("worst ratio: %s (target >= 0.95)" %
      ("%.3f" % worst if worst is not None else "n/a"))
