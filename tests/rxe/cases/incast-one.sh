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
# a sender dies mid-run: its session process is killed after ~2 s
$S serve --port 18518 --token-file /tmp/strata-token --device rxe0 \
  --idle-timeout 60 2>/tmp/serve-18518.log &
VPID=$!
sleep 1
( sleep 3
  for d in /proc/[0-9]*; do
    read -r l < $d/stat 2>/dev/null || continue
    set -- $l
    [ "$4" = "$VPID" ] && kill -9 $1 && echo "killed session $1"
  done ) &
timeout 60 $S lua $D/incast_kill.lua /tmp/strata-token 127.0.0.1:18515 \
  127.0.0.1:18518 || fail=1
kill %1 %2 %3 %4 2>/dev/null
exit $fail
