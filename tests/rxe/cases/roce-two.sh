# RUNBOOK R7 over a real wire: guest b runs `strata serve` (the sender),
# guest a is the receiver: verbs.incast's primitive checks, then
# `strata run` of R7 with site.roce.senders = [guest-b], journal checked.
# Run with tests/rxe/run-in-guest --two.
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
echo "=== verbs.incast: guest b writes into guest a"
timeout 120 $S lua $D/incast.lua /tmp/strata-token - \
  $STRATA_RXE_PEER:18515 || fail=1
echo "=== specs/roce (R7) with site.roce.senders = [guest-b]"
cd $STRATA_RXE_SRC
timeout 150 $S run specs/verbs/R1.lua specs/roce \
  --site tests/rxe/site-roce.yaml -o $O/roce.xlsx 2>$O/run.err
rc=$?
cat $O/run.err
$S lua $D/roce_check.lua $O/roce.jsonl $rc || fail=1
exit $fail
