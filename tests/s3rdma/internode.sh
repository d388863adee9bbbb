#!/bin/sh
# internode.sh - runs INSIDE two Soft-RoCE guests (run-in-guest --two):
# the reference server as a two-node 1+1 "AIStor" (fixtures/s3rdma,
# internode.h).  Guest b is the peer (--internode-listen 9100, metrics on
# :9001); guest a the primary (--internode-peer 10.77.1.2:9100) and E2's
# runner (site-internode.yaml: the PUT load over loopback TCP, the shards
# over RDMA across the wire).  E2 must PASS on a healthy pair, the peer
# vouching for every RDMA byte, and FAIL when it must:
#   lie       the primary doubles its count (fault lie-count): the witness
#   fallback  shards larger than a slab: every one over TCP, counted
#   die       the peer exits mid-load (fault die after 6 shards): errors
#   absent    no peer at all: errors, no RDMA bytes
# Guest b ends when its peer exits by the fault; a checks that it did.
set -u
B=$STRATA_RXE_BUILD
OUT=$STRATA_RXE_OUT
SRC=$STRATA_RXE_SRC
SRV=$B/fixtures/s3rdma/strata-s3rdma-server
export AWS_ACCESS_KEY_ID=AKIDSTRATAGUEST
export AWS_SECRET_ACCESS_KEY=guest-secret-not-a-real-one
unset AWS_CA_BUNDLE
echo "$STRATA_RXE_TOKEN" > /tmp/inode-token
# the lab's settings for a TCG wire (lab/agent.sh): 256 KiB slabs, 4 of
# them, a 20 s slab wait, an ACK timeout of 1 s (docs/verbs.md)
IN="--internode-slab 262144 --internode-slabs 4 --internode-wait-ms 20000
    --internode-qp-timeout 18 --internode-token-file /tmp/inode-token"
if [ "$STRATA_RXE_ROLE" = b ]; then
  # shellcheck disable=SC2086
  "$SRV" --internode-listen 9100 --port 9001 --device rxe0 $IN \
    2> "$OUT/peer.log"
  echo "peer exited $?"; cat "$OUT/peer.log"
  grep -q "fault 'die': the internode peer exits" "$OUT/peer.log"
  exit $?
fi

L="$B/strata lua $SRC/tests/s3rdma/internode.lua"
rc=0
primary() {  # extra options...
  rm -rf /tmp/store; mkdir -p /tmp/store
  # shellcheck disable=SC2086
  "$SRV" --root /tmp/store --listen 127.0.0.1 --port 9000 --device rxe0 \
    --max-mem 268435456 --internode-peer "$STRATA_RXE_PEER:9100" $IN "$@" \
    2>> "$OUT/primary.log" &
  P=$!
  $L wait http://127.0.0.1:9000/metrics || rc=1
}
e2() {  # name want
  "$B/strata" run "$SRC/specs/s3" --only E2 --site "$SRC/tests/s3rdma/site-internode.yaml" \
    -o "$OUT/$1.xlsx" > "$OUT/$1.out" 2>&1
  grep -E "^ *E2 " "$OUT/$1.out"
  $L check "$OUT/$1.jsonl" "$2" || rc=1
}
$L wait "http://$STRATA_RXE_PEER:9001/minio/metrics/v3/system/network/internode" || rc=1
primary
e2 healthy pass
$L fault http://127.0.0.1:9000 lie-count || rc=1
e2 lie lie
$L fault http://127.0.0.1:9000 none || rc=1
kill $P; wait $P 2>/dev/null
primary --internode-shard 524288
e2 fallback fallback
kill $P; wait $P 2>/dev/null
primary
$L fault "http://$STRATA_RXE_PEER:9001" "die&after=6" || rc=1
e2 die die
e2 absent absent
kill $P; wait $P 2>/dev/null
echo "--- primary log"; cat "$OUT/primary.log"
exit $rc
