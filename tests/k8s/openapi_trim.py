#!/usr/bin/python3
"""Cut the Kubernetes OpenAPI v2 document (api/openapi-spec/swagger.json)
down to the definitions the rendered manifests and the recorded API
answers use, and everything they reference.  Re-run to refresh the
fixture:
  openapi_trim.py swagger.json fixtures/k8s-1.33-openapi-subset.json
The source of the committed fixture is named in its "x-strata-source".
"""
import hashlib
import json
import sys

ROOTS = [
    "io.k8s.api.core.v1.Namespace", "io.k8s.api.core.v1.ServiceAccount",
    "io.k8s.api.core.v1.ConfigMap", "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.apps.v1.DaemonSet", "io.k8s.api.batch.v1.Job",
    "io.k8s.api.batch.v1.CronJob", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.api.rbac.v1.Role", "io.k8s.api.rbac.v1.RoleBinding",
    "io.k8s.api.rbac.v1.ClusterRole", "io.k8s.api.rbac.v1.ClusterRoleBinding",
    "io.k8s.api.core.v1.PodList", "io.k8s.api.core.v1.Node",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
]

SOURCE = ("kubernetes/kubernetes api/openapi-spec/swagger.json, branch "
          "release-1.33, as vendored unmodified by kubernetes-client/python "
          "v33.1.0 (commit 8f5578ee6845d33b3fb54867e2ea88349df6d07e, file "
          "kubernetes/swagger.json.unprocessed; scripts/constants.py "
          "KUBERNETES_BRANCH = \"release-1.33\")")


def refs(node, out):
    if isinstance(node, dict):
        r = node.get("$ref")
        if r:
            out.add(r.rsplit("/", 1)[1])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def main():
    raw = open(sys.argv[1], "rb").read()
    doc = json.loads(raw)
    defs = doc["definitions"]
    keep, todo = set(), list(ROOTS)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        found = set()
        refs(defs[name], found)
        todo.extend(found - keep)
    sub = {k: defs[k] for k in sorted(keep)}
    for d in sub.values():      # descriptions are most of the bytes
        strip(d)
    out = {"x-strata-source": SOURCE,
           "x-strata-source-sha256": hashlib.sha256(raw).hexdigest(),
           "x-strata-trimmed-by": "tests/k8s/openapi_trim.py",
           "swagger": doc["swagger"], "info": doc["info"], "definitions": sub}
    with open(sys.argv[2], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def strip(node):
    if isinstance(node, dict):
        node.pop("description", None)
        for v in node.values():
            strip(v)
    elif isinstance(node, list):
        for v in node:
            strip(v)


if __name__ == "__main__":
    main()
