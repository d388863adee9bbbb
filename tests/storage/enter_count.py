#!/usr/bin/python3
"""The same system calls as fio: a default strata job and a default fio
job (fio 3.33, ioengine=io_uring) over the same file, each under
strace -f -e trace=io_uring_enter; counted, not timed.  At fio's defaults
(iodepth_batch_submit=1) both make exactly one io_uring_enter(fd, 1, 0,
IORING_ENTER_GETEVENTS) per I/O; batched (iodepth_batch_submit=16,
iodepth_batch_complete_max=16) both submit more than one I/O a call, and
strata's own count (io_uring_enter_submit) agrees with strace's.
Needs fio and strace (SKIP 77 without)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

STRATA = os.environ.get("STRATA_BIN", "strata")
IOS, QD = 512, 16
CALL = re.compile(r"io_uring_enter\(\d+, (\d+), (\d+), ([A-Z_|0]+)")

JOB = r"""
local storage = require "strata.storage"
local o = { filename = arg[1], rw = "randread", bs = "4k", iodepth = %d,
            ios = %d, size = "4M" }
for i = 2, #arg do local k, v = arg[i]:match("^(.-)=(.*)$"); o[k] = tonumber(v) end
local r = storage.run(o)
print(r.total_ios, r.io_uring_enter_submit, r.io_uring_enter_wait,
      r.iodepth_batch_submit, r.iodepth_batch_complete_max)
""" % (QD, IOS)


def calls(path):
    """(to_submit, min_complete, flags) of every io_uring_enter traced."""
    out = []
    with open(path) as f:
        for line in f:
            m = CALL.search(line)
            if m:
                out.append((int(m[1]), int(m[2]), m[3]))
    return out


def traced(tmp, name, argv):
    tr = os.path.join(tmp, name + ".strace")
    p = subprocess.run(["strace", "-f", "-qq", "-e", "trace=io_uring_enter",
                        "-o", tr] + argv, capture_output=True, text=True,
                       timeout=120)
    if p.returncode:
        sys.exit("%s failed (%d): %s" % (name, p.returncode, p.stderr[-800:]))
    return calls(tr), p.stdout


def main():
    for tool in ("fio", "strace"):
        if not shutil.which(tool):
            print("SKIP: %s not installed" % tool)
            sys.exit(77)
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as tmp:
        data = os.path.join(tmp, "f.dat")
        job = os.path.join(tmp, "job.lua")
        with open(job, "w") as f:
            f.write(JOB)
        probe = subprocess.run(["strace", "-qq", "-o", os.devnull, "true"],
                               capture_output=True, text=True)
        if probe.returncode:
            print("SKIP: strace cannot trace here: " + probe.stderr.strip())
            sys.exit(77)
        fio = ["fio", "--name=count", "--filename=" + data, "--rw=randread",
               "--bs=4k", "--iodepth=%d" % QD, "--number_ios=%d" % IOS,
               "--size=4M", "--direct=1", "--ioengine=io_uring",
               "--output-format=terse"]
        st = [STRATA, "lua", job, data]
        batched = ["iodepth_batch_submit=%d" % QD,
                   "iodepth_batch_complete_max=%d" % QD]
        # strata lays the file out first (its pattern), so both read data
        traced(tmp, "layout", st)
        results = {}
        for name, argv in (("fio", fio), ("strata", st),
                           ("fio-batched", fio + ["--" + b for b in batched]),
                           ("strata-batched", st + batched)):
            c, out = traced(tmp, name, argv)
            sub = [x for x in c if x[0] > 0]
            results[name] = (sub, c, out)
            print("%-15s io_uring_enter: %d submitting (%d I/Os), %d waiting"
                  % (name, len(sub), sum(x[0] for x in sub), len(c) - len(sub)))
        fails = []
        for name in ("fio", "strata"):
            sub = results[name][0]
            if len(sub) != IOS or any(x[:2] != (1, 0) or "GETEVENTS" not in x[2]
                                      for x in sub):
                fails.append("%s at defaults: %d submitting calls, not %d of "
                             "io_uring_enter(fd, 1, 0, GETEVENTS)"
                             % (name, len(sub), IOS))
        for name in ("fio-batched", "strata-batched"):
            sub = results[name][0]
            if not len(sub) < IOS - (QD - 1) or sum(x[0] for x in sub) != IOS:
                fails.append("%s: %d submitting calls for %d I/Os (batched: "
                             "at most %d)" % (name, len(sub), IOS, IOS - QD + 1))
        for name, want in (("strata", (IOS, 1, 1)),
                           ("strata-batched", (None, QD, QD))):
            f = results[name][2].split()
            n, sub, qd_sub, qd_max = int(f[0]), int(f[1]), int(f[3]), int(f[4])
            if n != IOS or sub != len(results[name][0]) or \
               (want[0] and sub != want[0]) or (qd_sub, qd_max) != want[1:]:
                fails.append("%s reports %s (strace saw %d submitting calls)"
                             % (name, f, len(results[name][0])))
        for f in fails:
            print("FAIL: " + f)
        sys.exit(1 if fails else 0)


main()
