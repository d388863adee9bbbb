#!/bin/sh
# strata.k8s.yamlout read back by libyaml (strata.yaml) and by PyYAML
# (YAML 1.1, as many Kubernetes tools read YAML).
# usage: yamlout_test.sh STRATA SOURCE_DIR
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$1" lua "$2/tests/k8s/yamlout.lua" "$tmp/doc"
/usr/bin/python3 - "$tmp/doc" <<'PY'
import json, sys, yaml
a = yaml.safe_load(open(sys.argv[1] + ".yaml"))
b = json.load(open(sys.argv[1] + ".json"))
bad = [(k, a.get(k), b[k]) for k in b if a.get(k) != b[k]]
assert not bad, bad
assert a["empty_list"] == [] and a["empty_map"] == {}
print("yamlout (PyYAML): ok")
PY
