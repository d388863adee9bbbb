"""What the Python tests share: running the real strata binary, reading the
journal it writes, a temporary folder per test case.  Imported by the tests
under tests/ (each puts tests/pylib on sys.path); Python stdlib only, so it
runs under /usr/bin/python3 beside Debian's openpyxl."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "../.."))
BIN = os.environ.get("STRATA_BIN") or os.path.join(SRC, "build/strata")


def strata(*args, env=None, timeout=90, text=True, shell_prefix=None,
           cwd=None):
    """Run strata with args; env adds to this process's environment.
    shell_prefix (e.g. "ulimit -v 4194304") is a limit strata inherits."""
    e = dict(os.environ)
    e.update(env or {})
    cmd = [BIN, *args]
    if shell_prefix:
        cmd = ["/bin/bash", "-c", shell_prefix + ' && exec "$0" "$@"', *cmd]
    return subprocess.run(cmd, capture_output=True, text=text,
                          timeout=timeout, env=e, cwd=cwd)


def run_specs(tmp, name, site, specs, *args, timeout=120):
    """strata run specs/SPECS from the source tree with the site text in
    TMP/NAME-site.yaml and the workbook TMP/NAME.xlsx (the journal beside
    it, TMP/NAME.jsonl) -> (the process, the journal's records)."""
    site_path = os.path.join(tmp, name + "-site.yaml")
    with open(site_path, "w") as f:
        f.write(site)
    p = strata("run", os.path.join(SRC, "specs", specs),
               "-o", os.path.join(tmp, name + ".xlsx"), "--site", site_path,
               *args, timeout=timeout, cwd=SRC)
    return p, journal(os.path.join(tmp, name + ".jsonl"))


def journal(path):
    """Every record of a journal (JSON lines)."""
    with open(path, "rb") as f:
        return [json.loads(l) for l in f if l.strip()]


def results(recs):
    """id -> [result records] (a matrix test has one per cell)."""
    out = {}
    for r in recs:
        if r["type"] == "result":
            out.setdefault(r["id"], []).append(r)
    return out


class Tmp(unittest.TestCase):
    """A test case with its own temporary folder, removed afterwards."""
    prefix = "strata-test-"

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix=self.prefix)
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)


class Checks:
    """The check(cond, what) of the script tests, once: each check printed
    as "ok   what" or "FAIL what" as it goes (quiet: the failures only), the
    failed ones kept in .fails; end(name) prints how many failed and exits,
    1 when any did.  check = Checks(); check(x == 1, "x is one")."""

    def __init__(self, quiet=False):
        self.fails = []
        self.quiet = quiet

    def __call__(self, cond, what):
        if not cond:
            self.fails.append(what)
        if not cond or not self.quiet:
            print(("ok   " if cond else "FAIL ") + what, flush=True)
        return bool(cond)

    def end(self, name="checks"):
        print("%s: %s" % (name, "ok" if not self.fails
                          else "%d failure(s)" % len(self.fails)), flush=True)
        raise SystemExit(1 if self.fails else 0)
