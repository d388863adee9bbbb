"""strata site init: a site file from the node (or a recorded tree), each
value with where it came from, TODOs that check names and a run leaves
out, and a merge that keeps every byte the user wrote (issue 27)."""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import SRC, Tmp, strata, journal, results  # noqa: E402

TWO = os.path.join(SRC, "fixtures/host/two-socket")
GPU = os.path.join(SRC, "fixtures/host/gpu-node")
NVML = os.path.join(SRC, "fixtures/gpu/h200x2/strata-nvml.json")


def init(*args):
    p = strata("site", "init", *args, cwd=SRC)
    return p


def key_line(text, key):
    """The line of `  key: ...` (first match)."""
    m = re.search(r"^  " + re.escape(key) + r":.*$", text, re.M)
    return m and m.group(0)


class Init(Tmp):
    def test_recorded_tree(self):
        p = init("--root", TWO)
        self.assertEqual(p.returncode, 0, p.stderr)
        t = p.stdout
        # each value with where it came from (the tree's own files)
        self.assertRegex(key_line(t, "cpus"),
                         r"cpus: 8 +# .*two-socket/sys/devices/system/cpu/"
                         r"online: 0-7$")
        self.assertRegex(key_line(t, "numa_nodes"), r"numa_nodes: 2 +# ")
        self.assertRegex(key_line(t, "device"), r"device: irdma0 +# .*/sys/"
                         r"class/infiniband/irdma0/ports/1/state: 4: ACTIVE")
        self.assertRegex(key_line(t, "line_rate_gbps"),
                         r"line_rate_gbps: 400 +# .*/sys/class/infiniband/"
                         r"irdma0/ports/1/rate: 400 Gb/sec \(4X NDR\)$")
        # the rail's GPU for R4/R5: the one on the NIC's NUMA node (the
        # tree: GPU 0000:01:00.0 and irdma0 on node 0, 0000:81:00.0 on 1)
        self.assertIn('    - { device: irdma0, gpu: "0000:01:00.0", port: 1 }', t)
        self.assertRegex(key_line(t, "devices"), r"gpu: the nearest by PCI "
                         r"path and NUMA node \(H2\): irdma0 PHB node 0$")
        # what the node cannot tell is a TODO with a line saying what
        self.assertRegex(key_line(t, "endpoint"), r"endpoint: TODO +# TODO: ")
        self.assertRegex(key_line(t, "peer"), r"peer: TODO +# TODO: ")

    def test_rails_gpus(self):
        # fixtures/host/two-rail (constructed, tests/host/make_two_rail.sh):
        # four E810 ports, each on a PCIe switch with two of the 8 GPUs;
        # every rail gets the first GPU of its own switch, and a run of H2
        # on the tree shows the same pairing
        rail = os.path.join(SRC, "fixtures/host/two-rail")
        p = init("--root", rail)
        self.assertEqual(p.returncode, 0, p.stderr)
        for dev, gpu in (("irdma0", "0000:03:00.0"), ("irdma1", "0000:08:00.0"),
                         ("irdma2", "0000:83:00.0"), ("irdma3", "0000:88:00.0")):
            self.assertIn('    - { device: %s, gpu: "%s", port: 1 }' % (dev, gpu),
                          p.stdout)
        self.assertRegex(key_line(p.stdout, "devices"),
                         r"irdma0 PXB node 0, irdma1 PXB node 0, irdma2 PXB "
                         r"node 1, irdma3 PXB node 1$")
        site = self.path("h2.yaml")
        open(site, "w").write("host:\n  root: %s\n  max_cross_numa_pairs: 0\n"
                              % rail)
        out = self.path("h2.xlsx")
        r = strata("run", os.path.join(SRC, "specs/host/H2.lua"), "--site", site,
                   "-o", out, cwd=SRC)
        self.assertEqual(r.returncode, 0, r.stderr)
        import openpyxl
        rows = [x for x in openpyxl.load_workbook(out).worksheets[1]
                .iter_rows(values_only=True)]
        at = [i for i, x in enumerate(rows)
              if x[0] == "GPU per RDMA device (R4/R5)"][0]
        got = [x[:4] for x in rows[at + 2:at + 6]]
        self.assertEqual(got, [("irdma0", "0000:03:00.0", 0, "PXB"),
                               ("irdma1", "0000:08:00.0", 0, "PXB"),
                               ("irdma2", "0000:83:00.0", 1, "PXB"),
                               ("irdma3", "0000:88:00.0", 1, "PXB")])

    def test_recorded_nvml(self):
        p = init("--root", GPU, "--nvml", NVML)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(key_line(p.stdout, "count"),
                         r"count: 2 +# .*strata-nvml.json \(driver "
                         r"580.159.04\): 2 x NVIDIA H200$")
        self.assertRegex(key_line(p.stdout, "model"), r'model: "NVIDIA H200"')
        self.assertRegex(key_line(p.stdout, "topology"), r"topology: TODO")
        # the GPU machine's file: check accepts it once only the TODOs are
        # filled, and chooses the pack for the H200 it names
        site = self.path("gpu.yaml")
        text = p.stdout.replace("busbw_gbs: TODO", "busbw_gbs: 300")
        text = re.sub(r"\ns3:\n(  .*\n)*", "\n", text)
        text = re.sub(r"\n  topology: TODO[^\n]*", "", text)
        open(site, "w").write(text)
        c = strata("check", "--site", site, cwd=SRC)
        self.assertEqual(c.returncode, 0, c.stderr)
        self.assertIn('hardware pack gpu-pcie-gen5-x16: site.gpu.model '
                      '"NVIDIA H200" contains H200', c.stdout)

    def test_recorded_h100_machine(self):
        # fixtures/host/h100-node: the H100 device machine's tree
        h100 = os.path.join(SRC, "fixtures/host/h100-node")
        p = init("--golden", "--root", h100)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(key_line(p.stdout, "count"),
                         r"count: 1 +# .*h100-node/sys/bus/pci/devices/\*/"
                         r"class 0x03xxxx, vendor 0x10de \(0000:00:06.0")
        self.assertIsNone(key_line(p.stdout, "model"))   # no NVML: no name
        self.assertRegex(key_line(p.stdout, "kernel"),
                         r'kernel: "6.18.44-fc-v1272-gpu" +# .*h100-node/proc/'
                         r"sys/kernel/osrelease$")
        self.assertIn("    - { mtu: 1400, name: eth0 }", p.stdout)
        self.assertRegex(key_line(p.stdout, "busbw_gbs"), r"busbw_gbs: TODO")

    def test_this_host_then_check_and_run(self):
        site = self.path("site.yaml")
        p = init("-o", site)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("wrote " + site, p.stderr)
        # check names the TODOs until they are filled
        p = strata("check", "--site", site, cwd=SRC)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertRegex(p.stderr, site + r":\d+: \d+ TODOs to fill .*"
                         r"s3.endpoint \(line \d+\)")
        # filled, check accepts it (the S3 section deleted: no endpoint)
        text = open(site).read()
        text = re.sub(r"\ns3:\n(  .*\n)*", "\n", text)
        text = text.replace("max_lat_us: TODO", "max_lat_us: 50")
        text = text.replace("max_tail_ratio: TODO", "max_tail_ratio: 3")
        text = re.sub(r"\n  peer: TODO[^\n]*", "", text)
        text = text.replace("busbw_gbs: TODO", "busbw_gbs: 100")
        text = re.sub(r"\n  topology: TODO[^\n]*", "", text)
        open(site, "w").write(text)
        self.assertNotIn("TODO", text.split("\n", 6)[-1])
        p = strata("check", "--site", site, cwd=SRC)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # and H1 judges this host against what init wrote
        p = strata("run", "specs/host", "--only", "H1", "--site", site,
                   "-o", self.path("h1.xlsx"), cwd=SRC)
        r = results(journal(self.path("h1.jsonl")))["H1"][0]
        by = {c["metric"]: c for c in r["checks"]}
        self.assertTrue(by["cpus_online"]["ok"], r)
        self.assertTrue(by["numa_nodes"]["ok"], r)


