#!/usr/bin/python3
"""specs/host through the real runner (label spec): H1-H3 pass on this
machine, and fail when the site or a threshold says they must (a check
that cannot fail proves nothing).  Reads the journal the run writes."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
import strata_test  # noqa: E402
from strata_test import SRC  # noqa: E402
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def run(tmp, name, site, *extra):
    # a shared CI box may be busy: load is judged on real hosts
    p, recs = strata_test.run_specs(tmp, name, site, "host", "--set",
                                    "H1.load1_per_cpu.max=none", *extra)
    res = {}
    for r in recs:
        if r["type"] == "result":
            res[r["id"]] = r
        elif r["type"] == "inventory":
            res["_inventory"] = r["data"]
    return p, res


def main():
    with tempfile.TemporaryDirectory() as tmp:
        p, res = run(tmp, "plain", "site: { name: ci }\n")
        for tid in ("H1", "H2", "H3"):
            check(res.get(tid, {}).get("status") == "PASS",
                  "%s: %s %s" % (tid, res.get(tid, {}).get("status"),
                                 p.stderr[-2000:]))
        inv = res.get("_inventory", {})
        check(inv.get("cpu", {}).get("threads", 0) >= 1 and inv.get("nics"),
              "inventory in the journal")
        h3 = res.get("H3", {})
        m = h3.get("metrics", {})
        check(m.get("delta.net.lo.rx_bytes", 0) >= m.get("loopback_bytes", 1),
              "H3 deltas are metrics")
        check(len(h3.get("series", {}).get("t", [])) >= 5, "H3 series")
        h2 = res.get("H2", {})
        check(any(t["name"] == "Devices and NUMA nodes"
                  for t in h2.get("tables", [])), "H2 table")
        if os.path.exists(os.path.join(SRC, "lua/strata/report/workbook.lua")):
            check(p.returncode == 0, "exit %d: %s" % (p.returncode, p.stderr))

        # the site and thresholds can make each one fail
        p, res = run(tmp, "strict", "host:\n  cpus: 9999\n  max_cross_numa_pairs: -1\n",
                     "--set", "H3.delta.net.lo.rx_bytes.min=1e15")
        check(res["H1"]["status"] == "FAIL", "H1 with 9999 CPUs expected")
        check(any(c["metric"] == "cpus_online" and not c["ok"]
                  for c in res["H1"]["checks"]), "H1 check")
        check(res["H2"]["status"] == "FAIL", "H2 with max_cross_numa_pairs -1")
        check(res["H3"]["status"] == "FAIL", "H3 with an impossible lo delta")
        if os.path.exists(os.path.join(SRC, "lua/strata/report/workbook.lua")):
            check(p.returncode == 1, "exit %d on failures" % p.returncode)

        # a constructed two-socket node: GPU1's nearest RDMA NIC and GPU0's
        # nearest NVMe sit on the other socket
        tree = os.path.join(SRC, "fixtures/host/two-socket")
        p, res = run(tmp, "two", "host:\n  root: %s\n  cpus: 8\n  numa_nodes: 2\n" % tree,
                     "--only", "H1", "--only", "H2")
        check(res["H1"]["status"] == "PASS", "H1 on two-socket: %s" % res["H1"])
        m = res["H2"]["metrics"]
        check(res["H2"]["status"] == "FAIL", "H2 on two-socket")
        check(m["gpus"] == 2 and m["rdma_devices"] == 1 and m["nvme"] == 1,
              "two-socket devices %s" % m)
        check(m["gpu_nic_cross_numa"] == 1 and m["gpu_nvme_cross_numa"] == 1 and
              m["cross_numa_pairs"] == 2, "two-socket pairing %s" % m)
        pairing = [t for t in res["H2"]["tables"] if t["name"] == "GPU pairing"]
        check(pairing and pairing[0]["rows"][1][2] == "irdma0", "pairing table")
        p, res = run(tmp, "two-ok", "host:\n  root: %s\n  max_cross_numa_pairs: 2\n" % tree,
                     "--only", "H2")
        check(res["H2"]["status"] == "PASS", "H2 with 2 cross pairs allowed")
    if failures:
        print("run_specs: %d failures" % failures, file=sys.stderr)
        return 1
    print("run_specs: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
