#!/bin/bash
# site_init_test.sh STRATA WORK - `strata site init` on the lab's guest a
# (ctest lab_site_init, issue 27): init writes the site file from what the
# guest shows (two NUMA nodes, rxe0 and its rate, the md scratch arrays),
# check names its TODOs, and a run with that file and nothing else edited
# (the lab's emulation profile beside it) measures the host rung, R1 and
# the storage rung: none of them ERRORs or SKIPs for want of a site fact.
# (R2-R6 and the wire rows are left out: without the lab's scale: block
# their full matrix over loopback rxe under TCG takes tens of minutes.)
set -u
S=$1; W=$2
here=$(cd "$(dirname "$0")" && pwd)
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
rm -rf "$W"; mkdir -p "$W"
L=${STRATA_LAB_DIR:?}
cd "$here/../.."
trap '"$S" lab down > /dev/null 2>&1' EXIT

"$S" lab up --senders 0 > "$W/up.log" 2>&1; rc=$?
check "lab up exits 0" '[ $rc = 0 ]' || { cat "$W/up.log"; exit 1; }
ex() { lab/lab.sh exec --dir "$L" a "$@"; }

ex "$S" site init -o "$W/site.yaml" > "$W/init.log" 2>&1; rc=$?
cat "$W/site.yaml"
check "site init in guest a exits 0" '[ $rc = 0 ]'
check "... the guest's two NUMA nodes" 'grep -Eq "^  numa_nodes: 2 +# /sys/devices/system/node" "$W/site.yaml"'
check "... rxe0, with its rate as R1 reads it" 'grep -Eq "^  line_rate_gbps: [0-9.]+ +# ibv_query_port\(rxe0, 1\)" "$W/site.yaml"'
check "... an S2-S4 file that fits the small arrays" 'grep -Eq "^  size: \"?[0-9]+M\"? +# df /scratch" "$W/site.yaml"'
check "... the md scratch arrays" 'grep -q "    - { numa_node: 0, path: /scratch0 }" "$W/site.yaml" && grep -q "    - { numa_node: 1, path: /scratch1 }" "$W/site.yaml"'
ex "$S" check --site "$W/site.yaml" > "$W/check.log" 2>&1; rc=$?
check "check names the TODOs (exit 2)" '[ $rc = 2 ] && grep -q "TODOs to fill (written by strata site init): rdma.max_lat_us" "$W/check.log"'

ex "$S" run --site "$W/site.yaml" --profile lab/thresholds.yaml \
  --only host --only R1 --only storage -o "$W/run.xlsx" \
  --json "$W/run.json" > "$W/run.log" 2>&1; rc=$?
tail -n 30 "$W/run.log"
check "the run ended with a verdict (exit $rc)" '[ $rc = 0 ] || [ $rc = 1 ]'
check "it said which TODOs it left out" 'grep -q "TODOs left out of this run" "$W/run.log"'
check "it chose the rdma pack from the site file" 'grep -q "hardware pack rdma-line-rate: RDMA port rxe0" "$W/run.log"'
/usr/bin/python3 - "$W/run.json" <<'PY' || fails=$((fails + 1))
import json, sys
doc = json.load(open(sys.argv[1]))
bad = []
tests = {t["id"]: t for t in doc["tests"]}
for tid in ("H1", "H2", "H3", "R1", "S1", "S2", "S3", "S4"):
    t = tests.get(tid)
    s = t and t["status"]
    print("%-4s %-6s %s" % (tid, s, t and t.get("reason") or ""))
    if s not in ("PASS", "FAIL"):
        bad.append(tid)
for t in doc["tests"]:
    if t["status"] == "ERROR" and "site" in (t.get("reason") or ""):
        bad.append(t["id"] + " (ERROR for want of a site fact)")
print(("FAIL measured rungs: " + ", ".join(bad)) if bad else
      "ok   H1-H3, R1, S1-S4 measured with the file site init wrote")
sys.exit(1 if bad else 0)
PY
echo "$fails failed"
[ $fails = 0 ]
