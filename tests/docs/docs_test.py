#!/usr/bin/python3
"""Docs that run (ctest label docs): every example of docs/*.md and README.md
goes through the real binary, so an example cannot drift from the code.

The convention (docs/specs.md says it at the top):
  ```lua   a whole spec file: `strata check` passes with it among the shipped
           specs (which provide what it `needs`), and every global it reads
           exists in a spec's environment
  ```yaml  a thresholds block loads as a --profile, a site fragment (merged
           over specs/site.example.yaml) as a --site, with `strata check`
  ```text  display only: API listings, shapes, fragments, synopses; not run
  any block, whatever its info string: every `X.name` where X is a
           `require "strata.Y"` of that page names something module Y has
  ```sh    every command line whose program is strata (or ./build/strata)
           runs in a temporary folder (class Commands says how each kind is
           checked: for real here, or through the command's own parser)
"""
import glob
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../pylib"))
from strata_test import BIN, SRC, strata  # noqa: E402

PROBE = os.path.join(HERE, "probe.lua")
PAGES = sorted(glob.glob(os.path.join(SRC, "docs", "*.md"))) + \
    [os.path.join(SRC, "README.md")]
KEYWORDS = set("""and break do else elseif end false for function goto if in
local nil not or repeat return then true until while""".split())


