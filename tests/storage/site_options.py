#!/usr/bin/python3
"""site.storage's submission keys (fio's iodepth_batch_submit,
iodepth_batch_complete_min, iodepth_batch_complete_max) are checked when
the site file is read: a bad value stops `strata check` with exit 2 and
the file:line; storage.run refuses the same values with the option's name.
No I/O (label spec)."""
import os
import subprocess
import sys
import tempfile

STRATA = os.environ.get("STRATA_BIN", "strata")
SPECS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "../../specs/storage")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def strata(*argv):
    return subprocess.run([STRATA] + list(argv), capture_output=True,
                          text=True, timeout=60)


with tempfile.TemporaryDirectory() as tmp:
    site = os.path.join(tmp, "site.yaml")
    base = "storage:\n  scratch:\n    - { path: /scratch0, numa_node: 0 }\n"
    for key, val in (("iodepth_batch_submit", "-1"),
                     ("iodepth_batch_complete_min", "many"),
                     ("iodepth_batch_complete_max", "2000"),
                     ("iodepth_batch_submit", "1.5")):
        with open(site, "w") as f:
            f.write(base + "  %s: %s\n" % (key, val))
        p = strata("check", SPECS, "--site", site)
        want = "%s:4: storage.%s must be a whole number 0..1024" % (site, key)
        check(p.returncode == 2 and want in p.stderr,
              "%s=%s: rc %d, %s" % (key, val, p.returncode, p.stderr[-400:]))
    # fio's values, including 0 (the iodepth; a poll), pass the check
    with open(site, "w") as f:
        f.write(base + "  iodepth_batch_submit: 0\n"
                "  iodepth_batch_complete_min: 0\n"
                "  iodepth_batch_complete_max: 32\n")
    p = strata("check", SPECS, "--site", site)
    check(p.returncode == 0, "good values: rc %d %s" % (p.returncode,
                                                        p.stderr[-400:]))
    # storage.run names the option before it opens anything
    job = os.path.join(tmp, "job.lua")
    with open(job, "w") as f:
        f.write('require("strata.storage").run { filename = "%s/x", '
                'iodepth = 4, iodepth_batch_complete_max = -3 }\n' % tmp)
    p = strata("lua", job)
    check(p.returncode != 0 and "option 'iodepth_batch_complete_max' must "
          "be 0..1024, got -3" in p.stderr, "storage.run: " + p.stderr[-400:])
    check(not os.path.exists(os.path.join(tmp, "x")), "nothing opened")
print("site options: %d failures" % len(failures))
sys.exit(1 if failures else 0)
