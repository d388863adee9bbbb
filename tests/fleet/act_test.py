#!/usr/bin/python3
"""act_test.py STRATA BEDDIR WORKDIR MODE: verdicts that act, on the local
Slurm cluster of slurm.sh (namespace nodes n1..n3; docs/fleet.md, "Acting
on verdicts" and "Health profile").  The fault is the fixture FT2
(tests/fleet/specs/fault.lua): a node is faulty while a file named after
it exists in the fault folder.

act     --dry-run changes nothing; --act drain drains the faulty n2 with
        strata's reason (sinfo -R, scontrol show node), n1/n3 untouched;
        the health check on n2 (strata-health, healthcheck mode) keeps it
        drained while faulty and resumes it (IDLE) once the fault is
        gone; then in one allocation: --act drain, an operator drains n3
        for another reason, the fault goes, --act resume: n2 back, n3
        left drained with the operator's reason.
health  slurmd itself runs the profile: Prolog=strata-health (a faulty
        n2's prolog exits 1: Slurm drains it, the job requeued held), and
        HealthCheckProgram=strata-health-check (slurmd drains a faulty n3
        with strata's reason and, the fault gone, strata resumes it); the
        profile's wall time per node is measured against the 30 s bound.
"""
import json
import os
import subprocess
import sys
import time

import openpyxl

strata, bed, work, mode = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
work = os.path.abspath(work)
os.makedirs(work, exist_ok=True)
faults = os.path.join(work, "faults")
os.makedirs(faults, exist_ok=True)
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
env = dict(os.environ, SLURM_CONF=bedenv["SLURM_CONF"])
sys.path.insert(0, here)
from bedrun import JOB, running, stop, stop_on_signals  # noqa: E402
stop_on_signals(env)