class Merge(Tmp):
    def test_rerun_changes_nothing(self):
        site = self.path("site.yaml")
        self.assertEqual(init("--root", TWO, "-o", site).returncode, 0)
        # the user edits values and comments
        text = open(site).read()
        text = text.replace("cpus: 8 ", "cpus: 6 ").replace(
            "line_rate_gbps: 400", "line_rate_gbps: 200  # my own note")
        text = text.replace("endpoint: TODO", "endpoint: http://s3.x:9000")
        open(site, "w").write(text)
        before = open(site, "rb").read()
        p = init("--root", TWO, "-o", site)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("nothing changed", p.stderr)
        self.assertEqual(open(site, "rb").read(), before)

    def test_deleted_todos_stay_deleted(self):
        # deleting a TODO answers it (no peer: loopback; no s3: no S3
        # tests): a second init does not ask again
        site = self.path("site.yaml")
        self.assertEqual(init("--root", TWO, "-o", site).returncode, 0)
        text = open(site).read()
        text = re.sub(r"\ns3:\n(  .*\n)*", "\n", text)
        text = re.sub(r"\n  peer: TODO[^\n]*", "", text)
        open(site, "w").write(text)
        before = open(site, "rb").read()
        p = init("--root", TWO, "-o", site)
        self.assertIn("nothing changed", p.stderr)
        self.assertEqual(open(site, "rb").read(), before)

    def test_adds_only_missing_keys(self):
        site = self.path("site.yaml")
        user = ("# my site\nsite:\n  name: mine   # kept\n"
                "host:\n  cpus: 6\n\n# rdma below, by hand\n"
                "rdma: { device: mlx5_9 }\n")
        open(site, "w").write(user)
        p = init("--root", TWO, "-o", site)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = open(site).read()
        # every line the user wrote is still there, in order
        self.assertTrue(out.startswith("# my site\nsite:\n  name: mine   # "
                                       "kept\nhost:\n  cpus: 6\n  numa_nodes:"
                                       " 2 "), out)
        self.assertIn("\n\n# rdma below, by hand\nrdma: { device: mlx5_9 }\n",
                      out)
        # a flow-style section is left alone, and said so
        self.assertIn("rdma: not a block mapping", p.stderr)
        self.assertNotIn("irdma0", out)
        # a section the file lacked is appended
        self.assertIn("# added by strata site init\ngpu:\n  count: 2", out)
        self.assertIn("added host.numa_nodes, gpu.count", p.stderr)
        # and a second run is a no-op, byte for byte
        before = open(site, "rb").read()
        p = init("--root", TWO, "-o", site)
        self.assertEqual(open(site, "rb").read(), before, p.stderr)


