#!/usr/bin/python3
"""ctest spec_check_criteria (label spec): `strata check --criteria [--site F]`
prints the resolved criteria table - test, metric, op, tier, limit,
resolved value, source file:line - for a spec and thresholds file written
here (a group, a WARN band, a site reference, a --set) and for the shipped
runbook (R9P's pair ratio from specs/thresholds.yaml at the line that
holds it).

usage: STRATA_BIN=... check_criteria_test.py
"""
import os
import re
import subprocess
import sys
import tempfile

STRATA = os.environ["STRATA_BIN"]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks()
fails = check.fails


def table(args, cwd=None):
    p = subprocess.run([STRATA, "check", "--criteria"] + args, cwd=cwd,
                       capture_output=True, text=True, timeout=60)
    lines = p.stdout.splitlines()
    rows = []
    head = re.split(r"\s{2,}", lines[0].strip()) if lines else []
    for line in lines[1:]:
        if line.startswith("ok: "):
            break
        # the last column (source) is not padded; the others are
        cells = re.split(r"\s{2,}", line.rstrip())
        rows.append(dict(zip(head, cells)))
    return p.returncode, head, rows, p.stdout + p.stderr


def line_of(path, needle):
    with open(path) as f:
        for i, text in enumerate(f, 1):
            if needle in text:
                return i
    raise AssertionError(needle + " not in " + path)


work = tempfile.mkdtemp(prefix="strata-check-criteria-")
spec = os.path.join(work, "x.lua")
with open(spec, "w") as f:
    f.write("""test {
  id = "X1", layer = "s3rdma", title = "a spec with its own default",
  criteria = { errors = { max = 0 } },
  run = function() return { errors = 0, bw = 9, tput_x = 1.2, cpu_pct = 5 } end,
}
""")
th = os.path.join(work, "thresholds.yaml")
with open(th, "w") as f:
    f.write("""X1:
  bw: { min: "0.9 * site.net.rate", warn: { min: "site.net.rate" } }
  benefit:
    any_of:
      - tput_x: { min: 1.10 }
      - cpu_pct: { min: 20 }
""")
site = os.path.join(work, "site.yaml")
with open(site, "w") as f:
    f.write("net: { rate: 10 }\n")

rc, head, rows, out = table([spec, "--thresholds", th, "--site", site])
check(rc == 0, "check --criteria exits 0 (%d): %s" % (rc, out[-300:]))
check(head == ["test", "metric", "op", "tier", "limit", "resolved", "source"],
      "columns: %s" % head)
by = {(r.get("metric"), r.get("tier")): r for r in rows}
bw = by.get(("bw", "FAIL"), {})
check(bw.get("op") == ">=" and bw.get("limit") == "0.9 x site.net.rate"
      and bw.get("resolved") == "9" and
      bw.get("source") == "%s:%d" % (th, line_of(th, "bw:")),
      "a site reference resolved with --site: %s" % bw)
warn = by.get(("bw", "WARN"), {})
check(warn.get("limit") == "site.net.rate" and warn.get("resolved") == "10",
      "the WARN band on its own row, tier WARN: %s" % warn)
grp = by.get(("benefit", "FAIL"), {})
check(grp.get("op") == "any of" and "one of the 2" in grp.get("limit", "")
      and grp.get("resolved") == "-" and
      grp.get("source") == "%s:%d" % (th, line_of(th, "benefit:")),
      "the group's row: %s" % grp)
mem = by.get(("benefit: tput_x", "FAIL"), {})
check(mem.get("limit") == "1.1" and
      mem.get("source") == "%s:%d" % (th, line_of(th, "tput_x")),
      "a member named group: metric, its own line: %s" % mem)
err = by.get(("errors", "FAIL"), {})
check(err.get("op") == "<=" and err.get("source") == "%s:%d" % (
    spec, line_of(spec, "errors = { max")),
      "the spec's inline default keeps the spec's file:line: %s" % err)

# without --site: what a site reference needs is said, not guessed
rc, _, rows, out = table([spec, "--thresholds", th])
bw = {(r.get("metric"), r.get("tier")): r for r in rows}.get(("bw", "FAIL"), {})
check(rc == 0 and bw.get("resolved") == "needs --site",
      "without --site: %s" % bw)

