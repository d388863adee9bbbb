#!/bin/sh
# Inside the guest: the reference server, then bench.lua, then
# ib_write_bw (loopback on rxe0) for the raw wire.
set -u
B=$STRATA_RXE_BUILD; OUT=$STRATA_RXE_OUT
export AWS_ACCESS_KEY_ID=AKIDSTRATABENCH AWS_SECRET_ACCESS_KEY=bench-secret
unset AWS_CA_BUNDLE
mkdir -p /tmp/store
"$B/fixtures/s3rdma/strata-s3rdma-server" --root /tmp/store \
  --listen 127.0.0.1 --port 9000 --device rxe0 2> "$OUT/server.log" &
SRV=$!
sleep 0.5
# raw wire first (nothing else running): 1 MiB writes, 200 iterations
ib_write_bw -d rxe0 -x 1 -s 1048576 -n 200 -F > "$OUT/perftest-server.txt" 2>&1 &
PS=$!
sleep 1
ib_write_bw -d rxe0 -x 1 -s 1048576 -n 200 -F "$STRATA_RXE_IP" \
  > "$OUT/perftest.txt" 2>&1
wait $PS
"$B/strata" lua "$STRATA_RXE_SRC/bench/s3rdma/bench.lua" \
  http://127.0.0.1:9000 "$OUT/perftest.txt" > "$OUT/bench.md"
rc=$?
kill $SRV
cat "$OUT/bench.md"
exit $rc
