#!/usr/bin/python3
"""The Kubernetes API stand-in of fake_apiserver.py, grown by what
`strata run --fleet k8s` and `--act label,taint` ask (docs/kubernetes.md,
"The fleet on Kubernetes"): no API server, kubelet or container runtime
exists here, so this one process is all three, and says so.

  GET    .../pods?labelSelector=<agents>    fixtures/k8s/pods-agents.json
  GET    /api/v1/nodes/NAME                 gpu-node-1: the fixture;
                                            gpu-node-2: the same, renamed,
                                            with an operator's taint
  PATCH  /api/v1/nodes/NAME                 JSON merge patch (RFC 7386) only
                                            (415 otherwise); a stale
                                            metadata.resourceVersion: 409
  POST   .../configmaps, .../jobs           kept; a Job's pod is "run" at
                                            once: STRATA node --work <its
                                            ConfigMap's work.json>, with
                                            STRATA_NODE = spec.nodeName
  GET    .../pods?labelSelector=job-name=J  that pod (Succeeded or Failed)
  GET    .../pods/NAME/log                  its stdout
  DELETE .../configmaps/N, .../jobs/N       removed (404 if never made)

Every write is appended to STATE/requests.jsonl (method, path, body) and
every object made is kept in STATE/objects/ for the schema check.
usage: fleet_apiserver.py FIXTURES CERT KEY TOKEN STRATA STATE
"""
import copy
import http.server
import json
import os
import ssl
import subprocess
import sys
import tempfile
import urllib.parse

FIX, CERT, KEY, TOKEN, STRATA, STATE = sys.argv[1:7]
SELECTOR = "app.kubernetes.io/name=strata,app.kubernetes.io/component=agent"
os.makedirs(os.path.join(STATE, "objects"), exist_ok=True)
n1 = json.load(open(os.path.join(FIX, "node-gpu-node-1.json")))
n2 = copy.deepcopy(n1)
n2["metadata"]["name"] = "gpu-node-2"
n2["metadata"]["labels"]["kubernetes.io/hostname"] = "gpu-node-2"
n2["spec"]["taints"] = [{"key": "example.com/maintenance", "value": "bios",
                         "effect": "NoSchedule"}]
NODES = {"gpu-node-1": n1, "gpu-node-2": n2}
CMS, JOBS, PODS = {}, {}, {}


def merge(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge(target.get(k), v)
    return target


def status(code, reason, msg):
    return code, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                  "status": "Success" if code < 300 else "Failure",
                  "message": msg, "reason": reason, "code": code}


def run_pod(ns, job):
    """The kubelet of the stand-in: the Job's one container, on this host."""
    tpl = job["spec"]["template"]
    podspec = tpl["spec"]
    c = podspec["containers"][0]
    cm = [v["configMap"]["name"] for v in podspec.get("volumes", []) if "configMap" in v][0]
    mount = [m["mountPath"] for m in c["volumeMounts"] if m["name"] == "work"][0]
    work = CMS[(ns, cm)]["data"]["work.json"]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "work.json")
        open(path, "w").write(work)
        argv = [STRATA] + [path if a == mount + "/work.json" else a for a in c["command"][1:]]
        env = dict(os.environ, STRATA_NODE=podspec["nodeName"])
        env.pop("SLURMD_NODENAME", None)
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    name = job["metadata"]["name"] + "-x7k2q"
    PODS[(ns, name)] = {
        "pod": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns,
                             "labels": dict(tpl["metadata"].get("labels", {}),
                                            **{"job-name": job["metadata"]["name"]})},
                "spec": {"nodeName": podspec["nodeName"], "containers": [
                    {"name": c["name"], "image": c["image"]}]},
                "status": {"phase": "Succeeded" if p.returncode == 0 else "Failed"}},
        "log": p.stdout}