def salloc(args, timeout):
    """salloc ARGS in a session of its own (bedrun.py): past timeout s its
    session and job are stopped, none left behind, and rc is 124."""
    p = subprocess.Popen(["salloc", "--job-name", JOB] + args, env=env, cwd=root, text=True,
                         start_new_session=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    running.append(p)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        stop(p, env)
        out, err = p.communicate()
        rc = 124
        print("salloc %s did not end within %d s: stopped (rc 124)" % (args[:4], timeout))
    finally:
        running.remove(p)
    return subprocess.CompletedProcess(p.args, rc, out, err)
netns = dict(zip(bedenv["FLEET_NODES"].split(), bedenv["FLEET_NETNS"].split()))
SPECS = [os.path.join(root, "specs", "host"), os.path.join(here, "specs")]
SITE = os.path.join(work, "site-act.yaml")
with open(SITE, "w") as f:
    f.write("site: { name: fleet-act-bed, expect: [host] }\n"
            "fleet_test: { fault_dir: %s }\n" % faults)


def fault(node, on):
    p = os.path.join(faults, node)
    if on:
        open(p, "w").close()
    elif os.path.exists(p):
        os.unlink(p)


def node_state(node):
    """(State, Reason) of scontrol show node -o."""
    p = subprocess.run(["scontrol", "show", "node", "-o", node], env=env,
                       capture_output=True, text=True)
    line = p.stdout
    st = line.split(" State=", 1)[1].split()[0] if " State=" in line else ""
    reason = line.split(" Reason=", 1)[1].strip() if " Reason=" in line else ""
    return st, reason


def sinfo_r():
    p = subprocess.run(["sinfo", "-R", "-h", "-o", "%N|%E"], env=env,
                       capture_output=True, text=True)
    return dict(l.split("|", 1) for l in p.stdout.splitlines() if "|" in l)


def wait_not_alloc(nodes, limit=60):
    """Until no node of the list is allocated or completing."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        busy = [n for n in nodes if any(s in node_state(n)[0]
                                        for s in ("ALLOC", "MIXED", "COMPLETING"))]
        if not busy:
            return True
        time.sleep(0.5)
    return False


def wait_idle(node, limit=40):
    """Until node is plainly IDLE: after RESUME slurmctld marks the node
    NOT_RESPONDING until its next ping answers (observed here, 22.05)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and node_state(node)[0] != "IDLE":
        time.sleep(0.5)
    return node_state(node)


def scontrol(*a):
    return subprocess.run(["scontrol"] + list(a), env=env, capture_output=True, text=True)


def fleet_cmd(name, act):
    out = os.path.join(work, name)
    for ext in (".jsonl", ".xlsx", ".json"):
        if os.path.exists(out + ext):
            os.unlink(out + ext)
    return [strata, "run", "--fleet", "slurm"] + act + [
        "-o", out + ".xlsx", "--json", out + ".json", "--site", SITE,
        "--only", "FT2"] + SPECS, out


def severity_rows(xlsx):
    """The Severity sheet's node table as {node: {column: value}}."""
    ws = openpyxl.load_workbook(xlsx)["Severity"]
    rows = [list(r) for r in ws.iter_rows(values_only=True)]
    for i, r in enumerate(rows):
        if r and r[0] == "Node" and "Action" in r:
            return {x[0]: dict(zip(r, x)) for x in rows[i + 1:] if x and x[0]}
    return {}


def act_mode():
    nodes = ["n1", "n2", "n3"]
    fault("n2", True)
    # 0. dry-run: the command printed, nothing changed
    cmd, out = fleet_cmd("dry", ["--act", "drain", "--dry-run"])
    p = salloc(["-N", "3", "-w", ",".join(nodes)] + cmd, 200)
    sys.stdout.write(p.stderr[-1500:])
    check(p.returncode == 1 and "would run: scontrol update NodeName=n2 State=DRAIN "
          "Reason=\"strata FT2 FAIL" in p.stderr, "--dry-run prints the drain of n2 (rc %d)"
          % p.returncode)
    wait_not_alloc(nodes)
    check(all("DRAIN" not in node_state(n)[0] for n in nodes), "--dry-run drained nothing")

    # 1. --act drain: n2 DRAINED with strata's reason, n1 and n3 untouched
    cmd, out = fleet_cmd("drain", ["--act", "drain"])
    p = salloc(["-N", "3", "-w", ",".join(nodes)] + cmd, 200)
    sys.stdout.write(p.stderr[-1500:])
    check(p.returncode == 1, "the fleet run fails (FT2 on n2): rc %d" % p.returncode)
    wait_not_alloc(nodes)
    st, reason = node_state("n2")
    check(st == "IDLE+DRAIN" and reason.startswith("strata FT2 FAIL "),
          "n2 DRAINED with strata's reason: %s / %s" % (st, reason))
    r = sinfo_r()
    check(r.get("n2", "").startswith("strata FT2 FAIL") and "job" in r.get("n2", ""),
          "sinfo -R names n2 with the rung, test and run: %s" % r)
    check(all(node_state(n)[0] == "IDLE" for n in ("n1", "n3")), "n1 and n3 untouched (IDLE)")
    rows = severity_rows(out + ".xlsx")
    check(rows.get("n2", {}).get("Done") == "drained" and rows["n2"]["Action"] == "drain"
          and rows.get("n1", {}).get("Action") == "none",
          "Severity sheet: n2 drain/drained, n1 none")
    doc = json.load(open(out + ".json"))
    a = {x["node"]: x for x in doc["act"]["nodes"]}
    check(doc["severity"]["rules"][0]["action"] == "drain" and a["n2"]["op"] == "drain"
          and a["n2"]["test"] == "FT2", "JSON: the severity model and n2's drain")

    # 2. the health check on n2 (HealthCheckProgram mode, by hand in n2's
    # namespace): still faulty -> exit 1, stays drained; fixed -> resumed
    def health(node):
        t0 = time.monotonic()
        hp = subprocess.run(
            ["ip", "netns", "exec", netns[node], "unshare", "--uts", "sh", "-c",
             "hostname %s && exec %s healthcheck" % (node, hc_wrapper())],
            env=env, capture_output=True, text=True, timeout=120)
        return hp, time.monotonic() - t0
    hp, wall = health("n2")
    check(hp.returncode == 1 and hp.stdout.startswith("ERROR strata: Health check failed: FT2"),
          "health check on faulty n2: exit 1, NHC's line (%s, %.1f s)" % (hp.stdout.strip(), wall))
    check(node_state("n2")[1].startswith("strata FT2 FAIL"), "n2 stays drained, its reason kept")
    fault("n2", False)
    hp, wall = health("n2")
    check(hp.returncode == 0 and hp.stdout == "", "health check on fixed n2: exit 0, silent "
          "(%.1f s)" % wall)
    check("DRAIN" not in node_state("n2")[0], "n2 resumed by strata: %s" % node_state("n2")[0])
    st, reason = wait_idle("n2")
    check(st == "IDLE" and not reason, "n2 back to IDLE: %s %s" % (st, reason))

    # 3. one allocation: drain n2, an operator drains n3, fix, resume
    fault("n2", True)
    c1, out1 = fleet_cmd("drain2", ["--act", "drain"])
    c2, out2 = fleet_cmd("resume", ["--act", "resume"])
    script = ("%s; scontrol update NodeName=n3 State=DRAIN Reason='operator: DIMM B2 swap'; "
              "rm -f %s; %s; echo rc2=$?") % (
        " ".join(c1), os.path.join(faults, "n2"), " ".join(c2))
    p = salloc(["-N", "3", "-w", ",".join(nodes), "sh", "-c", script], 300)
    sys.stdout.write(p.stderr[-1500:])
    check("rc2=0" in p.stdout, "the resume run passes (%s)" % p.stdout.strip()[-40:])
    wait_not_alloc(nodes)
    st2, r2 = node_state("n2")
    st3, r3 = node_state("n3")
    check(st2 == "IDLE" and not r2, "n2 (strata drained it, it passes) resumed: %s" % st2)
    check("DRAIN" in st3 and r3.startswith("operator: DIMM B2 swap"),
          "n3 (an operator's drain) never resumed: %s / %s" % (st3, r3))
    rows = severity_rows(out2 + ".xlsx")
    check(rows.get("n2", {}).get("Done") == "resumed"
          and "never resumed" in (rows.get("n3", {}).get("Command / why") or ""),
          "Severity sheet of the resume run: n2 resumed, n3 left with why")
    scontrol("update", "NodeName=n3", "State=RESUME")


HC = os.path.join(work, "strata-health-bed")


def hc_wrapper():
    """The bed's HealthCheckProgram/Prolog: the shipped script with the
    bed's settings (slurmd gives its programs no environment of ours)."""
    with open(HC, "w") as f:
        f.write("""#!/bin/sh
export SLURM_CONF=%s STRATA=%s STRATA_SITE=%s STRATA_HEALTH_OUT=%s
export STRATA_HEALTH_ARGS="--set H1.load1_per_cpu.max=none --only H1 --only H2 --only G1 --only G2 --only R1 --only FT2 %s"
exec %s "$@"
""" % (bedenv["SLURM_CONF"], strata, SITE, os.path.join(work, "health-out"),
            " ".join(SPECS), os.path.join(root, "packaging", "slurm", "strata-health")))
    os.chmod(HC, 0o755)
    return HC


def reconfigure(extra):
    conf = bedenv["SLURM_CONF"]
    base = conf + ".base"
    if not os.path.exists(base):
        os.rename(conf, base)
    with open(base) as f:
        text = f.read()
    with open(conf, "w") as f:
        f.write(text + extra)
    r = scontrol("reconfigure")
    check(r.returncode == 0, "scontrol reconfigure (%s)" % (extra.strip().replace("\n", "; ")
                                                            or "restored"))
    time.sleep(2)


def health_mode():
    hc_wrapper()
    # the profile's time per node (in n1's namespace, healthy)
    walls = []
    for n in ("n1", "n2", "n3"):
        t0 = time.monotonic()
        hp = subprocess.run(["ip", "netns", "exec", netns[n], "unshare", "--uts", "sh", "-c",
                             "hostname %s && exec %s prolog" % (n, HC)],
                            env=env, capture_output=True, text=True, timeout=120)
        walls.append(time.monotonic() - t0)
        check(hp.returncode == 0, "%s healthy: prolog mode exits 0" % n)
    print("profile wall per node (H1 H2 G1 G2 R1 FT2): %s s, load %s"
          % (" ".join("%.2f" % w for w in walls), open("/proc/loadavg").read().split()[0]))
    check(max(walls) < 30, "the profile runs under 30 s per node (max %.2f s)" % max(walls))
    try:
        # Prolog: a faulty n2's prolog exits 1; Slurm itself drains it
        reconfigure("Prolog=%s\n" % HC)
        fault("n2", True)
        p = subprocess.run(["sbatch", "-w", "n2", "-N", "1", "-o", "/dev/null", "--wrap", "true"],
                           env=env, capture_output=True, text=True)
        job = p.stdout.strip().split()[-1] if p.returncode == 0 else None
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60 and "DRAIN" not in node_state("n2")[0]:
            time.sleep(0.5)
        st, reason = node_state("n2")
        check("DRAIN" in st and "rolog" in reason,
              "Slurm drained n2 on its prolog's exit code: %s / %s" % (st, reason))
        if job:
            q = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T %r"], env=env,
                               capture_output=True, text=True)
            print("job %s after the prolog failed: %s" % (job, q.stdout.strip()))
            subprocess.run(["scancel", job], env=env)
        fault("n2", False)
        scontrol("update", "NodeName=n2", "State=RESUME")
        # HealthCheckProgram: slurmd runs the check; strata drains, resumes
        reconfigure("HealthCheckProgram=%s\nHealthCheckInterval=5\nHealthCheckNodeState=ANY\n"
                    % (HC[:-len("strata-health-bed")] + "strata-health-bed-check"))
        fault("n3", True)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 90 and "DRAIN" not in node_state("n3")[0]:
            time.sleep(0.5)
        st, reason = node_state("n3")
        check("DRAIN" in st and reason.startswith("strata FT2 FAIL health"),
              "slurmd's health check drained n3 with strata's reason in %.1f s: %s / %s"
              % (time.monotonic() - t0, st, reason))
        fault("n3", False)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 90 and "DRAIN" in node_state("n3")[0]:
            time.sleep(0.5)
        took = time.monotonic() - t0
        st, reason = wait_idle("n3")
        check(st == "IDLE", "and resumed it once fixed in %.1f s: %s" % (took, st))
    finally:
        fault("n2", False)
        fault("n3", False)
        base = bedenv["SLURM_CONF"] + ".base"
        if os.path.exists(base):
            os.replace(base, bedenv["SLURM_CONF"])
            scontrol("reconfigure")
        for n in ("n2", "n3"):
            if "DRAIN" in node_state(n)[0]:
                scontrol("update", "NodeName=" + n, "State=RESUME")


if mode == "health":
    # the HealthCheckProgram's name ends -check: the script's healthcheck mode
    if not os.path.exists(HC + "-check"):
        hc_wrapper()
        with open(HC + "-check", "w") as f:
            f.write("#!/bin/sh\nexec %s healthcheck\n" % HC)
        os.chmod(HC + "-check", 0o755)
{"act": act_mode, "health": health_mode}[mode]()
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)
