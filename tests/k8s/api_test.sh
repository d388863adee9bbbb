#!/bin/sh
# The API client against fake_apiserver.py (TLS, bearer token, recorded
# answers).  usage: api_test.sh STRATA SOURCE_DIR [forbid]
set -eu
strata=$1 src=$2 mode=${3:-ok}
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir "$tmp/sa"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=kubernetes \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" \
  -out "$tmp/sa/ca.crt" 2>/dev/null
printf 'eyJhbGciOiJSUzI1NiJ9.test-token\n' > "$tmp/sa/token"
printf 'rdma-test' > "$tmp/sa/namespace"
/usr/bin/python3 "$src/tests/k8s/fake_apiserver.py" "$src/fixtures/k8s" \
  "$tmp/sa/ca.crt" "$tmp/key.pem" eyJhbGciOiJSUzI1NiJ9.test-token "$mode" > "$tmp/port" &
pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$tmp/port")
unset AWS_CA_BUNDLE || true
"$strata" lua "$src/tests/k8s/discovery.lua" "$tmp/sa" "https://127.0.0.1:$port" "$mode"
[ "$mode" = ok ] || exit 0
# the runner Job's command end to end, minus RDMA: discovery through the
# API, the derived site, a one-test run, the workbook in the results folder
mkdir "$tmp/results"
KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$port STRATA_K8S_SA_DIR=$tmp/sa \
STRATA_NODE=gpu-node-1 "$strata" k8s runner --site "$src/specs/site.example.yaml" \
  --thresholds "$src/specs/thresholds.yaml" --specs "$src/specs" \
  --results "$tmp/results" --only H1 2> "$tmp/runner.err" || true
grep -q "2 agents ready" "$tmp/runner.err" || { cat "$tmp/runner.err"; exit 1; }
grep -q "agent strata-agent-m2z8w not used: phase Pending" "$tmp/runner.err"
ls "$tmp/results"/strata-k8s-*.xlsx > /dev/null || { cat "$tmp/runner.err"; exit 1; }
ls "$tmp/results"/strata-k8s-*.jsonl > /dev/null
grep -q "peer: gpu-node-2" "$tmp/results/site.derived.yaml"
grep -q 'host: "10.0.0.2"' "$tmp/results/site.derived.yaml"
echo "runner: ok"