def blocks(path):
    """Fenced blocks of a page: [(first line number, info string, text)]."""
    out, cur = [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                if cur is None:
                    cur = (n, line[3:].strip(), [])
                else:
                    out.append((cur[0], cur[1], "".join(cur[2])))
                    cur = None
            elif cur is not None:
                cur[2].append(line)
    return out


def rel(path):
    return os.path.relpath(path, SRC)


def strip_strings(src):
    """Lua source with the contents of its strings blanked (quotes kept)."""
    src = re.sub(r"\[(=*)\[.*?\]\1\]", '""', src, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', '""', src)


def strip_comments(src):
    src = re.sub(r"--\[(=*)\[.*?\]\1\]", "", src, flags=re.S)
    return re.sub(r"--[^\n]*", "", src)


def free_names(src):
    """Names a Lua chunk reads as globals, found the simple way: an
    identifier called or indexed (x.y, x:y, x(...), x{...}, x"...") that is
    not a field and no `local`, parameter or loop variable declares.
    Enough for documentation examples; the real check is `strata check`."""
    s = strip_comments(strip_strings(src))
    declared = set()
    for m in re.finditer(r"\blocal\s+function\s+(\w+)", s):
        declared.add(m.group(1))
    for m in re.finditer(r"\blocal\s+((?:\w+\s*(?:<\w+>)?\s*,\s*)*\w+)", s):
        declared.update(re.findall(r"\w+", re.sub(r"<\w+>", "", m.group(1))))
    for m in re.finditer(r"\bfunction\b[\w\s.:]*\(([^)]*)\)", s):
        declared.update(re.findall(r"\w+", m.group(1)))
    for m in re.finditer(r"\bfor\s+([\w\s,]+?)\s*(?:=|\bin\b)", s):
        declared.update(re.findall(r"\w+", m.group(1)))
    used = set(re.findall(r"(?<![\w.:])([A-Za-z_]\w*)\s*(?=[.:(\[{\"'])", s))
    return used - declared - KEYWORDS


REQUIRE = re.compile(r"""\blocal\s+(\w+)\s*(?:<\w+>)?\s*=\s*require\s*\(?\s*
                         ["'](strata\.[\w.]+)["']\s*\)?(\.\w+)?""", re.X)


def module_uses(text, aliases):
    """{(module, name)} for every alias.name in text (strings blanked)."""
    s = strip_strings(text)
    uses = set()
    for alias, mod in aliases.items():
        for m in re.finditer(r"(?<![\w.:])%s\.(\w+)" % re.escape(alias), s):
            uses.add((mod, m.group(1)))
    return uses


def page_aliases(path):
    """alias -> module for every `local X = require "strata.Y"` on a page
    (a later block of the page may use an alias an earlier one made)."""
    aliases = {}
    for _, _, text in blocks(path):
        for m in REQUIRE.finditer(text):
            if not m.group(3):
                aliases[m.group(1)] = m.group(2)
    return aliases


def probe(*args, cwd=None):
    return strata("lua", PROBE, *args, cwd=cwd, timeout=60)


class Lua(unittest.TestCase):
    """```lua blocks are whole specs that `strata check` accepts; every
    strata module member any block names exists."""

    @classmethod
    def setUpClass(cls):
        p = probe("globals")
        assert p.returncode == 0, p.stderr
        cls.globals = set(p.stdout.split()) | {"test"}  # + the spec's own

    def shipped_without(self, dest, ids):
        """Copy specs/ into dest, leaving out the files defining ids (the
        example stands in for them) -> dest."""
        shutil.copytree(os.path.join(SRC, "specs"), dest)
        for f in glob.glob(os.path.join(dest, "**", "*.lua"), recursive=True):
            with open(f) as h:
                text = h.read()
            if any(re.search(r'\bid\s*=\s*"%s"' % re.escape(i), text)
                   for i in ids):
                os.unlink(f)
        return dest

    def test_specs_check(self):
        n = 0
        for page in PAGES:
            for line, info, text in blocks(page):
                if info.split()[:1] != ["lua"]:
                    continue
                n += 1
                where = "%s:%d" % (rel(page), line)
                with self.subTest(block=where):
                    self.assertTrue(re.search(r"\btest\s*\{", text), where + ": a ```lua "
                                     "block is a whole spec; display-only "
                                     "blocks use ```text")
                    unknown = free_names(text) - self.globals
                    self.assertFalse(unknown, "%s reads undefined globals %s"
                                     % (where, sorted(unknown)))
                    self.check_spec(where, text)
        self.assertGreater(n, 0)

    def check_spec(self, where, text):
        tmp = tempfile.mkdtemp(prefix="strata-docs-")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        ids = re.findall(r'\bid\s*=\s*"([^"]+)"', text)
        specs = self.shipped_without(os.path.join(tmp, "specs"), ids)
        name = where.replace("/", "_").replace(":", "_") + ".lua"
        with open(os.path.join(specs, name), "w") as f:
            f.write(text)
        p = strata("check", "specs", "--site",
                   os.path.join(SRC, "specs", "site.example.yaml"), cwd=tmp)
        self.assertEqual(p.returncode, 0, "%s: strata check: %s%s"
                         % (where, p.stdout, p.stderr))
        self.assertIn("ok: ", p.stdout)

    @staticmethod
    def site_with(path, text):
        """specs/site.example.yaml with the block's keys merged over it."""
        import yaml

        def merge(a, b):
            for k, v in b.items():
                if isinstance(v, dict) and isinstance(a.get(k), dict):
                    merge(a[k], v)
                else:
                    a[k] = v
            return a
        with open(os.path.join(SRC, "specs", "site.example.yaml")) as f:
            site = merge(yaml.safe_load(f), yaml.safe_load(text))
        with open(path, "w") as f:
            yaml.safe_dump(site, f)
        return path

    def test_yaml(self):
        """```yaml blocks: a thresholds block (its keys are test IDs) loads
        as a --profile over the shipped thresholds with no unknown test; a
        site block (any other keys) loads as the --site of the shipped
        specs, merged over specs/site.example.yaml (its scale: checked
        against their matrices)."""
        ids = set()
        for f in glob.glob(os.path.join(SRC, "specs", "**", "*.lua"),
                           recursive=True):
            with open(f) as h:
                ids.update(re.findall(r'\bid\s*=\s*"([^"]+)"', h.read()))
        n = 0
        for page in PAGES:
            for line, info, text in blocks(page):
                if info.split()[:1] != ["yaml"]:
                    continue
                n += 1
                where = "%s:%d" % (rel(page), line)
                with self.subTest(block=where):
                    tmp = tempfile.mkdtemp(prefix="strata-docs-yaml-")
                    self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
                    path = os.path.join(tmp, "block.yaml")
                    with open(path, "w") as f:
                        f.write(text)
                    keys = re.findall(r"^([\w.-]+):", text, re.M)
                    if keys and all(k in ids for k in keys):
                        args = ["--site", "specs/site.example.yaml",
                                "--profile", path]
                    else:  # a site fragment: over the example site file
                        args = ["--site", self.site_with(path, text)]
                    p = strata("check", "specs", *args, cwd=SRC)
                    self.assertEqual(p.returncode, 0, "%s: strata check %s: "
                                     "%s" % (where, " ".join(args), p.stderr))
                    self.assertNotIn("no loaded spec defines", p.stderr, where)
        self.assertGreater(n, 0)

    def test_module_members(self):
        wanted = {}  # module -> {name: [where]}
        for page in PAGES:
            aliases = page_aliases(page)
            for line, info, text in blocks(page):
                if info.split()[:1] not in ([], ["lua"], ["text"]):
                    continue  # another language's block (cmake, yaml...)
                where = "%s:%d" % (rel(page), line)
                for m in REQUIRE.finditer(text):
                    if m.group(3):
                        wanted.setdefault(m.group(2), {}).setdefault(
                            m.group(3)[1:], []).append(where)
                for mod, name in module_uses(text, aliases):
                    wanted.setdefault(mod, {}).setdefault(name, []).append(where)
        self.assertIn("strata.verbs", wanted)
        for mod, names in sorted(wanted.items()):
            with self.subTest(module=mod):
                p = probe("members", mod, *sorted(names))
                if p.returncode == 3:
                    self.skipTest(p.stdout.strip())  # not in this build
                missing = p.stdout.split()
                self.assertEqual(missing, [], "; ".join(
                    "%s has no '%s' (%s)" % (mod, n, ", ".join(names[n]))
                    for n in missing))


# How each documented strata command is checked here.  "run": for real in
# the page's sandbox.  "alloc": a fleet run, for real outside any Slurm
# allocation: it loads and plans everything, then stops there (exit 2; the
# fleet label's Slurm bed runs fleet runs).  "parse": through the command's
# own option table and, for run, the same loading of specs, site,
# thresholds, profile and --set as the real command (tests/docs/probe.lua),
# stopped before anything starts: these need the lab's qemu guests (the lab
# label runs `strata run --lab` for real) or a site's cluster (the whole
# runbook, an S3 endpoint).
def how(argv):
    cmd = argv[0]
    if cmd == "run":
        if "--lab" in argv:
            return "parse", "needs the lab's guests"
        if any(a == "--fleet" or a.startswith("--fleet=") for a in argv):
            return "alloc", "needs a Slurm allocation: the real command up to it"
        paths = [a for a in argv[1:] if not a.startswith("-")
                 and os.path.exists(os.path.join(SRC, a))]
        if paths and all(p.rstrip("/").startswith("specs/host") for p in paths):
            return "run", "the host rung runs on any machine"
        return "parse", "runs the site's cluster (RDMA, GPUs, S3)"
    if cmd == "site" and "--fleet" in argv and "slurm" in argv:
        return "alloc", "needs a Slurm allocation: the real command up to it"
    if cmd == "lab" and argv[1:2] == ["up"]:
        return "parse", "boots the lab's qemu guests"
    return "run", ""


# Lines that document what another branch of issue 26 is building: each
# must fail now with the message given; once it runs, the test fails until
# its entry is removed here.
# Documented lines known not to run yet: "text in the argv": (the error
# they fail with today, who is fixing it).  Empty: every line runs.
PENDING = {}

# Exit codes that mean the command ran as documented (1 is a verdict: the
# host rung may FAIL on this machine, a diff may find a change).
ALLOWED = {"run": {0, 1}, "diff": {0, 1}, "lab": {0, 3}}


def commands(page):
    """[(where, argv after strata)] of every strata command line in the
    page's ```sh blocks (continuations joined; `a && b`, `a; b` split; a
    wrapper such as salloc, time or VAR=x before it dropped)."""
    out = []
    for line, info, text in blocks(page):
        if info.split()[:1] != ["sh"]:
            continue
        logical, start = "", 0
        for i, l in enumerate(text.split("\n")):
            if not logical:
                start = line + 1 + i
            logical += l.rstrip("\\").rstrip() + " "
            if l.endswith("\\"):
                continue
            lex = shlex.shlex(logical, posix=True, punctuation_chars=True)
            lex.commenters = "#"
            lex.whitespace_split = True
            try:
                toks = list(lex)
            except ValueError:  # a quote spans lines: read on
                logical += "\n"
                continue
            cur = []
            for tok in toks + [";"]:
                if tok in ("&&", ";", "||", "|", "(", ")"):
                    progs = [j for j, t in enumerate(cur)
                             if os.path.basename(t) == "strata"]
                    if progs:
                        out.append(("%s:%d" % (rel(page), start),
                                    cur[progs[0] + 1:]))
                    cur = []
                else:
                    cur.append(tok)
            logical = ""
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Commands(unittest.TestCase):
    """Each page's strata command lines, in page order, in one sandbox per
    page: specs/, lab/, packaging/ and fixtures/ of this tree, site.yaml (and SITE, fleet.md's
    stand-in) = specs/site.example.yaml, build/strata and strata on PATH =
    the binary under test, /etc/strata/token inside the sandbox.  A journal
    a line names that no earlier line wrote is a host-rung run's."""

    def sandbox(self):
        d = tempfile.mkdtemp(prefix="strata-docs-cli-")
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        for name in ("specs", "lab", "packaging", "fixtures"):
            os.symlink(os.path.join(SRC, name), os.path.join(d, name))
        for sub in ("bin", "build", "reports", "etc/strata"):
            os.makedirs(os.path.join(d, sub))
        for link in ("bin/strata", "build/strata"):
            os.symlink(BIN, os.path.join(d, link))
        for site in ("site.yaml", "SITE"):
            shutil.copy(os.path.join(SRC, "specs", "site.example.yaml"),
                        os.path.join(d, site))
        with open(os.path.join(d, "etc/strata/token"), "w") as f:
            f.write("docs-test-token\n")
        return d

    def env(self, d):
        e = dict(os.environ)
        e["PATH"] = os.path.join(d, "bin") + ":" + e["PATH"]
        e["STRATA_LAB_DIR"] = os.path.join(d, "labdir")
        return e

    def journal_for(self, d, path):
        """A journal the line names but nothing wrote: a host-rung run's."""
        full = os.path.join(d, path)
        if os.path.exists(full):
            return
        os.makedirs(os.path.dirname(full) or d, exist_ok=True)
        xlsx = full[:-len(".jsonl")] + ".xlsx"
        p = subprocess.run([BIN, "run", "specs/host", "-o", xlsx], cwd=d,
                           env=self.env(d), capture_output=True, text=True,
                           timeout=90)
        self.assertTrue(os.path.exists(full), p.stderr)

    def serve(self, d, argv):
        """strata serve until it listens, then SIGTERM: exit 0.  The token
        file maps into the sandbox; a free port is appended (the default
        one may be taken on a shared machine)."""
        argv = [os.path.join(d, a[1:]) if a.startswith("/etc/strata/") else a
                for a in argv] + ["--port", str(free_port())]
        p = subprocess.Popen([BIN, *argv], cwd=d, env=self.env(d), text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        first = p.stdout.readline()
        p.send_signal(signal.SIGTERM)
        rest = p.communicate(timeout=30)[0]
        self.assertIn("listening on", first, first + rest)
        self.assertEqual(p.returncode, 0, first + rest)

    def allocation(self, d, where, argv):
        """A fleet line, outside any allocation: the real command loads
        everything (specs, site, thresholds, --set, --only) and plans,
        then stops at the allocation with exit 2 (the fleet label's Slurm
        bed runs fleet runs for real: tests/fleet)."""
        env = {k: v for k, v in self.env(d).items()
               if not k.startswith("SLURM_")}
        p = subprocess.run([BIN, *argv], cwd=d, env=env, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 2, where + ": " + p.stderr)
        self.assertIn("not inside a Slurm allocation", p.stderr,
                      "%s: failed before the allocation: %s" % (where, p.stderr))

    def run_line(self, d, where, argv):
        mode, why = how(argv)
        if mode == "alloc":
            return self.allocation(d, where, argv)
        if mode == "parse":
            p = subprocess.run([BIN, "lua", PROBE, "parse", *argv], cwd=d,
                               env=self.env(d), capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(p.returncode, 0, "%s (parsed only: %s): %s%s"
                             % (where, why, p.stdout, p.stderr))
            self.assertIn("parsed: ", p.stdout)
            return
        if argv[0] == "serve":
            return self.serve(d, argv)
        for a in argv:
            if a.endswith(".jsonl") and argv[0] in ("report", "diff") \
                    or a.endswith(".jsonl") and "--baseline" in argv:
                self.journal_for(d, a)
        p = subprocess.run([BIN, *argv], cwd=d, env=self.env(d),
                           capture_output=True, text=True, timeout=120)
        ok = ALLOWED.get(argv[0], {0})
        self.assertIn(p.returncode, ok, "%s: strata %s -> exit %d: %s%s" % (
            where, " ".join(argv), p.returncode, p.stdout, p.stderr))
        self.assertNotIn("usage:", p.stderr, where)
        self.assertNotIn("Traceback", p.stderr, where)
        for opt, val in zip(argv, argv[1:]):  # what -o names was written
            if opt in ("-o", "--output"):
                self.assertTrue(os.path.exists(os.path.join(d, val)),
                                "%s: no %s" % (where, val))

    def test_every_line(self):
        n = {"run": 0, "parse": 0, "alloc": 0}
        for page in PAGES:
            lines = commands(page)
            if not lines:
                continue
            d = self.sandbox()
            for where, argv in lines:
                with self.subTest(line=where, argv=" ".join(argv)):
                    self.assertTrue(argv, where + ": strata with no command")
                    mode, why = how(argv)
                    n[mode] += 1
                    print("%s: %s%s: strata %s" % (
                        where, mode, " (%s)" % why if why else "",
                        " ".join(argv)), file=sys.stderr)
                    pending = [v for k, v in PENDING.items()
                               if k in " ".join(argv)]
                    if not pending:
                        self.run_line(d, where, argv)
                        continue
                    want, who = pending[0]
                    try:
                        self.run_line(d, where, argv)
                    except AssertionError as e:
                        self.assertIn(want, str(e), where)
                        print("  PENDING (%s): fails as expected: %s"
                              % (who, want), file=sys.stderr)
                        continue
                    self.fail("%s runs now: remove its PENDING entry (%s)"
                              % (where, who))
        print("docs commands: %(run)d run here, %(alloc)d up to the Slurm "
              "allocation, %(parse)d parsed only" % n,
              file=sys.stderr)
        self.assertGreater(n["run"], 0)


if __name__ == "__main__":
    unittest.main()
