#!/bin/sh
# run.sh STRATA OUTDIR - T1T4 over fixture rows, judged by the shipped
# specs/thresholds.yaml: a benefit by CPU alone must PASS (RUNBOOK's 22 vs
# 23 GB/s example), no benefit must FAIL.
set -u
S=$1; O=$2; here=$(cd "$(dirname "$0")" && pwd); src=$here/../../..
mkdir -p "$O"
cd "$src" || exit 2
for case in benefit:PASS none:FAIL; do
  name=${case%%:*}; want=${case#*:}
  "$S" run specs/s3rdma/T1T4.lua "$here/fixture.lua" "$here/rdma-$name.lua" \
    -o "$O/t1t4-$name.xlsx" >/dev/null 2>"$O/t1t4-$name.err"
  "$S" lua "$here/check.lua" "$O/t1t4-$name.jsonl" "$want" || {
    cat "$O/t1t4-$name.err"; exit 1; }
done
