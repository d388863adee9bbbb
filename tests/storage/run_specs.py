#!/usr/bin/python3
"""specs/storage through the real runner (label storage), on XFS on a loop
device made here (root, losetup, mkfs.xfs from xfsprogs; the host kernel
has loop, XFS and io_uring).  S1 reads the real mount (XFS, noatime, not
an md array: layout_matches is then false, so that one check is dropped
with --set); S2-S4 measure the loop-backed file with verification; the
disk counters of the loop device must have moved by the bytes moved;
S5-S7 SKIP without S3/GPU.  A second run with an impossible expectation
must FAIL.  Exit 77 (ctest SKIP) when the loop device cannot be made."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
import strata_test  # noqa: E402
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def run(tmp, name, site, *extra):
    p, recs = strata_test.run_specs(tmp, name, site, "storage", "--set",
                                    "S1.layout_matches.eq=none", *extra,
                                    timeout=600)
    res = {r["id"]: r for r in recs if r["type"] == "result"}
    return p, res


def main():
    if os.geteuid() != 0 or not shutil.which("losetup") or not shutil.which("mkfs.xfs"):
        print("SKIP: needs root, losetup and mkfs.xfs (xfsprogs)")
        return 77
    # on the build tree's disk filesystem (O_DIRECT on the image file too)
    tmp = tempfile.mkdtemp(prefix="storage-", dir=os.getcwd())
    img, mnt = os.path.join(tmp, "xfs.img"), os.path.join(tmp, "scratch")
    os.mkdir(mnt)
    with open(img, "wb") as f:
        f.truncate(768 << 20)
    p = sh("losetup", "-f", "--show", img)
    if p.returncode:
        print("SKIP: losetup: " + p.stderr.strip())
        shutil.rmtree(tmp)
        return 77
    loop = p.stdout.strip()
    try:
        check(sh("mkfs.xfs", "-q", "-f", loop).returncode == 0, "mkfs.xfs")
        check(sh("mount", "-t", "xfs", "-o", "noatime", loop, mnt).returncode == 0,
              "mount")
        site = ("storage:\n  scratch:\n    - { path: %s, numa_node: 0 }\n"
                "  size: 128M\n  runtime: 2\n  iodepth: 32\n  numjobs: 1\n"
                "  seq_read_mibps: 1\n  seq_write_mibps: 1\n  randread_iops: 10\n"
                % mnt)
        p, res = run(tmp, "loop", site)
        dev = os.path.basename(loop)
        s1 = res.get("S1", {})
        m1 = s1.get("metrics", {})
        check(s1.get("status") == "PASS", "S1: %s %s" % (s1.get("status"), p.stderr[-1500:]))
        check(m1.get("not_xfs") == 0 and m1.get("without_noatime") == 0,
              "S1 sees XFS + noatime: %s" % m1)
        check(m1.get("layout_matches") is False and m1.get("arrays") == 0,
              "S1: a loop device is no RAID0 layout")
        for tid, rw_bytes in (("S2", "read_bytes"), ("S3", "write_bytes"),
                              ("S4", "read_bytes")):
            r = res.get(tid, {})
            m = r.get("metrics", {})
            check(r.get("status") == "PASS", "%s: %s %s %s" % (
                tid, r.get("status"), r.get("reason"), p.stderr[-1500:]))
            check(m.get("verify_errors") == 0 and m.get("verify_bytes", 0) > 0,
                  tid + " verified")
            # the headline submits as a default fio job (one I/O a call)
            # and the verified pass is its own figure
            hk = "iops" if tid == "S4" else "bw_mibps"
            check(m.get("iodepth_batch_submit") == 1 and
                  m.get("iodepth_batch_complete_max") == 1 and
                  m.get("ios_per_submit") == 1.0,
                  "%s submits as fio's default: %s" % (tid, {
                      k: v for k, v in m.items() if "batch" in k or
                      "submit" in k}))
            check(m.get(hk + "_verified", 0) > 0, tid + " verified figure")
            notes = " ".join(str(n) for n in r.get("notes", []))
            check("iodepth_batch_submit=1" in notes and
                  "verification:" in notes, tid + " notes: " + notes[:300])
            check(m.get("io_bytes", 0) > 0 and m.get("lat_p99_us", 0) > 0,
                  tid + " measured")
            moved = m.get("delta.disk.%s.%s" % (dev, rw_bytes), 0)
            # the loop device saw at least the job's bytes (read-back adds)
            check(moved >= 0.95 * m.get("io_bytes", 1),
                  "%s: delta.disk.%s.%s = %s < io_bytes %s" % (
                      tid, dev, rw_bytes, moved, m.get("io_bytes")))
            check(any(k.startswith("disk.%s." % dev)
                      for k in r.get("series", {}).get("values", {})),
                  tid + " disk series on the row")
            check(("disk.%s.util_pct" % dev) in m, tid + " util from diskstats")
        for tid in ("S5", "S6", "S7"):
            check(res.get(tid, {}).get("status") == "SKIP",
                  "%s: %s" % (tid, res.get(tid, {}).get("status")))
        # an expectation the loop device cannot meet must fail
        p, res = run(tmp, "strict", site.replace("seq_read_mibps: 1",
                                                 "seq_read_mibps: 10000000"),
                     "--only", "S2")
        check(res.get("S2", {}).get("status") == "FAIL",
              "S2 vs 10 TB/s: %s" % res.get("S2", {}).get("status"))
    finally:
        sh("umount", mnt)
        sh("losetup", "-d", loop)
        shutil.rmtree(tmp, ignore_errors=True)
    print("storage specs: %d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
