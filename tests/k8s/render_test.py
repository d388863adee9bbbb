#!/usr/bin/python3
"""strata k8s render for specs/site.example.yaml: every manifest valid
against the Kubernetes 1.33 OpenAPI definitions (strict), and equal to
the golden files in tests/k8s/golden once the parts that follow other
files are checked and folded: ConfigMap data must be those files' bytes
(site, thresholds, every spec), the runner's spec items one per spec.
usage: render_test.py STRATA SOURCE_DIR [--update]
"""
import copy
import glob
import os
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openapi_validate  # noqa: E402

strata, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
update = "--update" in sys.argv
schema = os.path.join(src, "tests/k8s/fixtures/k8s-1.33-openapi-subset.json")
golden = os.path.join(src, "tests/k8s/golden")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks(quiet=True)
fails = check.fails


def read(p):
    return open(p, encoding="utf-8").read()


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "k8s")
    r = subprocess.run([strata, "k8s", "render", "--site", "specs/site.example.yaml",
                        "-o", out], cwd=src, capture_output=True, text=True)
    check(r.returncode == 0, "render exit %d: %s" % (r.returncode, r.stderr))
    files = sorted(glob.glob(out + "/*.yaml"))
    check(len(files) >= 12, "manifests written: %d" % len(files))
    rc = subprocess.run(["/usr/bin/python3", os.path.join(src, "tests/k8s/openapi_validate.py"),
                         schema] + files, capture_output=True, text=True)
    check(rc.returncode == 0, "schema validation:\n" + rc.stdout)

    specs = sorted(p[len(src) + 7:] for p in glob.glob(src + "/specs/**/*.lua", recursive=True))
    normal = {}
    for f in files:
        doc = yaml.safe_load(read(f))
        name = os.path.basename(f)
        if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "strata-site":
            check(doc["data"]["site.yaml"] == read(src + "/specs/site.example.yaml"), "site bytes")
            doc["data"] = {"site.yaml": "<specs/site.example.yaml>"}
        if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "strata-thresholds":
            check(doc["data"]["thresholds.yaml"] == read(src + "/specs/thresholds.yaml"),
                  "thresholds bytes")
            doc["data"] = {"thresholds.yaml": "<specs/thresholds.yaml>"}
        if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "strata-specs":
            keys = sorted(doc["data"])
            check(keys == sorted(s.replace("/", "__") for s in specs), "one key per spec")
            for s in specs:
                check(doc["data"].get(s.replace("/", "__")) == read(src + "/specs/" + s),
                      "spec bytes " + s)
            doc["data"] = {"<spec>": "<specs/**/*.lua>"}
        if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "strata-grafana-dashboard":
            check(doc["data"]["strata-rdma.json"] == read(src + "/packaging/grafana/strata-rdma.json"),
                  "dashboard bytes")
            doc["data"] = {"strata-rdma.json": "<packaging/grafana/strata-rdma.json>"}
        if doc["kind"] == "Job":
            vols = doc["spec"]["template"]["spec"]["volumes"]
            for v in vols:
                if v["name"] == "specs":
                    items = v["configMap"]["items"]
                    check([i["path"] for i in items] == specs, "spec items")
                    check(all(i["key"] == i["path"].replace("/", "__") for i in items), "item keys")
                    v["configMap"]["items"] = ["<one per spec>"]
        normal[name] = yaml.safe_dump(doc, sort_keys=True)

    # the validator is not a pushover: it rejects what the API would
    ds = yaml.safe_load(read(out + "/07-daemonset-agent.yaml"))
    c = ds["spec"]["template"]["spec"]["containers"][0]
    bad = copy.deepcopy(ds)
    bad["spec"]["template"]["spec"]["containers"][0]["securityContxt"] = {}
    bad["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "18515"
    del bad["spec"]["selector"]
    ck = openapi_validate.Checker(__import__("json").load(open(schema)))
    ck.object(bad)
    errs = "\n".join(ck.errors)
    check("securityContxt: unknown field" in errs, "unknown field caught: " + errs)
    check("containerPort: expected an integer" in errs, "type caught")
    check("required field 'selector'" in errs, "required caught")
    # what the agent asks for
    check(c["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"], "IPC_LOCK")
    check(c["resources"]["limits"] == {"rdma/rdma_shared_device_a": "1"}, "RDMA resource")
    check(ds["spec"]["template"]["spec"]["hostNetwork"] is True, "hostNetwork")
    role = yaml.safe_load(read(out + "/02-role.yaml"))
    check(role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
          "least RBAC")
    for f in files:
        check("secretKeyRef" in read(f) or "AKIA" not in read(f), "no inline secret")

    # the other shapes: Multus, named nodes, GPUs, results to S3
    out2 = os.path.join(tmp, "multus")
    r = subprocess.run([strata, "k8s", "render", "--site", "tests/k8s/site-multus.yaml",
                        "-o", out2, "--no-dashboard"], cwd=src, capture_output=True, text=True)
    check(r.returncode == 0, "multus render: " + r.stderr)
    f2 = sorted(glob.glob(out2 + "/*.yaml"))
    rc = subprocess.run(["/usr/bin/python3", os.path.join(src, "tests/k8s/openapi_validate.py"),
                         schema] + f2, capture_output=True, text=True)
    check(rc.returncode == 0, "multus schema validation:\n" + rc.stdout)
    check(not os.path.exists(out2 + "/08-pvc-results.yaml"), "no PVC when results go to S3")
    check(not os.path.exists(out2 + "/10-configmap-grafana.yaml"), "--no-dashboard")
    ds2 = yaml.safe_load(read(out2 + "/07-daemonset-agent.yaml"))
    pt = ds2["spec"]["template"]
    check(pt["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "strata-lab-b/roce-net"},
          "Multus annotation")
    check("hostNetwork" not in pt["spec"], "no hostNetwork with Multus")
    terms = pt["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    check(terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["gpu-node-1", "gpu-node-2"],
          "node affinity")
    check(pt["spec"]["containers"][0]["resources"]["limits"] ==
          {"rdma/hca_shared_devices_a": "2", "nvidia.com/gpu": "1"}, "agent resources")
    job2 = yaml.safe_load(read(out2 + "/09-job-runner.yaml"))
    c2 = job2["spec"]["template"]["spec"]["containers"][0]
    check("--upload" in c2["command"] and c2["command"][-4:] == ["--only", "R8", "--only", "R2"],
          "runner command: %s" % c2["command"])
    check({"name": "results", "emptyDir": {}} in job2["spec"]["template"]["spec"]["volumes"],
          "results in emptyDir")
    envs = {e["name"]: e for e in c2["env"]}
    check(envs["AWS_SECRET_ACCESS_KEY"]["valueFrom"]["secretKeyRef"] ==
          {"name": "strata-secrets", "key": "AWS_SECRET_ACCESS_KEY"}, "secret by reference")
    # bad input: exit 2 naming the file and line
    bad = os.path.join(tmp, "bad.yaml")
    open(bad, "w").write(read(src + "/tests/k8s/site-multus.yaml").replace(
        "network: { multus: strata-lab-b/roce-net }", "network: bridge"))
    r = subprocess.run([strata, "k8s", "render", "--site", bad, "-o", os.path.join(tmp, "b")],
                       cwd=src, capture_output=True, text=True)
    check(r.returncode == 2 and "bad.yaml:17: k8s.network" in r.stderr, "bad network: %d %s" % (
        r.returncode, r.stderr))
    r = subprocess.run([strata, "k8s", "render"], cwd=src, capture_output=True, text=True)
    check(r.returncode == 2 and "--site" in r.stderr, "no --site: exit 2")

    if update:
        os.makedirs(golden, exist_ok=True)
        for g in glob.glob(golden + "/*.yaml"):
            os.remove(g)
        for name, text in normal.items():
            open(os.path.join(golden, name), "w").write(text)
    else:
        want = sorted(os.path.basename(g) for g in glob.glob(golden + "/*.yaml"))
        check(want == sorted(normal), "golden file set: %s vs %s" % (want, sorted(normal)))
        for name, text in normal.items():
            gp = os.path.join(golden, name)
            if os.path.exists(gp) and read(gp) != text:
                fails.append("%s differs from tests/k8s/golden (render_test.py --update after a "
                             "deliberate change)" % name)

for f in fails:
    print("FAIL:", f)
print("render_test: %s" % ("ok" if not fails else "%d failure(s)" % len(fails)))
sys.exit(1 if fails else 0)
