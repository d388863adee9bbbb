# One guest, two `strata serve` agents on the loopback rxe device: N = 2
# fan-in into QPs of this process, then into a third agent as receiver.
set -u
S=$STRATA_RXE_BUILD/strata
D=$STRATA_RXE_SRC/tests/rxe/cases
echo "$STRATA_RXE_TOKEN" > /tmp/strata-token
for p in 18515 18516 18517; do
  $S serve --port $p --token-file /tmp/strata-token --device rxe0 \
    --idle-timeout 60 2>/tmp/serve-$p.log &
done
fail=0
timeout 200 $S lua $D/incast.lua /tmp/strata-token - 127.0.0.1:18515 \
  127.0.0.1:18516 || fail=1
timeout 120 $S lua $D/incast.lua /tmp/strata-token 127.0.0.1:18517 \
  127.0.0.1:18515 127.0.0.1:18516 || fail=1
grep -q "refused: wrong or missing token" /tmp/serve-18515.log || {
  echo "FAIL: the agent did not log the refused token"; fail=1; }
grep -q "not-the-token" /tmp/serve-*.log && {
  echo "FAIL: a token reached the agent's log"; fail=1; }
kill %1 %2 %3 2>/dev/null
exit $fail
