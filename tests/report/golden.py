#!/usr/bin/python3
"""Every output strata writes, byte for byte, from stored journals (issue 30:
a redesign of the report code must leave each output as it was).

    golden.py STRATA WORKDIR [--update]

For each journal below, `strata report` writes the workbook, JSON, JUnit
and (run journals only: a fleet journal has no textfile yet) the
Prometheus textfile, and `strata diff` of two stored H200 journals writes
the diff workbook and its text; each workbook part (the .xlsx unzipped) and
each other file is hashed and compared with
fixtures/report/golden/outputs.sha256.

One thing is not the journal's: docProps/core.xml's dcterms:created and
dcterms:modified are the time of the write (report_lua.c passes
lxw_doc_properties with created = 0, and libxlsxwriter then takes
time(NULL)); they are replaced by a fixed stamp before hashing.  Everything
else is a function of the journal: two writes of the same journal, in
different directories and seconds apart, gave the same bytes otherwise.
(The fleet JSON once came from cjson, whose key order is the Lua table's,
seeded per process by luai_makeseed; it has the run JSON's encoder now,
with sorted keys.)

--update rewrites the reference file and prints which parts changed, were
added or went away, so an intended output change is accepted by name.  The
outputs stay in WORKDIR/<case>/ to be diffed against another build's.
"""
import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
GOLDEN = os.path.join(ROOT, "fixtures/report/golden")
REF = os.path.join(GOLDEN, "outputs.sha256")

# (case, journal, run journal?): fixtures/report/golden/README.md and
# fixtures/fleet/README.md say where each journal came from.
CASES = [
    ("lab", os.path.join(GOLDEN, "lab.jsonl.gz"), True),
    ("triv10k", os.path.join(GOLDEN, "triv10k.jsonl.gz"), True),
    ("fleet", os.path.join(ROOT, "fixtures/fleet/run-3nodes.jsonl"), False),
    ("diag-clean",
     os.path.join(ROOT, "fixtures/fleet/diag-clean-3guests.jsonl"), False),
    ("diag-g2-held",
     os.path.join(ROOT, "fixtures/fleet/diag-g2-held-60ms-3guests.jsonl"),
     False),
]

# strata diff A B: two runs of specs/gpu on one H200 (tests/llm/results/
# README.md says where they came from)
DIFF = [os.path.join(ROOT, "tests/llm/results", d, "specs-gpu.jsonl")
        for d in ("h200-2026-12-01-run1", "h200-2026-12-01")]

STAMP = re.compile(rb'(<dcterms:(created|modified) xsi:type="dcterms:W3CDTF">)'
                   rb'[^<]*(</dcterms:\2>)')


def fresh(work, case, journals):
    """An empty work/case holding copies of the journals (unzipped) as
    journal.jsonl, b.jsonl: relative names only, so that no path of this
    machine reaches the outputs."""
    d = os.path.join(work, case)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, journal in zip(("journal.jsonl", "b.jsonl"), journals):
        opener = gzip.open if journal.endswith(".gz") else open
        with opener(journal, "rb") as src, \
                open(os.path.join(d, name), "wb") as dst:
            shutil.copyfileobj(src, dst)
    return d


def strata_in(d, case, argv, ok=(0,)):
    p = subprocess.run(argv, cwd=d, capture_output=True)
    if p.returncode not in ok:
        sys.exit("%s: %s exit %d\n%s" % (case, " ".join(argv[1:2]),
                                         p.returncode, p.stderr.decode()))
    return p


def xlsx_parts(path):
    parts = {}
    with zipfile.ZipFile(path) as z:
        for name in sorted(z.namelist()):
            data = z.read(name)
            if name == "docProps/core.xml":
                data = STAMP.sub(rb"\g<1>(write time)\g<3>", data)
            parts["xlsx/" + name] = data
    return parts


def render_diff(strata, work):
    d = fresh(work, "diff", DIFF)
    # exit 1: something got worse (a verdict of the comparison, not an error)
    p = strata_in(d, "diff", [strata, "diff", "journal.jsonl", "b.jsonl",
                              "-o", "diff.xlsx"], ok=(0, 1))
    parts = xlsx_parts(os.path.join(d, "diff.xlsx"))
    parts["stdout"] = p.stdout
    return parts


def render(strata, case, journal, prom, work):
    """Write the case's outputs into work/case; return {part: bytes}."""
    d = fresh(work, case, [journal])
    argv = [strata, "report", "journal.jsonl", "-o", "report.xlsx",
            "--json", "report.json", "--junit", "report.xml"]
    if prom:
        argv += ["--prometheus", "report.prom"]
    strata_in(d, case, argv)
    parts = xlsx_parts(os.path.join(d, "report.xlsx"))
    for f in ("report.json", "report.xml", "report.prom"):
        path = os.path.join(d, f)
        if os.path.exists(path):
            with open(path, "rb") as fh:
                parts[f] = fh.read()
    return parts


def read_ref():
    ref = {}
    with open(REF) as fh:
        for line in fh:
            if line.strip() and not line.startswith("#"):
                digest, name = line.split()
                ref[name] = digest
    return ref


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: golden.py STRATA WORKDIR [--update]")
    strata, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    update = "--update" in sys.argv[3:]
    got = {}
    for case, journal, prom in CASES:
        for part, data in render(strata, case, journal, prom, work).items():
            got[case + "/" + part] = hashlib.sha256(data).hexdigest()
    for part, data in render_diff(strata, work).items():
        got["diff/" + part] = hashlib.sha256(data).hexdigest()
    ref = read_ref() if os.path.exists(REF) else {}
    changed = sorted(n for n in got if n in ref and ref[n] != got[n])
    added = sorted(n for n in got if n not in ref)
    gone = sorted(n for n in ref if n not in got)
    for label, names in (("changed", changed), ("new", added),
                         ("gone", gone)):
        for n in names:
            print("%-8s %s" % (label, n))
    print("%d parts: %d changed, %d new, %d gone (outputs in %s)"
          % (len(got), len(changed), len(added), len(gone), work))
    if update:
        with open(REF, "w") as fh:
            fh.write("# sha256 of each output part: tests/report/golden.py "
                     "--update writes this\n")
            for n in sorted(got):
                fh.write("%s  %s\n" % (got[n], n))
        print("wrote", REF)
        return 0
    return 1 if changed or added or gone else 0


if __name__ == "__main__":
    sys.exit(main())
