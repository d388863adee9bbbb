#!/bin/sh
# guest.sh - runs INSIDE the Soft-RoCE guest (tests/rxe/run-in-guest):
# starts the reference server on rxe0 and drives roundtrip.lua against it
# (client and server share the one rxe device).  Exit status: the test's.
set -u
B=$STRATA_RXE_BUILD
OUT=$STRATA_RXE_OUT
export AWS_ACCESS_KEY_ID=AKIDSTRATAGUEST
export AWS_SECRET_ACCESS_KEY=guest-secret-not-a-real-one
unset AWS_CA_BUNDLE
PORT=9000
mkdir -p /tmp/store
"$B/fixtures/s3rdma/strata-s3rdma-server" --root /tmp/store \
  --listen 127.0.0.1 --port $PORT --device rxe0 --max-mem 268435456 \
  2> "$OUT/server.log" &
SRV=$!
i=0
while [ $i -lt 50 ]; do
  grep -q listening "$OUT/server.log" 2>/dev/null && break
  sleep 0.1; i=$((i + 1))
done
cat "$OUT/server.log"
"$B/strata" lua "$STRATA_RXE_SRC/tests/s3rdma/roundtrip.lua" \
  "http://127.0.0.1:$PORT" "$B" "$OUT"
rc=$?
kill $SRV 2>/dev/null
sleep 0.2
echo "--- server log (round trips)"; cat "$OUT/server.log"

# The shipped specs against a fresh server, scaled by site-guest.yaml.
rm -rf /tmp/store; mkdir -p /tmp/store
"$B/fixtures/s3rdma/strata-s3rdma-server" --root /tmp/store \
  --listen 127.0.0.1 --port $PORT --device rxe0 --max-mem 268435456 \
  2> "$OUT/server2.log" &
SRV=$!
sleep 0.5
"$B/strata" run specs/s3rdma --site tests/s3rdma/site-guest.yaml \
  --profile tests/s3rdma/thresholds-guest.yaml -o "$OUT/specs.xlsx"
src=$?
echo "strata run exited $src"
# cuObject on rxe: no DC transport -> E3P FAILs there, E3 BLOCKED
"$B/strata" run specs/s3rdma --only E3 \
  --site tests/s3rdma/site-guest-cuobj.yaml -o "$OUT/cuobj.xlsx" \
  > "$OUT/cuobj.out" 2>&1
cat "$OUT/cuobj.out"
kill $SRV 2>/dev/null
# the reason quotes the criterion; the preflight table the device and fix
grep -q 'E3P .*FAIL .*dc_transport = false' "$OUT/cuobj.out" &&
  grep -q 'rxe0.*ConnectX' "$OUT/cuobj.jsonl" &&
  grep -q 'E3 .*BLOCKED .*needs E3P' "$OUT/cuobj.out" &&
  grep -q 'lowest failed rung: s3rdma (E3P FAIL)' "$OUT/cuobj.out" ||
  { echo "FAIL cuObject on rxe: not stopped by the DC preflight"; rc=1; }
"$B/strata" lua "$STRATA_RXE_SRC/tests/s3rdma/check_specs.lua" \
  "$OUT/specs.jsonl" || rc=1
exit $rc