# --set wins and says so; =none switches a KPI off
rc, _, rows, out = table([spec, "--thresholds", th, "--site", site,
                          "--set", "X1.bw.min=7",
                          "--set", "X1.benefit.cpu_pct.min=none"])
by = {(r.get("metric"), r.get("tier")): r for r in rows}
check(by.get(("bw", "FAIL"), {}).get("source") == "--set X1.bw.min=7" and
      by.get(("bw", "FAIL"), {}).get("resolved") == "7",
      "--set shown as the source: %s" % by.get(("bw", "FAIL")))
check(("benefit: cpu_pct", "FAIL") not in by and
      "one of the 1" in by.get(("benefit", "FAIL"), {}).get("limit", ""),
      "a member switched off is gone from the table")

# the shipped runbook: R9P's ratio from the thresholds file, at its line
shipped = os.path.join(ROOT, "specs", "thresholds.yaml")
rc, _, rows, out = table(["--site", os.path.join(ROOT, "specs",
                                                 "site.example.yaml")],
                         cwd=ROOT)
r9p = [r for r in rows if r.get("test") == "R9P" and
       r.get("metric") == "min_pair_ratio"]
check(rc == 0 and len(r9p) == 1 and r9p[0].get("limit") == "0.9" and
      r9p[0].get("source") == "specs/thresholds.yaml:%d" % line_of(
          shipped, "min_pair_ratio:"),
      "shipped R9P.min_pair_ratio >= 0.9 from specs/thresholds.yaml: %s" % r9p)
r2 = [r for r in rows if r.get("test") == "R8" and r.get("metric") == "bw_gbps"]
check(len(r2) == 1 and r2[0].get("resolved") == "360",
      "shipped R8 bw_gbps resolved against the example site (0.9 x 400): %s"
      % r2)
# a hardware pack the example site selects (specs/packs) is a shipped
# profile: its rows name that file
check(all(r.get("source", "").startswith(("specs/thresholds.yaml:",
                                          "specs/packs/"))
          for r in rows),
      "every shipped criterion's source is specs/thresholds.yaml or a pack")

# a WARN band's site reference is named as it is written (metric.warn.op)
# in every message check_site_ref gives: a typo (exit 2), a value that is
# no number (exit 2), a site without the parent table (a warning)
def check_run(yaml_text, site_text):
    t = os.path.join(work, "tw.yaml")
    with open(t, "w") as f:
        f.write(yaml_text)
    s = os.path.join(work, "sw.yaml")
    with open(s, "w") as f:
        f.write(site_text)
    p = subprocess.run([STRATA, "check", spec, "--thresholds", t, "--site", s],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr, t


band = 'X1:\n  bw: { min: 5, warn: { min: "site.net.%s" } }\n'
rc, err, tw = check_run(band % "rat", "net: { rate: 10 }\n")
check(rc == 2 and "%s:2: X1.bw.warn.min: site.net.rat is not in the site "
      "file" % tw in err, "a WARN band's typo names bw.warn.min: %s" % err)
rc, err, tw = check_run(band % "rate", "net: { rate: fast }\n")
check(rc == 2 and 'X1.bw.warn.min: site.net.rate is "fast", not a number'
      in err, "a WARN band's non-number names bw.warn.min: %s" % err)
rc, err, tw = check_run(band % "rate", "other: 1\n")
check(rc == 0 and "X1.bw.warn.min needs site.net.rate, absent from the "
      "site file" in err, "a WARN band's absent site key names bw.warn.min: "
      "%s" % err)
rc, err, tw = check_run('X1:\n  bw: { min: "site.net.rate" }\n', "other: 1\n")
check(rc == 0 and "X1 needs site.net.rate, absent" in err,
      "a FAIL limit's message keeps its form: %s" % err)

# a bad option is a usage error (exit 2)
p = subprocess.run([STRATA, "check", "--criteria=yes"], capture_output=True,
                   text=True, timeout=60)
check(p.returncode == 2, "--criteria takes no value: exit %d" % p.returncode)

if fails:
    print("%d failure(s)" % len(fails))
    sys.exit(1)
print("check --criteria: all checks passed")
