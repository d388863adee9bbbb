#!/bin/sh
# strata report --prometheus on a real journal (a one-test run), then the
# writer on the fixture run model; both read back by strata's parser.
# usage: prometheus_test.sh STRATA SOURCE_DIR
set -eu
strata=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
"$strata" run --only H1 -o "$tmp/run.xlsx" > /dev/null 2>&1 || true
"$strata" report "$tmp/run.jsonl" -o "$tmp/again.xlsx" --prometheus "$tmp/run.prom"
test ! -e "$tmp/run.prom.tmp"
"$strata" lua tests/k8s/prometheus.lua fixtures/report/model.lua "$tmp/model.prom" "$tmp/run.prom"
