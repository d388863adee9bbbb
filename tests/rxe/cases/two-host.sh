# Guest case over a real wire: guest b runs `strata serve`, guest a runs
# the peer primitives and the verbs specs against it.  Run with
# tests/rxe/run-in-guest --two.
set -u
S=$STRATA_RXE_BUILD/strata
D=$STRATA_RXE_SRC/tests/rxe/cases
O=$STRATA_RXE_OUT
echo "$STRATA_RXE_TOKEN" > /tmp/strata-token
if [ "$STRATA_RXE_ROLE" = b ]; then
  exec $S serve --port 18515 --token-file /tmp/strata-token --device rxe0 \
    --idle-timeout 60
fi
fail=0
echo "=== primitives against the agent on $STRATA_RXE_PEER"
$S lua $D/peer.lua $STRATA_RXE_PEER 18515 /tmp/strata-token || fail=1
echo "=== specs/verbs with site.rdma.peer = guest-b"
cd $STRATA_RXE_SRC
timeout 240 $S run specs/verbs --site tests/rxe/site-two.yaml \
  -o $O/verbs.xlsx --json $O/verbs.json 2>$O/run.err
rc=$?
cat $O/run.err
$S lua $D/specs_check.lua $O/verbs.jsonl $rc $O/run.err \
  "$STRATA_RXE_PEER:18515" 4 || fail=1
exit $fail
