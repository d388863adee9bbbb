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
