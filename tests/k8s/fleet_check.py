#!/usr/bin/python3
"""fleet_check.py SOURCE_DIR TMP: what fleet_test.sh's runs left, read back.
dry     --dry-run: nothing written to the API but the run's own Jobs
faulty  gpu-node-2 faulty: the fleet workbook's node x rung matrix, the
        label/annotation PATCHes of both nodes, strata's taint added to
        gpu-node-2 beside the operator's (with the node's resourceVersion)
fixed   the fault gone: strata's taint removed, the operator's kept
usage   --pairs and --until-pass (the Slurm launcher's): exit 2, no request
always  every object strata POSTed validates against Kubernetes 1.33 and
        every one is DELETEd by name; nothing else is ever deleted;
        the rendered CronJob and RBAC validate too
"""
import glob
import json
import os
import subprocess
import sys

import openpyxl

src, tmp = sys.argv[1:3]
schema = os.path.join(src, "tests", "k8s", "fixtures", "k8s-1.33-openapi-subset.json")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks()
fails = check.fails


def reqs(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []


def matrix(xlsx):
    rows = [list(r) for r in openpyxl.load_workbook(xlsx)["Summary"].iter_rows(values_only=True)]
    for i, r in enumerate(rows):
        if r and r[0] == "Node" and "Status" in r:
            out = {}
            for x in rows[i + 1:]:
                if not x or x[0] is None:
                    break
                out[x[0]] = dict(zip(r, x))
            return out
    return {}


rc = {n: open(os.path.join(tmp, n + ".rc")).read().strip() for n in ("dry", "faulty", "fixed")}
check(rc == {"dry": "1", "faulty": "1", "fixed": "0"}, "exit codes %s" % rc)
usage = {n: (open(os.path.join(tmp, n + ".rc")).read().strip(),
             open(os.path.join(tmp, n + ".err")).read()) for n in ("pairs", "untilpass")}
check(usage["pairs"][0] == "2" and "--fleet k8s runs no pairs" in usage["pairs"][1],
      "--pairs under --fleet k8s: a usage error (exit 2) saying why: %s" % (usage["pairs"],))
check(usage["untilpass"][0] == "2" and "run each cell once" in usage["untilpass"][1],
      "--until-pass under --fleet k8s: a usage error (exit 2): %s" % (usage["untilpass"],))
before, after = (open(os.path.join(tmp, "requests-%s-usage" % w)).read().strip()
                 for w in ("before", "after"))
check(before == after, "no API request for either (%s -> %s requests)" % (before, after))
dry = reqs(os.path.join(tmp, "requests-dry.jsonl"))
check(dry and all(r["method"] in ("POST", "DELETE") for r in dry),
      "--dry-run: only the run's own Jobs and ConfigMaps, no PATCH (%d requests)" % len(dry))
err = open(os.path.join(tmp, "dry.err")).read()
check("would send: PATCH /api/v1/nodes/gpu-node-2" in err, "--dry-run prints the PATCH")
m = matrix(os.path.join(tmp, "faulty.xlsx"))
check(sorted(m) == ["gpu-node-1", "gpu-node-2"], "a matrix row per agent node: %s" % sorted(m))
check(m.get("gpu-node-1", {}).get("FT2") == "PASS" and m.get("gpu-node-2", {}).get("FT2") == "FAIL"
      and m["gpu-node-1"].get("H1") == "PASS", "gpu-node-1 PASS, gpu-node-2 FT2 FAIL")
allreq = reqs(os.path.join(tmp, "state", "requests.jsonl"))
run_of = []
for r in allreq:
    if r["method"] == "POST" and r["body"]["kind"] == "Job":
        run_of.append(r["body"]["metadata"]["labels"]["strata/run"])
runs = sorted(set(run_of), key=run_of.index)
check(len(runs) == 4, "four runs, each its own Jobs: %s" % runs)
patches = [r for r in allreq if r["method"] == "PATCH"]
check(all(p["content_type"] == "application/merge-patch+json" for p in patches),
      "every PATCH is a JSON merge patch")
lab = {}
taint = []
for p in patches:
    node = p["path"].rsplit("/", 1)[1]
    md = p["body"].get("metadata", {})
    if "labels" in md:
        lab.setdefault(node, []).append(md)
    if "spec" in p["body"]:
        taint.append((node, p["body"]))
check(lab.get("gpu-node-2", [{}])[0].get("labels", {}).get("strata/verdict") == "FAIL"
      and lab["gpu-node-2"][0]["labels"].get("strata/lowest-failed-rung") == "host"
      and lab["gpu-node-2"][0]["annotations"].get("strata/lowest-failed-rung") == "host FT2 FAIL"
      and runs[1] in lab["gpu-node-2"][0]["annotations"].get("strata/run", ""),
      "gpu-node-2 labelled FAIL / host, annotated with the test and the run")
check(lab.get("gpu-node-1", [{}])[0].get("labels", {}).get("strata/verdict") == "PASS"
      and lab["gpu-node-1"][0]["labels"].get("strata/lowest-failed-rung") == "none",
      "gpu-node-1 labelled PASS / none")
check(lab.get("gpu-node-2", [{}, {}])[1].get("labels", {}).get("strata/verdict") == "PASS",
      "after the fix gpu-node-2 is labelled PASS")
check(len(taint) == 2 and all(n == "gpu-node-2" for n, _ in taint), "taint PATCHes: gpu-node-2 only, "
      "added then removed (%s)" % [n for n, _ in taint])
if len(taint) == 2:
    add, rem = taint[0][1], taint[1][1]
    keys = lambda b: sorted(t["key"] for t in b["spec"]["taints"])
    check(keys(add) == ["example.com/maintenance", "strata/verdict"]
          and add["metadata"].get("resourceVersion"),
          "strata's NoSchedule taint added beside the operator's, on the resourceVersion read")
    check(keys(rem) == ["example.com/maintenance"], "removed again; the operator's taint kept")
# every object made validates, and is deleted; nothing else is deleted
objs = sorted(glob.glob(os.path.join(tmp, "state", "objects", "*.json")))
p = subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "k8s", "openapi_validate.py"),
                    schema] + objs, capture_output=True, text=True)