class Todos(Tmp):
    def test_run_leaves_todos_out(self):
        site = self.path("site.yaml")
        self.assertEqual(init("-o", site).returncode, 0)
        p = strata("run", "specs/host", "--only", "H1", "--site", site,
                   "-o", self.path("h1.xlsx"), cwd=SRC)
        self.assertIn("TODOs left out of this run", p.stderr)
        self.assertIn("s3.endpoint", p.stderr)
        r = results(journal(self.path("h1.jsonl")))["H1"][0]
        self.assertNotEqual(r["status"], "ERROR", r)


class Packs(Tmp):
    """Hardware packs: chosen from the site's facts, overridable, judged
    with their own file:line, named on the Run sheet."""
    G4 = """
test {
  id = "G4", layer = "gpu", title = "copies vs link (recorded figures)",
  run = function() return { gbps = 25.0, link_gbps = LINK } end,
}
"""

    def run_g4(self, link, site_text):
        spec = self.path("g4.lua")
        open(spec, "w").write(self.G4.replace("LINK", str(link)))
        site = self.path("site.yaml")
        open(site, "w").write(site_text)
        p = strata("run", spec, "--site", site, "-o", self.path("g4.xlsx"),
                   cwd=SRC)
        return p, results(journal(self.path("g4.jsonl")))["G4"][0]

    def test_gpu_pack_judges_the_link(self):
        h100 = 'gpu:\n  count: 8\n  model: "NVIDIA H100 80GB HBM3"\n'
        # a GPU whose best link is Gen4 x16 (31.5 GB/s): the pack FAILs it
        p, r = self.run_g4(31.5, h100)
        self.assertIn('hardware pack gpu-pcie-gen5-x16: site.gpu.model '
                      '"NVIDIA H100 80GB HBM3" contains H100', p.stderr)
        self.assertEqual(r["status"], "FAIL", r)
        self.assertIn("link_gbps = 31.5, wanted >= 63", r["reason"])
        src = [c["source"] for c in r["checks"] if c["metric"] == "link_gbps"]
        self.assertRegex(src[0], r"specs/packs/gpu-pcie-gen5-x16.yaml:\d+$")
        # Gen5 x16 as NVML reports it (fixtures/gpu/h200x2: 63.015)
        p, r = self.run_g4(63.015384615385, h100)
        self.assertEqual(r["status"], "PASS", r)
        # the Run sheet names the pack and why
        import openpyxl
        ws = openpyxl.load_workbook(self.path("g4.xlsx"))["Run"]
        rows = {row[0]: row[1] for row in ws.iter_rows(values_only=True)}
        self.assertIn("gpu-pcie-gen5-x16 (site.gpu.model", rows["Hardware packs"])
        # another GPU: no pack, the Gen4 link is not judged by it
        p, r = self.run_g4(31.5, 'gpu:\n  model: "NVIDIA A100-SXM4-80GB"\n')
        self.assertEqual(r["status"], "PASS", r)
        self.assertNotIn("gpu-pcie-gen5-x16", p.stderr)

    def test_override(self):
        h100 = 'gpu:\n  model: "NVIDIA H100 80GB HBM3"\n'
        p, r = self.run_g4(31.5, "site:\n  packs: []\n" + h100)
        self.assertEqual(r["status"], "PASS", r)
        ws = __import__("openpyxl").load_workbook(self.path("g4.xlsx"))["Run"]
        rows = {row[0]: row[1] for row in ws.iter_rows(values_only=True)}
        self.assertTrue(rows["Hardware packs"].startswith("none"))
        p, r = self.run_g4(31.5, "site:\n  packs: [gpu-pcie-gen5-x16]\n")
        self.assertEqual(r["status"], "FAIL", r)
        self.assertIn("site.packs names it", p.stderr)
        site = self.path("bad.yaml")
        open(site, "w").write("site:\n  packs: [gpu-b900]\n")
        p = strata("check", "--site", site, cwd=SRC)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn('site.packs: no pack "gpu-b900" (known: '
                      'gpu-pcie-gen5-x16, nic-bluefield-3, nic-connectx-7, '
                      'nic-connectx-8, rdma-line-rate, rdma-pcie-link)', p.stderr)

    def test_rdma_pack_from_site_init(self):
        site = self.path("site.yaml")
        self.assertEqual(init("--root", TWO, "-o", site).returncode, 0)
        p = strata("check", "--site", site, cwd=SRC)
        # TODOs first; the pack is chosen from what init wrote
        text = open(site).read().replace("TODO", "3")
        text = re.sub(r"\n  peer: 3[^\n]*", "", text)
        text = re.sub(r"\ns3:\n(  .*\n)*", "\n", text)
        text = re.sub(r"\n  topology: 3[^\n]*", "", text)
        open(site, "w").write(text)
        p = strata("check", "--site", site, cwd=SRC)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("hardware pack rdma-line-rate: RDMA port irdma0 at 400 "
                      "Gb/s (site.rdma.line_rate_gbps)", p.stdout)


