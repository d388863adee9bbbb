#!/bin/sh
# two.sh - runs INSIDE two Soft-RoCE guests joined by a wire
# (run-in-guest --two): guest a is the server (rxe0 on eth0, 10.77.1.1),
# guest b the client, so the data crosses two rxe devices and a real
# (emulated) Ethernet link.  b runs roundtrip.lua, whose last check makes
# the server die mid-transfer: that is how a knows the test is over.
set -u
B=$STRATA_RXE_BUILD
OUT=$STRATA_RXE_OUT
export AWS_ACCESS_KEY_ID=AKIDSTRATAGUEST
export AWS_SECRET_ACCESS_KEY=guest-secret-not-a-real-one
unset AWS_CA_BUNDLE
if [ "$STRATA_RXE_ROLE" = a ]; then
  mkdir -p /tmp/store
  "$B/fixtures/s3rdma/strata-s3rdma-server" --root /tmp/store \
    --listen 0.0.0.0 --port 9000 --device rxe0 --max-mem 268435456 \
    2> "$OUT/server.log" &
  SRV=$!
  wait $SRV
  echo "server exited $?"; cat "$OUT/server.log"
  grep -q "fault 'die': exiting mid-transfer" "$OUT/server.log"
  exit $?
fi
"$B/strata" lua "$STRATA_RXE_SRC/tests/s3rdma/roundtrip.lua" \
  "http://$STRATA_RXE_PEER:9000" "$B" "$OUT"
