#!/bin/sh
# strata run --fleet k8s and --act label,taint against the API stand-in
# (tests/k8s/fleet_apiserver.py: API server, kubelet and runtime in one,
# running each pinned Job's `strata node` on this host), then the checks
# of fleet_check.py.  usage: fleet_test.sh STRATA SOURCE_DIR
set -eu
strata=$1 src=$2
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir "$tmp/sa" "$tmp/faults" "$tmp/state"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=kubernetes \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" \
  -out "$tmp/sa/ca.crt" 2>/dev/null
printf 'eyJhbGciOiJSUzI1NiJ9.fleet-token\n' > "$tmp/sa/token"
printf 'rdma-test' > "$tmp/sa/namespace"
/usr/bin/python3 "$src/tests/k8s/fleet_apiserver.py" "$src/fixtures/k8s" "$tmp/sa/ca.crt" \
  "$tmp/key.pem" eyJhbGciOiJSUzI1NiJ9.fleet-token "$strata" "$tmp/state" > "$tmp/port" &
pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$tmp/port")
sed "s|FAULTS|$tmp/faults|" "$src/tests/k8s/site-fleet.yaml" > "$tmp/site.yaml"
export KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$port STRATA_K8S_SA_DIR=$tmp/sa
unset AWS_CA_BUNDLE || true
run() {  # NAME [more args]: one fleet run of H1 and the fault fixture
  name=$1; shift
  rc=0
  "$strata" run --fleet k8s --site "$tmp/site.yaml" --set H1.load1_per_cpu.max=none \
    --only H1 --only FT2 -o "$tmp/$name.xlsx" --json "$tmp/$name.json" "$@" \
    "$src/specs/host" "$src/tests/fleet/specs" 2> "$tmp/$name.err" || rc=$?
  echo "$rc" > "$tmp/$name.rc"
  cat "$tmp/$name.err"
}
touch "$tmp/faults/gpu-node-2"
run dry --act label,taint --dry-run
cp "$tmp/state/requests.jsonl" "$tmp/requests-dry.jsonl" 2>/dev/null || : > "$tmp/requests-dry.jsonl"
run faulty --act label,taint
rm "$tmp/faults/gpu-node-2"
run fixed --act label,taint
# a WARN (the FT1 fixture past a warn band): passes, labelled WARN
run warn --act label --set FT1.slept_s.warn.min=100 --only FT1
# options of the Slurm launcher only: exit 2 before any request
wc -l < "$tmp/state/requests.jsonl" > "$tmp/requests-before-usage"
run pairs --pairs ring
run untilpass --until-pass 2
wc -l < "$tmp/state/requests.jsonl" > "$tmp/requests-after-usage"
# the health CronJob's command on one node (as its pod runs it): the
# textfile gauges and the node's labels through the same API
touch "$tmp/faults/gpu-node-1"
hrc=0
STRATA_NODE=gpu-node-1 "$strata" health --k8s-act label --site "$tmp/site.yaml" \
  --set H1.load1_per_cpu.max=none --only H1 --only FT2 -o "$tmp/health.xlsx" \
  --prometheus "$tmp/health.prom" "$src/specs/host" "$src/tests/fleet/specs" \
  > "$tmp/health.out" 2> "$tmp/health.err" || hrc=$?
echo "$hrc" > "$tmp/health.rc"
"$strata" k8s render --site "$tmp/site.yaml" -o "$tmp/manifests" "$src/specs" 2> "$tmp/render.err" ||
  { cat "$tmp/render.err"; exit 1; }
/usr/bin/python3 "$src/tests/k8s/fleet_check.py" "$src" "$tmp"
