#!/usr/bin/python3
"""GPU specs and primitives through the real binary on a host without a
GPU (CI): every G test must SKIP with the reason, nothing may crash, and
every primitive must raise a SKIP (not an error) naming what is missing.
On a host with a GPU the same tests accept PASS/FAIL verdicts instead.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BIN = os.environ.get("STRATA_BIN", "build/strata")
SRC = os.environ.get("STRATA_SRC", ".")

PROBE = r'''
local cuda = require "strata.cuda"
local cjson = require "cjson"
local out = { built = cuda.built() }
out.available, out.why = cuda.available()
local calls = {
  count = function() return cuda.count() end,
  devices = function() return cuda.devices() end,
  nvml = function() return cuda.nvml() end,
  nvml_sample = function() return cuda.nvml_sample() end,
  alloc = function() return cuda.alloc { size = 4096 } end,
  pinned = function() return cuda.alloc { size = 4096, kind = "pinned" } end,
  copy_bw = function() return cuda.copy_bw { dir = "h2d", size = 4096 } end,
  kernel_check = function() return cuda.kernel_check() end,
}
out.calls = {}
for name, f in pairs(calls) do
  local ok, e = pcall(f)
  out.calls[name] = ok and "ok" or (type(e) == "table" and e.skip and
    ("SKIP " .. e.skip) or ("ERROR " .. tostring(e)))
end
-- misuse still raises a plain error (never a SKIP)
local ok, e = pcall(cuda.alloc, { size = 1, bogus = 1 })
out.misuse = tostring(e)
ok, e = pcall(cuda.copy_bw, { dir = "sideways" })
out.baddir = tostring(e)
print(cjson.encode(out))
'''


def run(*args, timeout=50):
    return subprocess.run([BIN, *args], capture_output=True, text=True,
                          timeout=timeout)


class NoGpu(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="strata-gpu-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def test_primitives_skip_with_reason(self):
        probe = os.path.join(self.tmp, "probe.lua")
        with open(probe, "w") as f:
            f.write(PROBE)
        p = run("lua", probe)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertIn("unknown option 'bogus'", out["misuse"])
        self.assertIn("dir must be h2d, d2h, d2d or p2p", out["baddir"])
        if out["available"]:
            self.skipTest("this host has a CUDA GPU")
        self.assertTrue(out["why"])
        for name, res in out["calls"].items():
            self.assertTrue(res.startswith("SKIP "), "%s: %s" % (name, res))
            self.assertGreater(len(res), 12, name)
        # the reason names what is missing, not just "failed"
        self.assertRegex(out["calls"]["devices"],
                         "libcuda|driver|built without CUDA|no CUDA device")
        self.assertRegex(out["calls"]["nvml"], "libnvidia-ml|NVML|driver")

    def test_specs_skip_through_runner(self):
        site = os.path.join(self.tmp, "site.yaml")
        with open(site, "w") as f:
            f.write("site:\n  name: ci\ngpu:\n  count: 8\n")
        xlsx = os.path.join(self.tmp, "run.xlsx")
        p = run("run", os.path.join(SRC, "specs/gpu"), "--site", site,
                "-o", xlsx)
        self.assertIn(p.returncode, (0, 1), p.stderr)   # never 2, never a signal
        with open(xlsx[:-5] + ".jsonl") as f:
            recs = [json.loads(l) for l in f if l.strip()]
        res = {}
        for r in recs:
            if r["type"] == "result":
                res.setdefault(r["id"], []).append(r)
        self.assertEqual(sorted(res), ["G1", "G2", "G3", "G4", "G5"])
        if any(r["status"] in ("PASS", "FAIL") for rs in res.values()
               for r in rs):
            self.skipTest("this host has a GPU: verdicts, not SKIPs")
        for tid, rs in res.items():
            for r in rs:
                self.assertEqual(r["status"], "SKIP", (tid, r))
                self.assertTrue(r["reason"], (tid, r))
        self.assertIn("libnvidia-ml.so.1", res["G1"][0]["reason"])
        self.assertRegex(res["G2"][0]["reason"],
                         "libcuda|built without CUDA")
        self.assertIn("needs G2", res["G4"][0]["reason"])
        # all SKIP is not a failure; the workbook says why, test by test
        self.assertEqual(p.returncode, 0, p.stderr)
        import openpyxl
        ws = openpyxl.load_workbook(xlsx)["Summary"]
        rows = {r[0]: r for r in ws.iter_rows(values_only=True)
                if r and r[0] in res}
        self.assertEqual(sorted(rows), sorted(res))
        for tid, r in rows.items():
            self.assertIn("SKIP", r, (tid, r))
        self.assertTrue(any(isinstance(c, str) and "libnvidia-ml.so.1" in c
                            for c in rows["G1"]), rows["G1"])

    def test_specs_check(self):
        p = run("check", os.path.join(SRC, "specs/gpu"))
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)


if __name__ == "__main__":
    unittest.main()
