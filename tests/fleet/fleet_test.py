#!/usr/bin/python3
"""fleet_test.py STRATA BEDDIR RGWDIR WORKDIR MODE: strata run --fleet slurm
on the local Slurm cluster of slurm.sh (and the RGW of lab/rgw.sh).

run     salloc -N 3: the per-node rungs on every node, R2/R3 on a ring of
        pairs, R7 incast into one node from the others, B01 from three
        clients at once against the RGW; the workbook, JSON and JUnit read
        back: node x rung matrix, pair matrix, incast, S3 aggregate with
        merged percentiles recomputed here from the journal's samples.
sbatch  the shipped packaging/slurm/strata-fleet.sbatch, submitted with
        sbatch -N 3 --wait: the batch script runs on the job's first node
        (inside its namespace) and writes the fleet outputs.
rdma    salloc -p rdma -N 3 on the RDMA nodes (the lab's Soft-RoCE qemu
        guests running slurmd: slurm.sh guests-up): R2 between node pairs
        and R7 incast with senders from the allocation over real (emulated)
        RoCEv2, B01 from the three guests at once against the RGW; then a
        second run in which g3's agent is killed inside its guest mid-run:
        g3 ERROR, the pair whose far end it is ERROR, g1 and g2 stand.
diag    salloc -p rdma -N 3, twice: no fault (no suspect, no FLAKY), then
        g2's RDMA link held up (slurm.sh link) and FT3 failing its first try
        on g3 (--until-pass 2): g2 the suspect with its pairs as evidence,
        FT3 FLAKY on g3, g3 a flaky node; the heatmap drawn.
golden  salloc -p rdma -N 3: g2's eth0 MTU set apart inside the guest, then
        `strata site init --fleet slurm` (the majority's golden, g2 named)
        and H4 across the nodes: FAIL on g2 naming the MTU, the Summary's
        configuration rows against the golden and the majority.
rails   salloc -p rdma -N 3: rxe1 added in each guest on its tap NIC, R1-R3
        with site.rdma.devices rxe0, rxe1 and cross_rail: pairs per device,
        same rail PASS, cross rail (no route between the subnets) ERROR in
        seconds, a rail finding and no suspect (docs/fleet.md "Rails").
timeout salloc -N 3: fleet_run's own timeout stops a run for real: salloc's
        session killed, the job cancelled, nothing left in the nodes.
faults  salloc -N 5: n2's `strata node` killed mid-run, n3's stopped
        (SIGSTOP: hung), n4's agent port taken before its agent starts,
        n5's agent killed mid-run (pairs run the slow fixture FT1, so the
        pair rounds take long enough); n2-n5 are ERROR with their
        reasons, the pairs whose far end is n4 or n5 are ERROR, n1 stands.
"""
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import openpyxl

strata, bed, rgw, work, mode = sys.argv[1:6]
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
os.makedirs(work, exist_ok=True)
fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        fails.append(what)