class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj, ctype="application/json"):
        body = obj.encode() if isinstance(obj, str) else json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authed(self):
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            self.reply(*status(401, "Unauthorized", "Unauthorized"))
            return False
        return True

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        return json.loads(raw) if raw else None

    def record(self, method, path, body):
        with open(os.path.join(STATE, "requests.jsonl"), "a") as f:
            f.write(json.dumps({"method": method, "path": path, "body": body,
                                "content_type": self.headers.get("Content-Type")}) + "\n")

    def do_GET(self):
        if not self.authed():
            return
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        parts = u.path.strip("/").split("/")
        if u.path.endswith("/pods") and q.get("labelSelector") == [SELECTOR]:
            return self.reply(200, json.load(open(os.path.join(FIX, "pods-agents.json"))))
        if u.path.endswith("/pods") and q.get("labelSelector", [""])[0].startswith("job-name="):
            job = q["labelSelector"][0].split("=", 1)[1]
            items = [p["pod"] for (ns, _), p in PODS.items()
                     if p["pod"]["metadata"]["labels"].get("job-name") == job]
            return self.reply(200, {"kind": "PodList", "apiVersion": "v1",
                                    "metadata": {"resourceVersion": "1"}, "items": items})
        if len(parts) == 7 and parts[6] == "log":
            p = PODS.get((parts[3], parts[5]))
            return self.reply(200, p["log"], "text/plain") if p else \
                self.reply(*status(404, "NotFound", "pods \"%s\" not found" % parts[5]))
        if len(parts) == 4 and parts[2] == "nodes" and parts[3] in NODES:
            return self.reply(200, NODES[parts[3]])
        self.reply(*status(404, "NotFound", "not found"))

    def do_PATCH(self):
        if not self.authed():
            return
        parts = urllib.parse.urlsplit(self.path).path.strip("/").split("/")
        body = self.body()
        self.record("PATCH", self.path, body)
        if self.headers.get("Content-Type") != "application/merge-patch+json":
            return self.reply(*status(415, "UnsupportedMediaType", "only merge-patch here"))
        if len(parts) != 4 or parts[2] != "nodes" or parts[3] not in NODES:
            return self.reply(*status(404, "NotFound", "not found"))
        node = NODES[parts[3]]
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if rv is not None and rv != node["metadata"]["resourceVersion"]:
            return self.reply(*status(409, "Conflict", "the object has been modified"))
        body.get("metadata", {}).pop("resourceVersion", None)
        merge(node, body)
        node["metadata"]["resourceVersion"] = str(int(node["metadata"]["resourceVersion"]) + 1)
        self.reply(200, node)

    def do_POST(self):
        if not self.authed():
            return
        parts = urllib.parse.urlsplit(self.path).path.strip("/").split("/")
        obj = self.body()
        self.record("POST", self.path, obj)
        name = obj["metadata"]["name"]
        with open(os.path.join(STATE, "objects", "%s-%s.json" % (obj["kind"], name)), "w") as f:
            json.dump(obj, f)
        ns = parts[-2]
        if parts[-1] == "configmaps":
            CMS[(ns, name)] = obj
        elif parts[-1] == "jobs":
            JOBS[(ns, name)] = obj
            run_pod(ns, obj)
        else:
            return self.reply(*status(404, "NotFound", "not found"))
        self.reply(201, obj)

    def do_DELETE(self):
        if not self.authed():
            return
        parts = urllib.parse.urlsplit(self.path).path.strip("/").split("/")
        self.record("DELETE", self.path, self.body())
        store = {"configmaps": CMS, "jobs": JOBS}.get(parts[-2])
        key = (parts[-3], parts[-1])
        if store is None or key not in store:
            return self.reply(*status(404, "NotFound", "not found"))
        del store[key]
        if parts[-2] == "jobs":
            for k in [k for k, p in PODS.items() if p["pod"]["metadata"]["labels"]["job-name"] == parts[-1]]:
                del PODS[k]
        self.reply(*status(200, "", "deleted"))


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(CERT, KEY)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