class PackTrees(Tmp):
    """The packs chosen from each tree of fixtures/host/packs (made by
    tests/host/make_pack_trees.sh from public sources), and the limits
    `strata check --criteria` resolves for them."""
    TREES = os.path.join(SRC, "fixtures/host/packs")

    def criteria(self, tree, extra=""):
        site = self.path(tree + ".yaml")
        open(site, "w").write("host:\n  root: %s\n%s" % (
            os.path.join(self.TREES, tree), extra))
        p = strata("check", "--criteria", "--site", site, "specs", cwd=SRC)
        self.assertEqual(p.returncode, 0, p.stderr)
        packs = dict(re.findall(r"^hardware pack (\S+): (.*)$", p.stderr, re.M))
        rows = {}
        for line in p.stdout.splitlines():
            f = line.split()
            if len(f) > 4 and f[0] in ("R1", "G4"):
                rows[(f[0], f[1])] = (f[2], f[-1])
        return packs, rows

    def test_e810(self):
        packs, rows = self.criteria("e810")
        self.assertEqual(sorted(packs), ["rdma-pcie-link"])
        self.assertIn("irdma0 at 0000:3b:00.0: PCIe 16.0 GT/s x16",
                      packs["rdma-pcie-link"])
        self.assertRegex(rows[("R1", "pcie_line_ratio")][1],
                         r"specs/packs/rdma-pcie-link.yaml:\d+$")
        self.assertEqual(rows[("R1", "pcie_link_ratio")][0], ">=")
        # no E810 model pack: no Intel host-link figure (docs/site.md)
        self.assertNotIn(("R1", "pcie_gts_min"), rows)

    def test_connectx7(self):
        packs, rows = self.criteria("connectx7")
        self.assertEqual(sorted(packs), ["nic-connectx-7", "rdma-pcie-link"])
        self.assertIn("mlx5_0 at 0000:17:00.0 is PCI 15b3:1021",
                      packs["nic-connectx-7"])
        self.assertRegex(rows[("R1", "pcie_gts_min")][1],
                         r"specs/packs/nic-connectx-7.yaml:\d+$")
        self.assertIn(("R1", "pcie_width_min"), rows)

    def test_connectx8(self):
        packs, rows = self.criteria("connectx8")
        self.assertEqual(sorted(packs), ["nic-connectx-8", "rdma-pcie-link"])
        self.assertIn("mlx5_0 at 0000:18:00.0 is PCI 15b3:1023",
                      packs["nic-connectx-8"])
        self.assertIn("mlx5_0 at 0000:18:00.0: PCIe 64.0 GT/s x16",
                      packs["rdma-pcie-link"])
        for m in ("pcie_gts_min", "pcie_width_min"):
            self.assertRegex(rows[("R1", m)][1],
                             r"specs/packs/nic-connectx-8.yaml:\d+$")

    def test_b300(self):
        packs, rows = self.criteria("b300")
        self.assertEqual(sorted(packs), ["gpu-pcie-gen5-x16"])
        self.assertIn("0000:19:00.0 is PCI 10de:3182", packs["gpu-pcie-gen5-x16"])
        self.assertRegex(rows[("G4", "link_gbps")][1],
                         r"specs/packs/gpu-pcie-gen5-x16.yaml:\d+$")
        # overridable: none, whatever the tree shows
        packs, rows = self.criteria("b300", "site:\n  packs: []\n")
        self.assertEqual(packs, {})
        self.assertNotIn(("G4", "link_gbps"), rows)

    R1 = """
local pcie, sys = require "strata.lib.pcie", require "strata.sys"
test {
  id = "R1", layer = "verbs", title = "links of a recorded tree",
  run = function(t)
    local m = { ports_missing = 0, ports_not_active = 0 }
    pcie.rdma_link_metrics(sys.inventory { root = t.site.host.root },
      { { device = "DEV", port = 1 } }, { ["DEV.1"] = RATE }, m)
    return m
  end,
}
"""

    def run_r1(self, tree, dev, rate):
        spec = self.path("r1.lua")
        open(spec, "w").write(self.R1.replace("DEV", dev).replace(
            "RATE", str(rate)))
        site = self.path("r1.yaml")
        open(site, "w").write("host:\n  root: %s\n" % os.path.join(
            self.TREES, tree))
        p = strata("run", spec, "--site", site, "-o", self.path("r1.xlsx"),
                   cwd=SRC)
        return results(journal(self.path("r1.jsonl")))["R1"][0]

    def test_packs_judge_the_measured_link(self):
        # the E810's Gen4 x16 (252 Gb/s) carries its 100 Gb/s port ...
        r = self.run_r1("e810", "irdma0", 100)
        self.assertEqual(r["status"], "PASS", r)
        # ... not a 400 Gb/s one: rdma-pcie-link FAILs R1, with its source
        r = self.run_r1("e810", "irdma0", 400)
        self.assertEqual(r["status"], "FAIL", r)
        self.assertIn("pcie_line_ratio = 0.63", r["reason"])
        src = [c["source"] for c in r["checks"]
               if c["metric"] == "pcie_line_ratio"]
        self.assertRegex(src[0], r"specs/packs/rdma-pcie-link.yaml:\d+$")
        # ConnectX-7 at Gen5 x16: nic-connectx-7 and rdma-pcie-link hold
        r = self.run_r1("connectx7", "mlx5_0", 400)
        self.assertEqual(r["status"], "PASS", r)
        self.assertIn("pcie_gts_min", [c["metric"] for c in r["checks"]])
        # the Run sheet names each pack and why
        import openpyxl
        ws = openpyxl.load_workbook(self.path("r1.xlsx"))["Run"]
        rows = {row[0]: row[1] for row in ws.iter_rows(values_only=True)}
        self.assertIn("nic-connectx-7 (mlx5_0 at 0000:17:00.0 is PCI "
                      "15b3:1021", rows["Hardware packs"])
        self.assertIn("rdma-pcie-link (mlx5_0 at 0000:17:00.0: PCIe 32.0 GT/s"
                      " x16", rows["Hardware packs"])
        # ConnectX-8 at Gen6 x16 (1024 Gb/s) carries its 800 Gb/s XDR port;
        # nic-connectx-8 judges the link Gen5 x16 or better
        r = self.run_r1("connectx8", "mlx5_0", 800)
        self.assertEqual(r["status"], "PASS", r)
        src = {c["metric"]: c["source"] for c in r["checks"]}
        self.assertRegex(src["pcie_gts_min"],
                         r"specs/packs/nic-connectx-8.yaml:\d+$")
        self.assertRegex(src["pcie_line_ratio"],
                         r"specs/packs/rdma-pcie-link.yaml:\d+$")
        ws = openpyxl.load_workbook(self.path("r1.xlsx"))["Run"]
        rows = {row[0]: row[1] for row in ws.iter_rows(values_only=True)}
        self.assertIn("nic-connectx-8 (mlx5_0 at 0000:18:00.0 is PCI "
                      "15b3:1023", rows["Hardware packs"])
        # the same card trained to Gen4 in a Gen4 slot ("5.0 and 4.0
        # compatible"): nic-connectx-8 FAILs R1 on the generation
        import shutil
        gen4 = self.path("connectx8-gen4")
        shutil.copytree(os.path.join(self.TREES, "connectx8"), gen4,
                        symlinks=True)
        fn = os.path.join(gen4, "sys/devices/pci0000:00/0000:00:02.0/"
                          "0000:18:00.0")
        for f in ("current_link_speed", "max_link_speed"):
            open(os.path.join(fn, f), "w").write("16.0 GT/s PCIe\n")
        r = self.run_r1(gen4, "mlx5_0", 800)
        self.assertEqual(r["status"], "FAIL", r)
        bad = {c["metric"]: c["source"] for c in r["checks"] if not c["ok"]}
        self.assertRegex(bad["pcie_gts_min"],
                         r"specs/packs/nic-connectx-8.yaml:\d+$")

    def test_gpu_names_as_nvml_gives_them(self):
        # a word of the name: B300 and B200 hold, GB200 / GH200 do not
        # (their host link is NVLink-C2C, not PCIe)
        for name, want in (("NVIDIA B300 SXM6 AC", True), ("NVIDIA B200", True),
                           ("NVIDIA GB200", False), ("NVIDIA GH200 480GB", False)):
            packs, _ = self.criteria("e810", 'gpu:\n  model: "%s"\n' % name)
            self.assertEqual("gpu-pcie-gen5-x16" in packs, want, name)