check(objs and p.returncode == 0, "the %d Jobs and ConfigMaps strata made validate against "
      "1.33: %s" % (len(objs), p.stdout.strip()[-300:]))
made = {r["path"].rstrip("/") + "/" + r["body"]["metadata"]["name"]
        for r in allreq if r["method"] == "POST"}
deleted = {r["path"] for r in allreq if r["method"] == "DELETE"}
check(made == deleted, "every object made deleted by name, nothing else (%d)" % len(made))
job = json.load(open([o for o in objs if "/Job-" in o][0]))
ps = job["spec"]["template"]["spec"]
check(ps["nodeName"] in ("gpu-node-1", "gpu-node-2") and
      {"key": "strata/verdict", "operator": "Exists", "effect": "NoSchedule"} in ps["tolerations"],
      "each Job pinned by nodeName, tolerating strata's own taint")
doc = json.load(open(os.path.join(tmp, "faulty.json")))
a = {x["node"]: x for x in doc["act"]["nodes"]}
check(a["gpu-node-2"]["action"] == "drain" and "tainted" in (a["gpu-node-2"].get("done") or ""),
      "JSON act: gpu-node-2 drain, labelled and tainted")
# a node passing with a WARN test: exit 0, labelled WARN, the action warn
check(open(os.path.join(tmp, "warn.rc")).read().strip() == "0", "the WARN run exits 0")
wl = [p for p in reqs(os.path.join(tmp, "state", "requests.jsonl")) if p["method"] == "PATCH"
      and "warn (FT1 WARN)" in json.dumps(p["body"])]
check(len(wl) == 2 and all(p["body"]["metadata"]["labels"]["strata/verdict"] == "WARN" for p in wl),
      "WARN -> both nodes labelled strata/verdict=WARN, annotated 'warn (FT1 WARN)'")
# the health profile's pod: NHC's exit and line, the textfile, the labels
check(open(os.path.join(tmp, "health.rc")).read().strip() == "1"
      and open(os.path.join(tmp, "health.out")).read().startswith(
          "ERROR strata: Health check failed: FT2 FAIL"), "strata health on faulty gpu-node-1: exit 1")
prom = open(os.path.join(tmp, "health.prom")).read()
check('strata_test_pass{host="gpu-node-1",layer="host",status="FAIL",test="FT2"} 0' in prom
      and 'strata_health_action{action="drain",host="gpu-node-1"} 1' in prom,
      "the textfile: a gauge per node and rung, and the action")
last = [p for p in reqs(os.path.join(tmp, "state", "requests.jsonl")) if p["method"] == "PATCH"][-1]
check(last["path"].endswith("/gpu-node-1")
      and last["body"]["metadata"]["labels"].get("strata/verdict") == "FAIL"
      and last["body"]["metadata"]["annotations"]["strata/run"].startswith("health "),
      "the health pod labelled its own node FAIL")
# the opt-in manifests
man = sorted(glob.glob(os.path.join(tmp, "manifests", "*.yaml")))
names = [os.path.basename(x) for x in man]
check("11-cronjob-health.yaml" in names and "12-clusterrole-act.yaml" in names
      and "13-role-fleet.yaml" in names, "rendered: health CronJob, act and fleet RBAC")
p = subprocess.run(["/usr/bin/python3", os.path.join(src, "tests", "k8s", "openapi_validate.py"),
                    schema] + man, capture_output=True, text=True)
check(p.returncode == 0, "every rendered manifest validates against 1.33: %s" % p.stdout.strip()[-300:])
print("%d failed" % len(fails))
sys.exit(1 if fails else 0)
