#!/usr/bin/python3
"""skip_findings.py STRATA - issue 27 item 6: on a host without an RDMA
device, E3P SKIPs ("no RDMA device") yet its preflight facts fail named
criteria; the Summary counts those findings beside the SKIP.  Reads the
workbook back (openpyxl).  Provider cuobject with a cufile.json path that
does not exist: config_read, rdma_dev_addr_list, rdma_peer_type and
use_pci_p2pdma fail at least (each by its criterion in
specs/thresholds.yaml); provider rc: every check is n/a, no count."""
import os, re, subprocess, sys, tempfile
import openpyxl

strata = sys.argv[1]
home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"):
    print("SKIP: this host has an RDMA device (E3P would not skip)")
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="strata-skipfind.")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks()


def run(provider):
    site = os.path.join(tmp, provider + ".yaml")
    with open(site, "w") as f:
        f.write("site:\n  name: skip-findings\ns3rdma:\n"
                "  endpoint: http://127.0.0.1:9\n  bucket: strata\n"
                "  provider: %s\n  max_object_mb: 2\n  max_concurrency: 2\n"
                % provider)
    out = os.path.join(tmp, provider + ".xlsx")
    env = dict(os.environ, CUFILE_ENV_PATH_JSON=os.path.join(tmp, "absent.json"))
    p = subprocess.run([strata, "run", "--site", site, "--only", "E3P",
                        "-o", out, os.path.join(home, "specs")],
                       env=env, capture_output=True, text=True)
    check(p.returncode != 2, "%s: strata run exits %d" % (provider, p.returncode))
    ws = openpyxl.load_workbook(out)["Summary"]
    head = None
    for row in ws.iter_rows(values_only=True):
        if row[0] == "ID":
            head = list(row)
        elif head and row[0] == "E3P":
            return dict(zip(head, row))
    return {}

r = run("cuobject")
check(r.get("Status") == "SKIP", "cuobject: E3P is SKIP (%s)" % r.get("Status"))
reason = r.get("Reason") or ""
m = re.search(r"no RDMA device \((\d+) findings on the E3P sheet\)$", reason)
check(m is not None, "cuobject: the reason counts the findings: %r" % reason)
check(m is not None and int(m.group(1)) >= 4,
      "cuobject: at least the four cuFile findings")
r = run("rc")
check(r.get("Status") == "SKIP", "rc: E3P is SKIP (%s)" % r.get("Status"))
check("finding" not in (r.get("Reason") or ""),
      "rc: every check n/a, no count: %r" % r.get("Reason"))
sys.exit(1 if check.fails else 0)
