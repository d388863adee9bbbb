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
echo "--- server log"; cat "$OUT/server.log"
exit $rc
