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
# --upload: the same run, results PUT into the site's bucket (the
# reference S3 server of fixtures/s3rdma, plain S3 with SigV4 checked)
srvbin=$(dirname "$strata")/fixtures/s3rdma/strata-s3rdma-server
[ -x "$srvbin" ] || { echo "no $srvbin: upload not tested" >&2; exit 1; }
export AWS_ACCESS_KEY_ID=AKIDSTRATAK8S AWS_SECRET_ACCESS_KEY=k8s-upload-secret
# port 0: the kernel picks a free one, the server's log says which
"$srvbin" --root "$tmp/store" --no-rdma --listen 127.0.0.1 --port 0 2> "$tmp/s3.log" &
s3pid=$!
trap 'kill $s3pid 2>/dev/null; cleanup' EXIT
i=0
while [ $i -lt 50 ] && ! grep -q listening "$tmp/s3.log"; do sleep 0.1; i=$((i + 1)); done
s3port=$(sed -n 's/^s3rdma-server: listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$tmp/s3.log")
[ -n "$s3port" ] || { echo "api_test.sh: no reference server" >&2; cat "$tmp/s3.log"; exit 1; }
"$strata" lua "$src/tests/k8s/s3check.lua" "http://127.0.0.1:$s3port" strata-results mkbucket
sed "s|https://aistor.example:9000|http://127.0.0.1:$s3port|" "$src/tests/k8s/site-multus.yaml" \
  > "$tmp/site-upload.yaml"
mkdir "$tmp/results2"
KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$port STRATA_K8S_SA_DIR=$tmp/sa \
STRATA_NODE=gpu-node-1 "$strata" k8s runner --site "$tmp/site-upload.yaml" \
  --thresholds "$src/specs/thresholds.yaml" --specs "$src/specs" \
  --results "$tmp/results2" --only H1 --upload 2> "$tmp/runner2.err" || true
grep -q "uploaded s3://strata-results/runs/strata-k8s-" "$tmp/runner2.err" ||
  { cat "$tmp/runner2.err" "$tmp/s3.log"; exit 1; }
keys=$(sed -n 's|^strata: uploaded s3://strata-results/||p' "$tmp/runner2.err")
"$strata" lua "$src/tests/k8s/s3check.lua" "http://127.0.0.1:$s3port" strata-results check runs/ $keys
