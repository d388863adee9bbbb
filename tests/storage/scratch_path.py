#!/usr/bin/python3
"""scratch_path.py - issue 27 item 6: storage.scratch as users write it.
A path that is a directory inside a mount (not the mount point) is
checked as the mount that holds it, and S1's notes say so; a symlink is
followed; a path that does not exist SKIPs S1 saying that it is not a
mount point (never "none named").  Real directories inside real mounts
(/dev/shm when it is a mount, else the temp folder's), S1 run by strata,
the workbook read back.  The mount that holds each path is found here
independently: the first parent for which os.path.ismount is true."""
import os, subprocess, sys, tempfile
import openpyxl

strata = os.environ["STRATA_BIN"]
home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
base = "/dev/shm" if os.path.ismount("/dev/shm") and os.access("/dev/shm", os.W_OK) \
    else tempfile.gettempdir()
work = tempfile.mkdtemp(prefix="strata-scratch.", dir=base)
links = tempfile.mkdtemp(prefix="strata-scratch-link.")
bad = 0

def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        bad += 1

def holder(path):
    p = os.path.realpath(path)
    while not os.path.ismount(p):
        p = os.path.dirname(p)
    return p

def s1(path, tag):
    site = os.path.join(links, tag + ".yaml")
    with open(site, "w") as f:
        f.write("site:\n  name: scratch-path\nstorage:\n  scratch:\n"
                "    - path: %s\n" % path)
    out = os.path.join(links, tag + ".xlsx")
    p = subprocess.run([strata, "run", "--site", site, "--only", "S1", "-o", out,
                        os.path.join(home, "specs")], capture_output=True, text=True)
    check(p.returncode in (0, 1), "%s: strata run exits %d %s" % (tag, p.returncode,
                                                             p.stderr[-300:]))
    wb = openpyxl.load_workbook(out)
    row, head = {}, None
    for r in wb["Summary"].iter_rows(values_only=True):
        if r[0] == "ID":
            head = list(r)
        elif head and r[0] == "S1":
            row = dict(zip(head, r))
    notes = []
    sheet = [n for n in wb.sheetnames if n.startswith("S1")]
    if sheet:
        seen = False
        for r in wb[sheet[0]].iter_rows(values_only=True):
            if r[0] == "Notes":
                seen = True
            elif seen and r[0]:
                notes.append(str(r[0]))
    return row, notes

try:
    inside = os.path.join(work, "job", "run1")
    os.makedirs(inside)
    mp = holder(inside)
    check(mp != os.path.realpath(inside), "the fixture is not itself a mount point")
    row, notes = s1(inside + "/", "inside")
    check(row.get("Status") not in (None, "SKIP", "ERROR"),
          "inside: S1 measured (%s: %s)" % (row.get("Status"), row.get("Reason")))
    want = "%s/ is not a mount point: it is a directory inside the mount %s, " \
           "which S1 checks" % (inside, mp)
    check(("note: " + want) in notes, "inside: the note names the mount %s: %r"
          % (mp, notes[:3]))
    check(any(n.startswith("warn: %s " % mp) for n in notes),
          "inside: the findings are about the mount %s" % mp)

    link = os.path.join(links, "scratch")
    os.symlink(inside, link)
    row, notes = s1(link, "link")
    check(("note: %s is not a mount point: it is a directory (%s) inside the "
           "mount %s, which S1 checks" % (link, os.path.realpath(inside), mp))
          in notes, "link: followed to the real directory: %r" % notes[:2])

    row, notes = s1(mp, "point")
    check(row.get("Status") not in (None, "SKIP", "ERROR")
          and not any("not a mount point" in n for n in notes),
          "point: the mount point itself, no note (%s)" % row.get("Status"))

    gone = os.path.join(work, "absent")
    row, notes = s1(gone, "absent")
    reason = row.get("Reason") or ""
    check(row.get("Status") == "SKIP" and
          ("%s: not a mount point and no such directory" % gone) in reason
          and "none named" not in reason, "absent: SKIP says why: %r" % reason)
finally:
    subprocess.run(["rm", "-rf", work, links])
sys.exit(1 if bad else 0)