def envfile(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            out[k] = v.strip('"')
    return out


bedenv = envfile(os.path.join(bed, "env"))
env = dict(os.environ)
env["SLURM_CONF"] = bedenv["SLURM_CONF"]
env.pop("AWS_CA_BUNDLE", None)
netns = dict(zip(bedenv["FLEET_NODES"].split(), bedenv["FLEET_NETNS"].split()))


def records(path):
    out = []
    with open(path) as f:
        for line in f:
            out.append(json.loads(line))
    return out


def sheet_rows(ws):
    return [list(r) for r in ws.iter_rows(values_only=True)]


def matrix(wb):
    """Summary's node x rung matrix as {node: {column: value}}."""
    rows = sheet_rows(wb["Summary"])
    for i, r in enumerate(rows):
        if r and r[0] == "Node" and "Status" in r:
            hdr = r
            out = {}
            for row in rows[i + 1:]:
                if not row or row[0] is None:
                    break
                out[row[0]] = dict(zip(hdr, row))
            return out
    return {}


def site_file(extra=""):
    s3 = ""
    if rgw and os.path.exists(os.path.join(rgw, "env")):
        r = envfile(os.path.join(rgw, "env"))
        port = r["S3_ENDPOINT"].rsplit(":", 1)[1]
        s3 = """s3:
  endpoint: http://%s:%s
  region: us-east-1
  bucket: strata-fleet
  create_bucket: true
  credentials_file: %s
  count: 8
  warmup: 0
""" % (bedenv["FLEET_HOST_ADDR"], port, r["S3_CREDENTIALS_FILE"])
    path = os.path.join(work, "site-%s.yaml" % mode)
    with open(path, "w") as f:
        f.write("""site: { name: fleet-bed, expect: [host, s3] }
%s
fleet:
  roles:
    gpu: { features: [gpu] }
    storage_client: { features: [s3client] }
%s""" % (s3, extra))
    return path


# (the script's folder is on sys.path)
from bedrun import JOB, running, session_pids, settle, stop, stop_on_signals  # noqa: E402

stop_on_signals(env)


# ctest's TIMEOUT for this test (tests/fleet/CMakeLists.txt): a fleet run
# is stopped here in time, before ctest kills this script and leaves an
# allocation behind
T0 = time.monotonic()
BUDGET = float(os.environ.get("FLEET_TEST_TIMEOUT") or 0)


def fleet_run(nodes, args, name, during=None, partition=None, timeout=300):
    """salloc + strata run --fleet slurm; (rc, output stem, wall s).  Past
    timeout s, or 20 s before the test's own timeout, the run is stopped
    (bedrun.stop) and rc is 124."""
    if BUDGET:
        timeout = min(timeout, T0 + BUDGET - 20 - time.monotonic())
    out = os.path.join(work, name)
    cmd = ["salloc", "-N", str(nodes), "--job-name", JOB] + \
          (["-p", partition] if partition else []) + [
           strata, "run", "--fleet", "slurm", "-o", out + ".xlsx",
           "--json", out + ".json", "--junit", out + ".xml"] + args
    # a journal left by an earlier run would mislead during()
    for ext in (".jsonl", ".xlsx", ".json", ".xml"):
        if os.path.exists(out + ext):
            os.unlink(out + ext)
    t0 = time.monotonic()
    # its own session: on a timeout its whole process group goes
    p = subprocess.Popen(cmd, env=env, cwd=root, text=True, start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    running.append(p)
    try:
        if during:
            during(out + ".jsonl")
        text, _ = p.communicate(timeout=max(1, timeout - (time.monotonic() - t0)))
        rc = p.returncode
    except subprocess.TimeoutExpired:
        stop(p, env)
        text, _ = p.communicate()
        left = settle(lambda: session_pids(p.pid), 5)
        check(not left, "nothing of the stopped run is left on this host: %s" % left)
        rc = 124
        print("fleet run %s did not end within %d s: stopped (rc 124)" % (name, timeout))
    finally:
        running.remove(p)
    sys.stdout.write(text[-4000:])
    return rc, out, time.monotonic() - t0


def run_mode():
    site = site_file()
    # H1's load criterion: this shared 2-core machine is rarely quiet
    # and the fleet model's tolerance set as docs/fleet.md shows
    rc, out, wall = fleet_run(3, ["--site", site, "--set", "H1.load1_per_cpu.max=none",
                                  "--set", "FLEET.node_ratio.min=0.85",
                                  "--only", "H1", "--only", "R2",
                                  "--only", "R3", "--only", "R7", "--only", "B01",
                                  "specs"], "run")
    check(rc == 0, "fleet run exits 0 (rc %d, %.1f s)" % (rc, wall))
    recs = records(out + ".jsonl")
    res = [r for r in recs if r["type"] == "result"]
    check(all(r.get("node") in ("n1", "n2", "n3") for r in res),
          "every result record names its node")
    phases = {(r["node"], r["phase"]) for r in res}
    for n in ("n1", "n2", "n3"):
        check((n, "node") in phases, "%s ran its own rungs" % n)
        check((n, "s3") in phases, "%s was an S3 client" % n)
    host_of = {r["node"]: r.get("host") for r in recs if r["type"] == "node"}
    check(host_of.get("n2") == "n2", "n2's task ran on the host named n2 (%s)" % host_of)
    pair = {tuple(r["pair"]) for r in res if r["phase"] == "pair" and r["id"] == "R2"}
    check(pair == {("n1", "n2"), ("n2", "n3"), ("n3", "n1")}, "R2 ring of pairs: %s" % sorted(pair))
    inc = [r for r in recs if r["type"] == "result" and r["phase"] == "incast" and r["id"] == "R7"]
    check(inc and inc[0]["node"] == "n1", "R7 ran on the receiver n1")

    wb = openpyxl.load_workbook(out + ".xlsx")
    check(wb.sheetnames[:7] == ["Summary", "Attribution", "Heatmap", "Baseline", "Nodes",
                                "Cells", "Pairs"] and wb.sheetnames[-1] == "Thresholds",
          "fleet workbook sheets: %s" % wb.sheetnames)
    m = matrix(wb)
    check(sorted(m) == ["n1", "n2", "n3"], "Summary matrix has a row per node")
    th = [r for r in sheet_rows(wb["Thresholds"])
          if "FLEET" in r and "--set FLEET.node_ratio.min=0.85" in r]
    check(len(th) == 1 and any(str(v).startswith("node_ratio") for v in th[0]),
          "--set FLEET.node_ratio.min=0.85 on the Thresholds sheet: %s" % th)
    check(all(m[n]["H1"] == "PASS" and m[n]["B01"] == "PASS" for n in m),
          "H1 and B01 PASS on every node")
    check(all(m[n]["R1"] == "SKIP" for n in m), "R1 SKIP (no RDMA in the bed) on every node")
    summary = sheet_rows(wb["Summary"])
    check(any(r[0] == "Lowest failed rung" and r[1] == "none" for r in summary),
          "Summary: no failed rung")
    pr = sheet_rows(wb["Pairs"])
    hdr = [i for i, r in enumerate(pr) if r[0] == "from \\ to"]
    check(len(hdr) == 2, "Pairs sheet: a matrix for R2 and for R3")
    if hdr:
        h = pr[hdr[0]]
        row_n1 = pr[hdr[0] + 1]
        check(h[1:4] == ["n1", "n2", "n3"] and row_n1[0] == "n1", "pair matrix axes are the nodes")
        check(row_n1[2] == "SKIP" and row_n1[1] == "-", "n1 -> n2 measured (SKIP), diagonal empty")
    inc_rows = sheet_rows(wb["Incast"])
    check(any(r[1] == "R7" for r in inc_rows), "Incast sheet holds R7")

    # S3: aggregate and merged percentiles, recomputed from the samples
    b01 = [r for r in res if r["id"] == "B01"]
    check(len(b01) == 3 and all(r["status"] == "PASS" for r in b01), "B01 PASS from 3 clients")
    doc = json.load(open(out + ".json"))
    att = doc.get("attribution") or {}
    check(not att.get("suspects"),
          "a clean run names no suspect (lab profile: FLEET.pair_ratio WARN band, "
          "suspects confirmed by a repeat): %s; watched: %s"
          % ([x.get("text") for x in att.get("suspects") or []],
             [x.get("text") for x in att.get("watch") or []]))
    row = [x for x in doc["s3"] if x["id"] == "B01"][0]
    for op in ("get", "put"):
        samples = []
        for r in b01:
            for t in r.get("tables", []):
                if t["name"] == op + ".lat_samples_ms":
                    samples += [x[0] for x in t["rows"]]
        samples.sort()
        n = len(samples)
        want99 = samples[max(1, math.ceil(0.99 * n)) - 1] if n else None
        got = row[op]
        check(got["clients"] == 3 and got["samples"] == n and n >= 24,
              "%s: 3 clients, %d samples merged" % (op, n))
        check(want99 is not None and abs(got["lat_p99_ms"] - want99) < 1e-6,
              "%s: merged p99 %.3f ms = nearest rank of the pooled samples" % (op, got["lat_p99_ms"]))
        nbytes = sum(r["metrics"][op + ".bytes"] for r in b01)
        el = max(r["metrics"][op + ".elapsed_s"] for r in b01)
        check(got["bytes"] == nbytes and abs(got["gbps"] - nbytes * 8 / el / 1e9) < 1e-9,
              "%s: aggregate %.3f Gbit/s = all bytes over the longest window" % (op, got["gbps"]))
    check(all(n["status"] == "PASS" for n in doc["nodes"]), "JSON: every node PASS")
    check(all("node" in r for r in doc["results"]), "JSON results carry the node")
    xml = open(out + ".xml").read()
    check('classname="n2.host.H1"' in xml and 'name="n3.s3"' in xml,
          "JUnit: suites and classnames carry the node")
    # the journal alone rebuilds the same fleet workbook (a killed launcher)
    p = subprocess.run([strata, "report", out + ".jsonl", "-o", out + "-replay.xlsx"],
                       capture_output=True, text=True, env=env, cwd=root)
    m2 = matrix(openpyxl.load_workbook(out + "-replay.xlsx")) if p.returncode == 0 else {}
    check(p.returncode == 0 and m2 == m, "strata report rebuilds the same node x rung matrix")
    secret = [l.split("=", 1)[1].strip() for l in open(envfile(os.path.join(rgw, "env"))["S3_CREDENTIALS_FILE"])
              if l.startswith("aws_secret_access_key")][0]
    check(secret not in open(out + ".jsonl").read(), "no secret in the fleet journal")


def rdma_site(name, extra=""):
    """The RDMA nodes' site: rxe0, emulated figures and the lab's scaling
    (docs/lab.md: rxe under TCG moves some Mbit/s), the RGW on the bridge."""
    r = envfile(os.path.join(rgw, "env"))
    port = r["S3_ENDPOINT"].rsplit(":", 1)[1]
    path = os.path.join(work, "site-%s.yaml" % name)
    with open(path, "w") as f:
        f.write("""site: { name: fleet-rdma-bed, expect: [host, verbs, roce, s3] }
rdma:
  device: rxe0
  port: 1
  gid_index: auto
  line_rate_gbps: 0.02        # rxe under TCG (docs/lab.md), not a NIC's
  max_lat_us: 100000
  max_tail_ratio: 100000
  bw_iters: 32
  lat_iters: 200
  tx_depth: 8
  timeout_s: 60
  max_buffer_mb: 16
roce: { size: 65536, iters: 16, tx_depth: 8, timeout_s: 60 }
s3:
  endpoint: http://%s:%s
  region: us-east-1
  bucket: strata-fleet-rdma
  create_bucket: true
  credentials_file: %s
  count: 8
  warmup: 0
  duration: 2
scale:
  max_object_mb: 4
  max_streams: 4
  max_duration_s: 2
  max_iterations: 64
  matrix:
    R2: { size: [65536], qps: [1] }
    R3: { size: [4096] }
    R7: { senders: [1, 2], qps: [1] }
fleet:
  roles:
    gpu: { features: [gpu] }
    storage_client: { features: [s3client] }
  peer_device: rxe0
%s""" % (bedenv["FLEET_HOST_ADDR"], port, r["S3_CREDENTIALS_FILE"], extra))
    return path


def in_guest(job, node, script):
    """Run script on a guest node as a step of the job (its own shell)."""
    return subprocess.run(["srun", "--jobid", str(job), "--overlap", "-N1", "-n1",
                           "-w", node, "--quiet", "sh", "-c", script],
                          env=env, capture_output=True, text=True, timeout=60)


def guest(node, script):
    """Run script on a guest node as a job of its own (partition rdma)."""
    return subprocess.run(["srun", "-p", "rdma", "-N1", "-n1", "-w", node,
                           "--quiet", "sh", "-c", script],
                          env=env, capture_output=True, text=True, timeout=60)


def rdma_mode():
    guests = bedenv["FLEET_GUESTS"].split()
    check(len(guests) == 3, "the bed has 3 RDMA nodes: %s" % guests)
    prof = os.path.join(root, "lab", "thresholds.yaml")
    site = rdma_site("rdma")
    rc, out, wall = fleet_run(3, ["--site", site, "--profile", prof,
                                  "--set", "H1.load1_per_cpu.max=none",
                                  "--only", "H1", "--only", "R1", "--only", "R2",
                                  "--only", "R3", "--only", "R7", "--only", "B01",
                                  "specs"],
                              "rdma", partition="rdma")
    check(rc == 0, "fleet run on the RDMA nodes exits 0 (rc %d, %.1f s)" % (rc, wall))
    recs = records(out + ".jsonl")
    res = [r for r in recs if r["type"] == "result"]
    host_of = {r["node"]: r.get("host") for r in recs if r["type"] == "node"}
    check(all(host_of.get(g) == g for g in guests),
          "each task ran in the guest whose hostname is its NodeName: %s" % host_of)
    wb = openpyxl.load_workbook(out + ".xlsx")
    m = matrix(wb)
    check(sorted(m) == guests, "Summary matrix has a row per guest: %s" % sorted(m))
    check(all(m[g]["Status"] == "PASS" and m[g]["R1"] == "PASS" and m[g]["R2"] == "PASS"
              and m[g]["R3"] == "PASS" and m[g]["B01"] == "PASS" for g in guests),
          "H1 R1 R2 R3 (loopback) B01 PASS on every guest")
    pr = [r for r in res if r["phase"] == "pair" and r["id"] == "R2"]
    want = {(guests[i], guests[(i + 1) % 3]) for i in range(3)}
    check({tuple(r["pair"]) for r in pr} == want, "R2 on the ring of guest pairs")
    for r in pr:
        mt = r.get("metrics") or {}
        far = dict(zip(guests, bedenv["FLEET_GUEST_ADDRS"].split()))[r["pair"][1]]
        check(r["status"] == "PASS" and mt.get("bw_gbps", 0) > 0
              and mt.get("counters.sent_pkts", 0) > 0
              and mt.get("peer", "").startswith(far + ":"),
              "R2 %s -> %s over RDMA: %.4f Gbit/s, %s packets sent, far end %s"
              % (r["pair"][0], r["pair"][1], mt.get("bw_gbps", 0),
                 mt.get("counters.sent_pkts"), mt.get("peer")))
    lat = [r for r in res if r["phase"] == "pair" and r["id"] == "R3"]
    check({tuple(r["pair"]) for r in lat} == want
          and all(r["status"] == "PASS" and (r.get("metrics") or {}).get("median_us", 0) > 0
                  for r in lat),
          "R3 on the ring of guest pairs: %s us" % [round((r.get("metrics") or {}).get("median_us", 0), 1)
                                                   for r in lat])
    rows = sheet_rows(wb["Pairs"])
    hdr = [i for i, r in enumerate(rows) if r[0] == "from \\ to"]
    check(len(hdr) == 2 and all(rows[h][1:4] == guests for h in hdr),
          "Pairs sheet: a matrix for R2 and for R3, the guests on both axes")
    if hdr:
        g1row = rows[hdr[0] + 1]
        check(g1row[0] == guests[0] and g1row[1] == "-" and "PASS" in str(g1row[2]),
              "pair matrix cell g1 -> g2: %s" % g1row[2])
    inc = [r for r in res if r["phase"] == "incast" and r["id"] == "R7"]
    check(len(inc) == 2 and all(r["node"] == guests[0] and r["status"] == "PASS" for r in inc),
          "R7 into %s: 2 cells PASS" % guests[0])
    two = [r for r in inc if (r.get("cell") or {}).get("senders") == 2]
    mt = two[0]["metrics"] if two else {}
    check(mt.get("sender.fleet-g2.bw_gbps", 0) > 0 and mt.get("sender.fleet-g3.bw_gbps", 0) > 0
          and mt.get("delta.rdma.rxe0.1.rcvd_pkts", 0) > 0,
          "R7 with 2 senders: g2 and g3 wrote into g1 (rxe0 rcvd_pkts +%s)"
          % mt.get("delta.rdma.rxe0.1.rcvd_pkts"))
    doc = json.load(open(out + ".json"))
    att = doc.get("attribution") or {}
    check(not att.get("suspects"),
          "a clean run names no suspect (lab profile: FLEET.pair_ratio WARN band, "
          "suspects confirmed by a repeat): %s; watched: %s"
          % ([x.get("text") for x in att.get("suspects") or []],
             [x.get("text") for x in att.get("watch") or []]))
    row = [x for x in doc["s3"] if x["id"] == "B01"]
    b01 = [r for r in res if r["id"] == "B01"]
    for op in ("get", "put"):
        got = row[0][op] if row else {}
        samples = sorted(x[0] for r in b01 for t in r.get("tables", [])
                         if t["name"] == op + ".lat_samples_ms" for x in t["rows"])
        n = len(samples)
        want99 = samples[max(1, math.ceil(0.99 * n)) - 1] if n else None
        check(got.get("clients") == 3 and got.get("samples") == n and n >= 24
              and want99 is not None and abs(got["lat_p99_ms"] - want99) < 1e-6,
              "B01 %s from 3 guests: %d samples merged, p99 %.1f ms, aggregate %.3f Gbit/s"
              % (op, n, got.get("lat_p99_ms") or 0, got.get("gbps") or 0))

    # the fault: g3's agent killed inside its guest while the pairs run
    site = rdma_site("rdma-faults", """  idle_slack_s: 20
  pairs: { tests: [FT1, R2] }
fleet_test: { sleep_s: 3 }
""")
    acted = {}

    def during(journal):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not acted:
            time.sleep(0.3)
            try:
                recs = records(journal)
            except (OSError, ValueError):
                continue
            run = [r for r in recs if r["type"] == "run"]
            if run and any(r["type"] == "step" and r.get("phase") == "agent" for r in recs):
                # the agent's own process (argv[1] serve), not the shell
                p = in_guest(run[0]["fleet"]["job"], guests[2],
                             'for p in /proc/[0-9]*; do a=$(tr "\\000" " " < $p/cmdline 2>/dev/null); '
                             'case "$a" in */strata" "serve" "*) kill -9 ${p#/proc/}; echo ${p#/proc/};; esac; done')
                if p.stdout.split():
                    acted[guests[2]] = p.stdout.split()
                else:
                    print("kill in %s found no agent yet (rc %d): %s"
                          % (guests[2], p.returncode, p.stderr.strip()[-300:]), flush=True)

    rc, out, wall = fleet_run(3, ["--site", site, "--profile", prof, "--only", "FT1",
                                  "--only", "R2", "specs/verbs", os.path.join(here, "specs")],
                              "rdma-faults", during, partition="rdma")
    check(acted.get(guests[2]), "g3's agent killed in its guest: pid %s" % acted.get(guests[2]))
    check(rc == 1, "the fleet run completes and fails (rc %d, %.1f s)" % (rc, wall))
    m = matrix(openpyxl.load_workbook(out + ".xlsx"))
    why = (m.get("g3") or {}).get("Why (node ERROR)") or ""
    check(m.get("g3", {}).get("Status") == "ERROR" and "agent" in why and "Killed" in why,
          "g3 (agent killed mid-run) ERROR: %s" % why)
    check(all(m.get(g, {}).get("Status") == "PASS" for g in guests[:2]),
          "g1 and g2 stand: PASS")
    doc = json.load(open(out + ".json"))
    for p in doc["pairs"]:
        if p["to"] == "g3":
            check(p["status"] == "ERROR" and "g3" in (p.get("reason") or ""),
                  "%s %s -> g3 ERROR: %s" % (p["id"], p["from"], p.get("reason")))
        else:
            check(p["status"] == "PASS", "%s %s -> %s stands: PASS" % (p["id"], p["from"], p["to"]))


def pids_in(node, argv_head):
    """pids in node's namespace whose argv starts with argv_head."""
    ns = netns[node]
    p = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    out = []
    for pid in p.stdout.split():
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                a = f.read().split(b"\0")
        except OSError:
            continue
        a = [x.decode() for x in a if x]
        if len(a) >= len(argv_head) and [os.path.basename(a[0])] + a[1:len(argv_head)] == argv_head:
            out.append(int(pid))
    return out


def faults_mode():
    site = site_file("""  idle_slack_s: 4
  agent_start_s: 15
  pairs: { tests: [FT1] }
fleet_test: { sleep_s: 4 }
""")
    # n4: its agent's port is taken before the agents start
    blocker = subprocess.Popen(["ip", "netns", "exec", netns["n4"], "/usr/bin/python3", "-c",
                                "import socket,time; s=socket.socket(); "
                                "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
                                "s.bind(('0.0.0.0', 18515)); s.listen(1); time.sleep(120)"])
    acted = {}

    def during(journal):
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(acted) < 3:
            time.sleep(0.2)
            try:
                recs = records(journal)
            except (OSError, ValueError):
                continue
            started = {r["node"] for r in recs if r["type"] == "node" and r.get("phase") == "node"}
            agents_up = any(r["type"] == "step" and r.get("phase") == "agent" for r in recs)
            if agents_up and "n5" not in acted:
                for pid in pids_in("n5", ["strata", "serve"]):
                    os.kill(pid, signal.SIGKILL)
                    acted["n5"] = pid
            for node, sig in (("n2", signal.SIGKILL), ("n3", signal.SIGSTOP)):
                if node in started and node not in acted:
                    for pid in pids_in(node, ["strata", "node"]):
                        os.kill(pid, sig)
                        acted[node] = pid

    try:
        rc, out, wall = fleet_run(5, ["--site", site, "--only", "FT1", "--only", "R2",
                                      "specs/verbs", os.path.join(here, "specs")],
                                  "faults", during)
    finally:
        blocker.kill()
        for pid in [p for p in acted.values()]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    check(set(acted) == {"n2", "n3", "n5"},
          "n2 killed, n3 stopped, n5's agent killed mid-run (%s)" % acted)
    check(rc == 1, "the fleet run completes and fails (rc %d, %.1f s)" % (rc, wall))
    wb = openpyxl.load_workbook(out + ".xlsx")
    m = matrix(wb)
    why = {n: m[n].get("Why (node ERROR)") or "" for n in m}
    check(m["n1"]["Status"] == "PASS" and m["n1"]["FT1"] == "PASS", "n1 stands: PASS")
    check(m["n2"]["Status"] == "ERROR" and m["n2"]["FT1"] == "ERROR" and "exited" in why["n2"],
          "n2 (killed) ERROR: %s" % why["n2"])
    check(m["n3"]["Status"] == "ERROR" and "hung" in why["n3"], "n3 (stopped) ERROR: %s" % why["n3"])
    check(m["n4"]["Status"] == "ERROR" and m["n4"]["FT1"] == "PASS" and "agent" in why["n4"],
          "n4 (agent never started) ERROR, its own rung stands: %s" % why["n4"])
    check(m["n5"]["Status"] == "ERROR" and m["n5"]["FT1"] == "PASS" and "agent" in why["n5"]
          and "Killed" in why["n5"], "n5 (agent killed mid-run) ERROR: %s" % why["n5"])
    doc = json.load(open(out + ".json"))
    for far in ("n4", "n5"):
        pr = [p for p in doc["pairs"] if p["id"] == "FT1" and p["to"] == far]
        check(pr and pr[0]["status"] == "ERROR" and far in (pr[0]["reason"] or ""),
              "the pair whose far end is %s is ERROR naming it: %s"
              % (far, pr and pr[0]["reason"]))
    ok_pairs = [p for p in doc["pairs"] if p["id"] == "FT1" and p["to"] == "n2"]
    check(ok_pairs and ok_pairs[0]["status"] == "PASS", "the pair n1 -> n2 stands: PASS")
    # Slurm ends a step whose srun is gone (slurmstepd): give it KillWait
    t0 = time.monotonic()
    while True:
        left = pids_in("n2", ["strata", "node"]) + pids_in("n3", ["strata", "node"])
        if not left or time.monotonic() - t0 > 20:
            break
        time.sleep(0.2)
    check(not left, "no strata node left running on n2/n3 after %.1f s (%s)"
          % (time.monotonic() - t0, left))
    # leave the bed as found: the job's nodes idle again (a node still
    # completing the killed step made the next salloc -N 3 take n4 for n3)
    t0 = time.monotonic()
    while True:
        p = subprocess.run(["sinfo", "-h", "-N", "-n", "n[1-5]", "-o", "%N %t"],
                           env=env, capture_output=True, text=True)
        busy = sorted(set(l for l in p.stdout.splitlines() if not l.endswith(" idle")))
        if not busy or time.monotonic() - t0 > 60:
            break
        time.sleep(0.5)
    check(not busy, "n1-n5 idle again after %.1f s (%s)" % (time.monotonic() - t0, busy))


def sbatch_mode():
    out = os.path.join(work, "sbatch")
    os.makedirs(out, exist_ok=True)
    site = os.path.join(work, "site-sbatch.yaml")
    with open(site, "w") as f:
        f.write("site: { name: fleet-bed, expect: [host] }\n")
    e = dict(env, STRATA=strata, SITE=site, OUT=out)
    p = subprocess.run(["sbatch", "-N", "3", "--wait", "--chdir", work,
                        os.path.join(root, "packaging", "slurm", "strata-fleet.sbatch"),
                        "--only", "H1", "--set", "H1.load1_per_cpu.max=none",
                        os.path.join(root, "specs")],
                       env=e, capture_output=True, text=True, timeout=240)
    sys.stdout.write(p.stdout + p.stderr)
    check(p.returncode == 0, "sbatch --wait of the example exits 0 (%d)" % p.returncode)
    wb = os.path.join(out, "fleet.xlsx")
    m = matrix(openpyxl.load_workbook(wb)) if os.path.exists(wb) else {}
    run = [r for r in records(os.path.join(out, "fleet.jsonl")) if r["type"] == "run"]
    nodes = [n["name"] for n in run[0]["fleet"]["nodes"]] if run else []
    check(len(nodes) == 3 and sorted(m) == sorted(nodes)
          and all(m[n]["H1"] == "PASS" for n in m),
          "the batch job's workbook: H1 PASS on its 3 nodes %s" % nodes)
    check(run and run[0]["host"] == nodes[0], "the launcher ran on the job's first node (%s)"
          % (run and run[0]["host"]))


def diag_site(name, extra=""):
    """The RDMA nodes' site for the diagnosis runs: rdma_site's figures,
    no S3, short cells (a degraded link makes every RDMA step slow)."""
    path = os.path.join(work, "site-%s.yaml" % name)
    with open(path, "w") as f:
        f.write("""site: { name: fleet-diag-bed, expect: [host, verbs, roce] }
rdma:
  device: rxe0
  port: 1
  gid_index: auto
  line_rate_gbps: 0.02        # rxe under TCG (docs/lab.md), not a NIC's
  max_lat_us: 10000000
  max_tail_ratio: 100000
  bw_iters: 16
  lat_iters: 20
  tx_depth: 8
  timeout_s: 25
  max_buffer_mb: 16
roce: { size: 65536, iters: 8, tx_depth: 8, timeout_s: 25 }
scale:
  matrix:
    R2: { size: [65536], qps: [1] }
    R3: { size: [4096] }
    R7: { senders: [2], qps: [1] }
fleet:
  peer_device: rxe0
%s""" % extra)
    return path


def attribution_sheet(wb):
    """Attribution's suspect rows as [(kind, suspect, test, pair, ratio)]."""
    out = []
    for r in sheet_rows(wb["Attribution"])[3:]:
        if not r or r[0] not in ("node", "link"):
            break
        out.append((r[0], r[1], r[2], r[3], r[7]))
    return out


def diag_mode():
    """Attribution and FLAKY on the RDMA nodes: a run with no fault names
    no suspect; then g2's RDMA link held up (slurm.sh link: a QEMU
    filter-buffer on its segment NIC) and FT3 made to fail its first try
    on g3: the workbook names g2 the suspect with its pairs as evidence,
    FT3 on g3 FLAKY and g3 a flaky node, not a suspect."""
    guests = bedenv["FLEET_GUESTS"].split()
    check(len(guests) == 3, "the bed has 3 RDMA nodes: %s" % guests)
    prof = os.path.join(root, "lab", "thresholds.yaml")
    tag = "%d" % time.time()
    # TCG's pair figures swing with the host's load: R3's median latency
    # 0.55 to 4.4 ms between the pairs of one clean run (2026-12-06), R2
    # 2.8x, and a starved guest stays slow for a while: the lab profile's
    # FLEET.pair_ratio puts 2-10x in a WARN band (watched, not named) and
    # the launcher measures a suspect's pairs again (named only when bad
    # twice)
    common_args = ["--profile", prof, "--until-pass", "2",
                   "--only", "FT3", "--only", "R2", "--only", "R3", "--only", "R7",
                   "specs", os.path.join(here, "specs")]
    site = diag_site("diag-clean")
    rc, out, wall = fleet_run(3, ["--site", site] + common_args, "diag-clean",
                              partition="rdma")
    check(rc == 0, "fleet run without a fault exits 0 (rc %d, %.1f s)" % (rc, wall))
    wb = openpyxl.load_workbook(out + ".xlsx")
    doc = json.load(open(out + ".json"))
    att = doc.get("attribution") or {}
    # (an empty Lua table is a JSON {} in lua-cjson 2.1.0: no suspect)
    check(not att.get("suspects") and att.get("flaky_cells") == 0,
          "no fault: no suspect, no FLAKY cell: %s" % att.get("suspects"))
    print("  clean: not confirmed: %s; watched: %s"
          % ([u.get("text") for u in att.get("unconfirmed") or []],
             [u.get("text") for u in att.get("watch") or []]))
    summ = {r[0]: r[1] for r in sheet_rows(wb["Summary"]) if r and r[0]}
    check(str(summ.get("Suspect", "")).startswith("none"),
          "Summary says: Suspect %s" % summ.get("Suspect"))
    for p in doc["pairs"]:
        print("  clean %s %s -> %s %s %s = %s" % (p["id"], p["from"], p["to"], p["status"],
                                                 p.get("metric"), p.get("value")))

    bad, flaky = guests[1], guests[2]
    site = diag_site("diag-fault", "fleet_test: { flaky_node: %s, flaky_tag: t%s }\n"
                     % (flaky, tag))
    sh = os.path.join(here, "slurm.sh")
    p = subprocess.run([sh, "link", bed, bad, "200000"], capture_output=True, text=True)
    check(p.returncode == 0, "%s's RDMA link held up 200 ms a packet: %s"
          % (bad, (p.stdout + p.stderr).strip()))
    try:
        # the pairs phased: a reference pair, the ring, the rest admitted
        # behind FLEET.admit_ratio against the best pair; the held link
        # makes R3 through g2 20-200x slower, TCG's clean pairs differ up
        # to 8x (a ring of 3 has one clean pair here: the best itself)
        rc, out, wall = fleet_run(3, ["--site", site, "--pairs", "phased",
                                      "--set", "FLEET.admit_ratio.min=0.25"] + common_args,
                                  "diag-fault", partition="rdma")
    finally:
        p = subprocess.run([sh, "link", bed, bad, "off"], capture_output=True, text=True)
        check(p.returncode == 0, "%s's link restored: %s" % (bad, (p.stdout + p.stderr).strip()))
    print("  fault run: rc %d, %.1f s" % (rc, wall))
    wb = openpyxl.load_workbook(out + ".xlsx")
    doc = json.load(open(out + ".json"))
    for p in doc["pairs"]:
        print("  fault %s %s -> %s %s %s = %s" % (p["id"], p["from"], p["to"], p["status"],
                                                 p.get("metric"), p.get("value")))
    att = doc.get("attribution") or {}
    sus = att.get("suspects") or []
    check([(s["kind"], s["name"]) for s in sus] == [("node", bad)],
          "the suspect is node %s alone: %s" % (bad, [s.get("text") for s in sus]))
    ev = sus[0]["evidence"] if sus else []
    check(ev and all(bad in (e["a"], e["b"]) for e in ev)
          and len([e for e in ev if e["test"] == "R3"]) == 2,
          "its evidence: both R3 pairs through %s (and any other pair through it): %s"
          % (bad, [(e["test"], e["pair"], e.get("ratio")) for e in ev]))
    again = [e for e in ev if e.get("confirm")]
    check(again and all(e["confirm"]["bad"] or e["confirm"].get("watch") for e in again)
          and any(e["confirm"]["bad"] for e in again)
          and "confirmed" in sus[0].get("text", ""),
          "%s confirmed: its pairs bad again when measured again: %s"
          % (bad, [(e["test"], e["pair"], e["confirm"].get("ratio")) for e in again]))
    ph = att.get("phased") or {}
    nodes = {d["node"]: d for d in ph.get("nodes", [])}
    check(ph.get("refused") == 1 and not nodes.get(bad, {}).get("admitted", True)
          and all(nodes.get(g, {}).get("admitted") for g in guests if g != bad),
          "phased: %s refused, the others admitted: %s"
          % (bad, [(d["node"], d["admitted"], d.get("why")) for d in ph.get("nodes", [])]))
    arows = sheet_rows(wb["Attribution"])
    check(any(r and r[0] == bad and r[1] == "refused" for r in arows),
          "Attribution sheet: %s refused in the phased rows" % bad)
    rows = attribution_sheet(wb)
    check(rows and all(r[0] == "node" and r[1] == bad for r in rows),
          "Attribution sheet rows name %s: %s" % (bad, rows))
    summ = {r[0]: r[1] for r in sheet_rows(wb["Summary"]) if r and r[0]}
    check(("node %s" % bad) in str(summ.get("Suspect node", "")),
          "Summary: Suspect node %s" % summ.get("Suspect node"))
    # FT3 on the flaky node is the one planted FLAKY cell; a pair through the
    # held link may also fail its first try and pass its second (R2 g2->g3
    # at 0.0016 then above the lab's 0.002, 2026-12-06): FLAKY too, and
    # honest, but only ever through the bad node
    fl = att.get("flaky_nodes") or []
    cells = [(f["node"], c) for f in fl for c in f.get("cells", [])]
    ft3 = [n for n, c in cells if c.get("id") == "FT3"]
    others = [c for n, c in cells if c.get("id") != "FT3"]
    check(ft3 == [flaky] and all(c.get("pair") and bad in c["pair"] for c in others)
          and att.get("flaky_cells") == 1 + len({(c["id"], c["pair"]) for c in others}),
          "FT3 FLAKY on %s, counted apart; any other FLAKY cell a pair through %s: %s"
          % (flaky, bad, [(n, c.get("id"), c.get("pair")) for n, c in cells]))
    check(("%s:" % flaky) in str(summ.get("Flaky node", "")),
          "Summary: Flaky node %s" % summ.get("Flaky node"))
    m = matrix(wb)
    check(m.get(flaky, {}).get("FT3") == "FLAKY" and m.get(bad, {}).get("FT3") == "PASS",
          "node x rung: FT3 FLAKY on %s, PASS on %s" % (flaky, bad))
    tries = [r for r in records(out + ".jsonl") if r.get("type") == "result"
             and r.get("id") == "FT3" and r.get("node") == flaky]
    check([(r.get("try"), r.get("status")) for r in tries] == [(1, "FAIL"), (2, "PASS")],
          "both tries of FT3 on %s kept: %s" % (flaky, [(r.get("try"), r.get("status"))
                                                       for r in tries]))
    hm = wb["Heatmap"]
    check(len(hm.conditional_formatting) >= 2,
          "Heatmap: a colour scale per pair matrix (%d)" % len(hm.conditional_formatting))


def summary_config(wb):
    """The Summary's configuration rows: {(node, setting): row}."""
    rows = sheet_rows(wb["Summary"])
    out = {}
    for i, r in enumerate(rows):
        if r and r[0] == "Node" and r[1] == "Setting":
            for row in rows[i + 1:]:
                if not row or row[0] is None or row[1] is None:
                    break
                out[(row[0], row[1])] = row
    return out


def golden_mode():
    """The golden across the RDMA nodes (issue 27): g2's segment NIC set to
    another MTU for real (ip link set, inside the guest), then `strata site
    init --fleet slurm` writes one site file whose golden is the majority's
    and names g2's difference; a fleet run of H4 with it FAILs g2 naming
    the setting, g1 and g3 PASS, and the Summary lists g2's MTU against
    the golden and the majority; without a golden the majority alone."""
    guests = bedenv["FLEET_GUESTS"].split()
    check(len(guests) == 3, "the bed has 3 RDMA nodes: %s" % guests)

    mtu0 = guest("g2", "cat /sys/class/net/eth0/mtu").stdout.strip()
    check(mtu0.isdigit(), "g2's eth0 MTU read through srun: %r" % mtu0)
    new = "1280" if mtu0 != "1280" else "1400"
    try:
        p = guest("g2", "ip link set eth0 mtu %s && cat /sys/class/net/eth0/mtu" % new)
        check(p.stdout.strip() == new, "g2's eth0 MTU set to %s (%s)" % (new, p.stderr))
        site = os.path.join(work, "site-golden.yaml")
        if os.path.exists(site):
            os.unlink(site)
        p = subprocess.run(["salloc", "-p", "rdma", "-N", "3", "--job-name", "strata-site-init",
                            strata, "site", "init", "--fleet", "slurm", "-o", site],
                           env=env, cwd=root, capture_output=True, text=True, timeout=300)
        check(p.returncode == 0, "site init --fleet slurm exits 0 (%s)" % p.stderr[-500:])
        text = open(site).read() if os.path.exists(site) else ""
        check("# Merged from 3 nodes of Slurm job" in text, "the header names the 3 nodes")
        check(re.search(r"\n  kernel: \S+ +# all 3 nodes; ", text) is not None,
              "a fact every node shares: kernel, 'all 3 nodes'")
        check(re.search(r"\n  nics: .*DIFFERS: g2 eth0\.mtu %s \(majority %s\)" % (new, mtu0),
                        text) is not None,
              "the golden's NIC list names g2's MTU against the majority")
        check("- { driver: virtio_net, mtu: %s, name: eth0 }" % mtu0 in text,
              "the golden's eth0 MTU is the majority's, %s" % mtu0)
        check(re.search(r"\n  name: TODO +# TODO: the nodes differ", text) is not None,
              "site.name (each node's own hostname): a TODO naming them")
        rc, out, wall = fleet_run(3, ["--site", site, "--only", "H4", "specs"], "golden",
                                  partition="rdma")
        check(rc == 1, "fleet run with the golden exits 1 (g2 differs) (rc %d, %.1f s)" % (rc, wall))
        wb = openpyxl.load_workbook(out + ".xlsx")
        m = matrix(wb)
        check(m.get("g2", {}).get("H4") == "FAIL" and m.get("g1", {}).get("H4") == "PASS"
              and m.get("g3", {}).get("H4") == "PASS",
              "H4 FAIL on g2, PASS on g1 and g3: %s" % {g: m.get(g, {}).get("H4") for g in guests})
        res = {r["node"]: r for r in records(out + ".jsonl")
               if r["type"] == "result" and r["id"] == "H4"}
        check("nics.eth0.mtu: golden %s, this node %s" % (mtu0, new) in res["g2"].get("notes", []),
              "g2's H4 note: nics.eth0.mtu: golden %s, this node %s" % (mtu0, new))
        check("differs.nics.eth0.mtu = 1, wanted <= 0" in (res["g2"].get("reason") or ""),
              "g2's H4 reason names the setting: %s" % res["g2"].get("reason"))
        cfg = summary_config(wb)
        row = cfg.get(("g2", "nics.eth0.mtu"))
        check(row is not None and str(row[2]) == new and str(row[3]) == mtu0
              and str(row[4]).startswith("majority %s (2 of 3 nodes)" % mtu0),
              "Summary: g2 nics.eth0.mtu %s, golden %s, majority %s: %s" % (new, mtu0, mtu0, row))
        check(all(k[0] == "g2" for k in cfg), "only g2 listed: %s" % sorted(cfg))
        # no golden: H4 SKIPs on every node, the majority still names g2
        nog = os.path.join(work, "site-golden-none.yaml")
        with open(nog, "w") as f:
            f.write(re.sub(r"\ngolden:\n(  .*\n|    .*\n)*", "\n", text))
        rc, out, wall = fleet_run(3, ["--site", nog, "--only", "H4", "specs"], "golden-none",
                                  partition="rdma")
        wb = openpyxl.load_workbook(out + ".xlsx")
        cfg = summary_config(wb)
        row = cfg.get(("g2", "nics.eth0.mtu"))
        check(row is not None and str(row[2]) == new and not row[3]
              and str(row[4]).startswith("majority %s" % mtu0),
              "no golden: the Summary names g2's MTU against the majority alone: %s" % row)
        doc = json.load(open(out + ".json"))
        diffs = (doc.get("configuration") or {}).get("differences") or []
        check(any(d.get("node") == "g2" and d.get("key") == "nics.eth0.mtu" for d in diffs),
              "fleet JSON configuration.differences names g2 nics.eth0.mtu")
    finally:
        guest("g2", "ip link set eth0 mtu %s" % mtu0)


def rails_mode():
    """Pairs per RDMA device (docs/fleet.md "Rails") on the RDMA nodes: a
    second Soft-RoCE device rxe1 added in each guest on its tap NIC (the
    bed's bridge, another subnet than rxe0's segment: no route between
    the rails, as on a rail-only fabric), a fleet run of R1-R3 with
    site.rdma.devices rxe0, rxe1 and cross_rail on a ring; the workbook
    read back: same-rail R2/R3 PASS on both rails for every ring pair,
    every cross-rail pair ERROR within seconds (retry_cnt 6: rxe reads 7 as
    never give up) naming both ends, the Rails table, a rail finding and
    no suspect; rxe1 removed after."""
    guests = bedenv["FLEET_GUESTS"].split()
    check(len(guests) == 3, "the bed has 3 RDMA nodes: %s" % guests)

    add = ("for d in /sys/class/net/eth*; do [ ${d##*/} = eth0 ] || dev=${d##*/}; done; "
           "rdma link add rxe1 type rxe netdev $dev || exit 1; i=0; "
           "while ! grep -q ACTIVE /sys/class/infiniband/rxe1/ports/1/state; do "
           "i=$((i+1)); [ $i -gt 100 ] && exit 1; sleep 0.1; done; echo rxe1 on $dev")
    try:
        for g in guests:
            p = guest(g, add)
            check(p.returncode == 0, "%s: %s %s" % (g, p.stdout.strip(), p.stderr.strip()))
        site = diag_site("rails", "  pairs: { mode: ring, cross_rail: true }\n")
        text = open(site).read().replace("  port: 1\n", "  port: 1\n  retry_cnt: 6\n  devices:\n"
                                         "    - { device: rxe0, port: 1 }\n"
                                         "    - { device: rxe1, port: 1 }\n", 1)
        with open(site, "w") as f:
            f.write(text)
        rc, out, wall = fleet_run(3, ["--site", site, "--profile",
                                      os.path.join(root, "lab", "thresholds.yaml"),
                                      "--only", "R1", "--only", "R2", "--only", "R3", "specs"],
                                  "rails", partition="rdma")
    finally:
        for g in guests:
            guest(g, "rdma link delete rxe1")
    check(rc == 1, "fleet run on two rails ends FAIL/ERROR: the cross-rail pairs (rc %d, %.1f s)"
          % (rc, wall))
    recs = records(out + ".jsonl")
    res = [r for r in recs if r["type"] == "result" and r.get("phase") == "pair"
           and r["id"] in ("R2", "R3")]
    for r in sorted(res, key=lambda r: (r["id"], r.get("rail"), r["pair"])):
        print("  %s %-5s %s:%s -> %s:%s %s %.1f s %s" % (
            r["id"], r.get("rail"), r["pair"][0], (r.get("pair_devices") or "??")[0],
            r["pair"][1], (r.get("pair_devices") or "??")[1], r["status"],
            r.get("duration_s") or 0, (r.get("reason") or "")[:200]))
    seen = {(r["id"], r["pair"][0], r["pair"][1], tuple(r.get("pair_devices") or ()), r.get("rail"))
            for r in res}
    check(len(seen) == 24 and len(res) == 24,
          "R2, R3 on 3 node pairs x 4 device pairs, measured once each: %d" % len(res))
    check(not [r for r in recs if r["type"] == "result" and r.get("phase") == "confirm"],
          "no pair measured again (no suspect to confirm)")
    ip = {g: a for g, a in zip(guests, bedenv["FLEET_GUEST_ADDRS"].split())}
    cross = [r for r in res if r.get("rail") == "cross"]
    for r in cross:
        (a, b), (da, db) = r["pair"], r["pair_devices"]
        far = ip[b] if db == "rxe1" else "10.78.1.%d" % (guests.index(b) + 1)
        why = r.get("reason") or ""
        check(r["status"] == "ERROR" and (r.get("duration_s") or 99) < 8
              and "%s (" % da in why and "-> %s (%s)" % (db, far) in why
              and "transport retry counter exceeded" in why,
              "%s %s:%s -> %s:%s ERROR in %.1f s naming both ends and the retry error: %s"
              % (r["id"], a, da, b, db, r.get("duration_s") or 0, why[:160]))
    wb = openpyxl.load_workbook(out + ".xlsx")
    rows = sheet_rows(wb["Pairs"])
    hdr = [i for i, r in enumerate(rows) if r[:4] == ["Test", "From", "To", "Status"]]
    prow = {}
    for r in rows[hdr[0] + 1:] if hdr else []:
        if r and r[0]:
            prow[(r[0], r[1], r[2])] = r
    ring = [(guests[i], guests[(i + 1) % 3]) for i in range(3)]
    same = [(t, "%s:%s" % (a, d), "%s:%s" % (b, d)) for t in ("R2", "R3") for a, b in ring
            for d in ("rxe0", "rxe1")]
    check(all(prow.get(k) and prow[k][3] == "PASS" and prow[k][7] == "same" for k in same),
          "Pairs sheet: same-rail R2 and R3 PASS on rxe0 and rxe1 for every ring pair: %s"
          % [(k, prow.get(k, [None] * 4)[3]) for k in same])
    rt = [i for i, r in enumerate(rows) if r[:4] == ["Test", "Rail", "Pairs", "FAIL/ERROR"]]
    table = sorted(tuple(r[:4]) for r in rows[rt[0] + 1:rt[0] + 5]) if rt else []
    check(table == [("R2", "cross", 6, 6), ("R2", "same", 6, 0), ("R3", "cross", 6, 6),
                    ("R3", "same", 6, 0)],
          "Pairs sheet's Rails table: same rail 6 pairs 0 bad, cross rail 6 of 6 bad: %s" % table)
    summ = {}
    for r in sheet_rows(wb["Summary"]):
        if r and r[0]:
            summ.setdefault(r[0], []).append(r[1])
    check(str((summ.get("Suspect") or [""])[0]).startswith("none") and
          not [k for k in summ if str(k).startswith("Suspect ")],
          "Summary: no suspect: %s" % summ.get("Suspect"))
    finding = summ.get("Rail finding") or []
    check(len(finding) == 2 and all("cross rail: 0 of 6 pairs connect, same rail all 6 good"
                                    in str(x) for x in finding),
          "Summary: a rail finding per test: %s" % finding)
    att = [r for r in sheet_rows(wb["Attribution"]) if r and r[0] == "rail"]
    check(len(att) == 12, "Attribution sheet: the 12 cross-rail pairs under the rail finding")


def timeout_mode():
    """fleet_run's own timeout: a run of FT1 sleeping 8 s five times
    (--repeat 5: 40 s) on 3 nodes, stopped after 12 s: rc 124, salloc's session empty, the job gone from
    the bed and no `strata node` left in the nodes' namespaces."""
    site = site_file("fleet_test: { sleep_s: 8 }\n")
    rc, out, wall = fleet_run(3, ["--site", site, "--only", "FT1", "--repeat", "5",
                                  os.path.join(here, "specs")], "timeout", timeout=12)
    check(rc == 124 and wall < 40, "the run stopped at its timeout (rc %d, %.1f s)" % (rc, wall))
    # slurmd ends a cancelled job's steps within seconds (COMPLETING meanwhile)
    jobs = settle(lambda: subprocess.run(["squeue", "-h", "--name", JOB, "-o", "%i %T"],
                                         env=env, capture_output=True, text=True,
                                         timeout=30).stdout.strip())
    check(not jobs, "no job %s left on the bed: %r" % (JOB, jobs))
    left = settle(lambda: [(n, pid) for n in ("n1", "n2", "n3")
                           for pid in pids_in(n, ["strata", "node"])])
    check(not left, "no `strata node` left in the nodes: %s" % left)


{"run": run_mode, "timeout": timeout_mode, "faults": faults_mode, "sbatch": sbatch_mode, "rdma": rdma_mode,
 "diag": diag_mode, "golden": golden_mode, "rails": rails_mode}[mode]()
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)
