#!/bin/sh
# stage_guest.sh - runs INSIDE the Soft-RoCE guest (tests/rxe/run-in-guest):
# the reference server on rxe0, then stage.lua (T4 model staging by key
# into host memory) against it.  Exit status: stage.lua's.
set -u
B=$STRATA_RXE_BUILD
OUT=$STRATA_RXE_OUT
export AWS_ACCESS_KEY_ID=AKIDSTRATASTAGE
export AWS_SECRET_ACCESS_KEY=stage-secret-not-a-real-one
unset AWS_CA_BUNDLE
mkdir -p /tmp/store
"$B/fixtures/s3rdma/strata-s3rdma-server" --root /tmp/store \
  --listen 127.0.0.1 --port 9000 --device rxe0 --max-mem 268435456 \
  2> "$OUT/server.log" &
SRV=$!
i=0
while [ $i -lt 50 ]; do
  grep -q listening "$OUT/server.log" 2>/dev/null && break
  sleep 0.1; i=$((i + 1))
done
"$B/strata" lua "$STRATA_RXE_SRC/tests/s3rdma/stage.lua" http://127.0.0.1:9000
rc=$?
kill $SRV 2>/dev/null
[ $rc = 0 ] || { echo "--- server log"; cat "$OUT/server.log"; }
exit $rc
