#!/usr/bin/python3
"""check.py WORKBOOK JOURNAL - the LAB workbook of `strata run --lab`
read back (openpyxl) with its journal: the Summary is stamped LAB; every
row that needs no GPU, Kubernetes, NCCL or vLLM is PASS or FAIL with
measured metrics (zero SKIP among them, E2 PASS on inter-node RDMA with
its witness); those rows SKIP with a reason
that names what is missing; nothing ERRORs or is BLOCKED; scaled rows
name their cuts.  Prints the verdict table."""
import json
import re
import os
import sys

import openpyxl

xlsx, jsonl = sys.argv[1], sys.argv[2]
STAMP = ("LAB: emulated Soft-RoCE under TCG and a one-node RGW: the figures "
         "prove the method, not this hardware")
# every shipped row the lab can run: host, verbs, RoCE, S3/TCP, S3/RDMA,
# AIStor's inter-node RDMA (E2: the reference server on guest b as the
# primary of a two-node pair, its peer on s1) and the storage rung on
# guest a's emulated NVMe (S6 needs a GPU)
RUNNABLE = ["H1", "H2", "H3", "R1", "B02-wire", "B04-wire", "R2", "R3", "R6",
            "R7", "E1", "E1T", "E2", "B01", "B03", "B10", "B12", "B14", "MIX",
            "E3P", "E3", "B02", "B04", "T1T4", "B11", "B13", "B15",
            "S1", "S2", "S3", "S4", "S5", "S7"]
GAPS = []
# rows that SKIP on the lab's site by design, and the reason they give:
# H4 compares with a golden configuration the lab's site file does not hold
BY_SITE = {"H4": "no golden configuration in the site file"}
NEEDS = re.compile(r"cuda|nvidia|gpu|kubernetes|k8s|nccl|vllm", re.I)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks()
fails = check.fails


wb = openpyxl.load_workbook(xlsx, read_only=True)
rows = list(wb["Summary"].iter_rows(values_only=True))
check(any(r and r[0] == STAMP for r in rows[:4]), "Summary stamped LAB")
status, reason = {}, {}
for r in rows:
    if r and isinstance(r[0], str) and len(r) > 7 and r[2] in (
            "PASS", "FAIL", "SKIP", "ERROR", "BLOCKED"):
        status[r[0]], reason[r[0]] = r[2], r[7] or ""
recs = [json.loads(l) for l in open(jsonl) if l.strip()]
cells = {}
for r in recs:
    if r["type"] == "result":
        cells.setdefault(r["id"], []).append(r)

print("%-9s %-8s %s" % ("ID", "STATUS", "REASON"))
for tid in status:
    print("%-9s %-8s %s" % (tid, status[tid], reason[tid][:90]))
for tid in RUNNABLE:
    check(status.get(tid) in ("PASS", "FAIL"),
          "%s ran and was judged (%s)" % (tid, status.get(tid)))
    measured = [c for c in cells.get(tid, []) if c.get("metrics")]
    check(len(measured) == len(cells.get(tid, [])) and measured,
          "%s: every cell measured" % tid)
# E2 on real inter-node traffic: PASS, bytes over RDMA, and the peer's
# own count (the witness) equal to what the primary says it RDMA-wrote
e2 = cells.get("E2", [{}])[0].get("metrics", {})
check(status.get("E2") == "PASS" and (e2.get("rdma_write_bytes") or 0) > 0,
      "E2 PASS with inter-node RDMA bytes (%s, rdma_write_bytes %s)"
      % (status.get("E2"), e2.get("rdma_write_bytes")))
check(e2.get("witness_recv_bytes") == e2.get("rdma_write_bytes"),
      "E2: the peer verified exactly the RDMA-written bytes (witness %s)"
      % e2.get("witness_recv_bytes"))
check(e2.get("rdma_errors") == 0 and e2.get("pool_fallbacks") == 0,
      "E2: no inter-node errors, no pool fallbacks")
for tid in GAPS:
    if tid in status:
        print("GAP  %s %s: %s" % (tid, status[tid], reason[tid][:80]))
for tid, why in BY_SITE.items():
    check(status.get(tid) == "SKIP" and why in reason.get(tid, ""),
          "%s SKIPs: %s" % (tid, why))
for tid, s in status.items():
    if tid not in RUNNABLE and tid not in GAPS and tid not in BY_SITE:
        check(s == "SKIP" and NEEDS.search(reason[tid]) is not None,
              "%s SKIPs naming the GPU/K8s/NCCL/vLLM it needs" % tid)
check(not any(s in ("ERROR", "BLOCKED") for s in status.values()),
      "no ERROR, no BLOCKED")
b10 = cells.get("B10", [{}])[0]
check("scaled by the site (scale.max_object_mb): object size 256 MiB -> 4 MiB"
      in b10.get("notes", []), "B10 names its scaled-down size")
e1 = cells.get("E1", [])
check(len(e1) == 4 and all(any(n.startswith("scaled by the site (scale:): size")
                               for n in c["notes"]) for c in e1),
      "E1: 4 scaled cells, each naming the cut")
r6 = cells.get("R6", [{}])[0].get("metrics", {})
check(r6.get("error_total") is not None, "R6 summed real rxe counters")
e3 = cells.get("E3", [{}])[0].get("metrics", {})
check(any(k.startswith("get.") and v for k, v in e3.items()),
      "E3 moved data over RDMA")
s1 = cells.get("S1", [{}])[0].get("metrics", {})
check(s1.get("numa_nodes") == 2 and s1.get("nvme", 0) >= 2,
      "S1 saw the emulated NVMe on two NUMA nodes (%s NVMe, %s nodes)"
      % (s1.get("nvme"), s1.get("numa_nodes")))
s2 = cells.get("S2", [{}])[0].get("metrics", {})
check(any(k.startswith("disk.md") and k.endswith(".util_pct") for k in s2),
      "S2 carries the md array's disk figures")
for tid in ("S5", "S7"):
    notes = cells.get(tid, [{}])[0].get("notes", [])
    check(any("object size 1024 MiB -> 4 MiB" in n for n in notes),
          "%s names its scaled-down object size" % tid)
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)
