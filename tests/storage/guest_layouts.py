#!/usr/bin/python3
"""guest_layouts.py - the storage rung in a qemu guest (TCG, Debian's
kernel) with 8 emulated NVMe drives (qemu -device nvme) on emulated NUMA
nodes, assembled by the real mdadm + mkfs.xfs (lab/scratch.sh), the specs
run by strata in the guest (tests/storage/guest-layouts.sh):

  boot 1, 4 drives on node 0 + 4 on node 1 (split topology):
    one-array   one RAID0 of all 8      -> S1 FAIL: the array spans nodes,
                                           every member far for half the CPUs
    numa-local  RAID0 of 4 per node     -> S1 PASS; S2-S4 measured, PASS
  boot 2, all 8 drives on node 0 (uniform topology):
    one-array   one RAID0 of all 8      -> S1 PASS (the document's 8-way)

Figures are emulated NVMe under TCG (docs/storage.md).  Exit 77 (skip)
without qemu, a kernel image, mdadm or mkfs.xfs."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import openpyxl

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ["STRATA_BUILD"]
fails = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        fails.append(what)


for tool in ("qemu-system-x86_64", "mdadm", "mkfs.xfs"):
    if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
        print("skip: no %s" % tool)
        sys.exit(77)
if not any(f.startswith("vmlinuz-") for f in os.listdir("/boot")):
    print("skip: no /boot/vmlinuz-*")
    sys.exit(77)


def boot(tmp, name, nvme, layouts):
    out = os.path.join(tmp, name)
    # the guest inherits no environment: the layouts go into the script
    script = os.path.join(tmp, name + ".sh")
    with open(script, "w") as f:
        f.write("STRATA_LAYOUTS='%s'\n" % layouts)
        f.write(open(os.path.join(SRC, "tests", "storage", "guest-layouts.sh")).read())
    p = subprocess.run([os.path.join(SRC, "tests", "rxe", "run-in-guest"),
                        "--build", BUILD, "--out", out, "--timeout", "900",
                        "--smp", "2", "--mem", "1024", "--nvme", nvme, script],
                       capture_output=True, text=True, timeout=960)
    check(p.returncode == 0, "%s: the guest ran (exit %d) %s"
          % (name, p.returncode, p.stderr[-600:] if p.returncode else ""))
    return os.path.join(out, "single")


def results(d, lay):
    res = {}
    path = os.path.join(d, lay + ".jsonl")
    if not os.path.exists(path):
        out = os.path.join(d, lay + ".out")
        print(open(out).read()[-2000:] if os.path.exists(out) else "no output")
        return res
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "result":
            res[r["id"]] = r
    # the workbook says the same as the journal
    wb = openpyxl.load_workbook(os.path.join(d, lay + ".xlsx"), read_only=True)
    for row in wb["Summary"].iter_rows(values_only=True):
        if row and row[0] in res and len(row) > 2:
            check(row[2] == res[row[0]]["status"],
                  "%s %s: workbook says %s" % (lay, row[0], row[2]))
    return res


def show(name, lay, res):
    for tid in sorted(res):
        m = res[tid].get("metrics") or {}
        fig = {k: m[k] for k in ("layout_matches", "far_members", "arrays",
                                 "nvme", "numa_nodes", "bw_mibps", "iops",
                                 "lat_p99_us", "verify_errors") if k in m}
        print("  %-6s %-11s %-3s %-5s %s" % (name, lay, tid, res[tid]["status"], fig))


tmp = tempfile.mkdtemp(prefix="guest-layouts.", dir=BUILD)
try:
    split = boot(tmp, "split", "8:2", "one-array:S1.lua numa-local:S1.lua,seq.lua")
    uniform = boot(tmp, "uniform", "8:1", "one-array:S1.lua")

    r = results(split, "one-array")
    show("split", "one-array", r)
    s1 = r.get("S1", {}).get("metrics") or {}
    check(r.get("S1", {}).get("status") == "FAIL"
          and s1.get("layout_matches") is False and s1.get("far_members") == 8
          and s1.get("nvme") == 8 and s1.get("numa_nodes") == 2,
          "split topology, one RAID0 of 8: S1 FAIL, 8 far members (%s)" % s1)

    r = results(split, "numa-local")
    show("split", "numa-local", r)
    s1 = r.get("S1", {}).get("metrics") or {}
    check(r.get("S1", {}).get("status") == "PASS" and s1.get("arrays") == 2
          and s1.get("far_members") == 0 and s1.get("numa_nodes") == 2,
          "split topology, 4+4 NUMA-local: S1 PASS, 2 arrays (%s)" % s1)
    for tid, k in (("S2", "bw_mibps"), ("S3", "bw_mibps"), ("S4", "iops")):
        c = r.get(tid, {})
        m = c.get("metrics") or {}
        check(c.get("status") == "PASS" and (m.get(k) or 0) > 0
              and m.get("verify_errors") == 0 and m.get("targets") == 2,
              "4+4: %s PASS on both arrays, %s = %s" % (tid, k, m.get(k)))
        check(any(x.startswith("disk.md") and x.endswith(".util_pct") for x in m)
              and any(x.startswith("disk.nvme") for x in m),
              "4+4: %s carries the arrays' and members' disk figures" % tid)
    sc = os.path.join(split, "numa-local.scratch")
    check(os.path.exists(sc) and open(sc).read().split()
          == ["/scratch0", "0", "/scratch1", "1"], "4+4: one array per node")

    r = results(uniform, "one-array")
    show("uniform", "one-array", r)
    s1 = r.get("S1", {}).get("metrics") or {}
    check(r.get("S1", {}).get("status") == "PASS" and s1.get("arrays") == 1
          and s1.get("nvme") == 8 and s1.get("numa_nodes") == 1,
          "uniform topology, one RAID0 of 8: S1 PASS (%s)" % s1)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)
