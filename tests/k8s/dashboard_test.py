#!/usr/bin/python3
"""packaging/grafana/strata-rdma.json: valid JSON of Grafana's dashboard
model, every panel a Prometheus query, and every metric name (or name
pattern) a query uses listed in docs/provenance.md; none of the
inter-node minio_system_network_internode_rdma_* names (no public source).
usage: dashboard_test.py SOURCE_DIR"""
import json
import re
import sys

src = sys.argv[1]
d = json.load(open(src + "/packaging/grafana/strata-rdma.json"))
prov = open(src + "/docs/provenance.md").read()
k8s = prov.split("## Kubernetes", 1)[1] if "## Kubernetes" in prov else ""
fails = []
names = set()
for p in d["panels"]:
    if not p.get("targets"):
        fails.append("panel %s has no query" % p.get("title"))
    for t in p.get("targets", []):
        e = t["expr"]
        names.update(re.findall(r'__name__=~"([^"]+)"', e))
        e2 = re.sub(r'\{[^}]*\}', "", e)
        e2 = re.sub(r'\[[^]]*\]', "", e2)
        for w in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e2):
            if w.startswith(("minio_", "node_", "strata_")):
                names.add(w)
for n in sorted(names):
    # a | inside a Markdown table cell is written \|
    if "`%s`" % n.replace("|", "\\|") not in prov:
        fails.append("%s is not in docs/provenance.md" % n)
    if n.startswith("minio_system_network_internode_rdma"):
        fails.append("%s: inter-node names have no public source" % n)
if d.get("uid") != "strata-rdma" or not isinstance(d.get("schemaVersion"), int):
    fails.append("uid/schemaVersion")
for f in fails:
    print("FAIL:", f)
print("dashboard: %d names, %s" % (len(names), "ok" if not fails else "%d failure(s)" % len(fails)))
sys.exit(1 if fails else 0)