class Golden(Tmp):
    """site init --golden records the node's configuration; H4 names each
    setting a node differs in (one metric per setting, judged by the
    criterion differs.* <= 0)."""

    def test_golden_then_h4(self):
        site = self.path("site.yaml")
        p = init("--golden", "--root", TWO, "-o", site)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = open(site).read()
        self.assertRegex(text, r'\ngolden:\n  kernel: "6.12.0-constructed" +# '
                         r'.*two-socket/proc/sys/kernel/osrelease\n')
        self.assertIn("    - { driver: ice, mtu: 9000, name: ens1f0 }", text)
        # H4 on the same tree: every setting the same
        text = text.replace("host:\n", "host:\n  root: %s\n" % TWO, 1)
        open(site, "w").write(text)

        def h4():
            p = strata("run", "specs/host", "--only", "H4", "--site", site,
                       "-o", self.path("h4.xlsx"), cwd=SRC)
            return p, results(journal(self.path("h4.jsonl")))["H4"][0]
        p, r = h4()
        self.assertEqual(r["status"], "PASS", p.stderr)
        self.assertEqual(r["metrics"]["differences"], 0)
        self.assertEqual(r["metrics"]["differs.nics.ens1f0.mtu"], 0)
        # one node's MTU and driver differ from the golden: FAIL naming both
        open(site, "w").write(text.replace("driver: ice, mtu: 9000",
                                           "driver: mlx5_core, mtu: 4200"))
        p, r = h4()
        self.assertEqual(r["status"], "FAIL", p.stderr)
        self.assertIn("differs.nics.ens1f0.driver = 1, wanted <= 0",
                      r["reason"])
        self.assertIn("differs.nics.ens1f0.mtu = 1, wanted <= 0", r["reason"])
        self.assertIn("nics.ens1f0.mtu: golden 4200, this node 9000",
                      r["notes"])
        # a golden none of whose settings this node can answer (a
        # recorded tree: no NCCL library read): SKIP, never a FAIL
        open(site, "w").write("host:\n  root: %s\ngolden:\n  nccl: \"2.28.3\"\n" % TWO)
        p, r = h4()
        self.assertEqual(r["outcome"]["kind"], "skip", p.stderr)
        self.assertIn("none of the golden's 1 settings is present", r["outcome"]["why"])
        # no golden: H4 SKIPs and says how to record one
        open(site, "w").write("site:\n  name: x\n")
        p, r = h4()
        self.assertEqual(r["outcome"]["kind"], "skip")
        self.assertIn("strata site init --golden", r["outcome"]["why"])

    def test_live_golden_fields(self):
        """On this host: rdma-core from libibverbs's real file name, NCCL
        from ncclGetVersion where the library is, and PFC/trust "not
        present" (no NIC here answers DCB netlink: virtio_net, veth)."""
        site = self.path("live.yaml")
        p = init("--golden", "-o", site)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = open(site).read()
        lib = "/usr/lib/x86_64-linux-gnu/libibverbs.so.1"
        if os.path.exists(lib):
            ver = re.match(r"libibverbs\.so\.1\.\d+\.(\d+\.\d+)$",
                           os.path.basename(os.path.realpath(lib))).group(1)
            self.assertRegex(text, r'\n  rdma_core: "%s" +# %s -> ' % (
                re.escape(ver), re.escape(lib)))
        self.assertNotIn("pfc:", text)
        self.assertNotIn("trust:", text)
        # a golden that names PFC and an NCCL version: on this node both
        # are "not present" (shown, not judged), the rest PASS
        doc = text.replace("    - { driver:", "    - { pfc: \"3\", driver:")
        if "\n  nccl:" not in doc:
            doc = doc.replace("\ngolden:\n", '\ngolden:\n  nccl: "2.28.3"\n', 1)
        self.assertIn("pfc:", doc)
        open(site, "w").write(doc)
        p = strata("run", "specs/host", "--only", "H4", "--site", site,
                   "-o", self.path("h4.xlsx"), cwd=SRC)
        r = results(journal(self.path("h4.jsonl")))["H4"][0]
        self.assertEqual(r["status"], "PASS", p.stderr)
        self.assertGreaterEqual(r["metrics"]["not_present"], 1)
        self.assertTrue(any(re.match(r"nics\.\S+\.pfc: golden 3, not present "
                                     r"on this node \(not judged\)", n)
                            for n in r["notes"]), r["notes"])
        names = [t["name"] for t in r["tables"]]
        self.assertEqual(names, ["Node configuration", "Golden configuration"])

    def test_fleet_k8s_without_api_server(self):
        """--fleet k8s is written against the API strata.k8s speaks and
        never ran against a real cluster: here (no API server) it stops
        with the reason, exit 2."""
        p = strata("site", "init", "--fleet", "k8s", cwd=SRC,
                   env={"KUBERNETES_SERVICE_HOST": ""})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("SKIP: no Kubernetes API server here: not inside a "
                      "Kubernetes pod (KUBERNETES_SERVICE_HOST/PORT are not "
                      "set)", p.stderr)


if __name__ == "__main__":
    unittest.main()
