# Guest case: a peer agent killed mid-transfer inside a strata run: that
# cell is an ERROR naming the peer, the next test PASSes, the workbook is
# written.  Run by tests/rxe/run-in-guest (ctest rxe_peer_run).
set -u
S=$STRATA_RXE_BUILD/strata
D=$STRATA_RXE_SRC/tests/rxe/cases
fail=0
step() { echo "=== $*"; }
check() { if "$@"; then echo "ok   $*"; else echo "FAIL $*"; fail=1; fi; }
TOK=/tmp/token
echo "s3cr3t-$$-$(date +%s)" > $TOK

step a peer killed mid-transfer, in a run: that cell ERRORs, the next PASSes
setsid $S serve --port 18515 --token-file $TOK --device rxe0 \
  >/tmp/serve2.log 2>&1 &
SERVE2=$!
# until it listens, then until the transfer is under way (TCG is slow)
wait_log() {
  n=0
  while ! grep -q "$1" /tmp/serve2.log; do
    n=$((n + 1)); [ $n -gt 300 ] && { echo "FAIL no '$1' in serve log"; fail=1; break; }
    sleep 0.1
  done
}
wait_log "listening on"
PEER_HOST=127.0.0.1 PEER_PORT=18515 PEER_TOKEN_FILE=$TOK \
  $S run $D/peer_dies_run.lua -o /tmp/pk.xlsx >/tmp/pk.out 2>&1 &
RUN=$!
wait_log "SETUP bw"
sleep 2
kill -9 -$SERVE2
wait $RUN
cat /tmp/pk.out
check $S lua $D/peer_dies_check.lua /tmp/pk.jsonl
check test -s /tmp/pk.xlsx

exit $fail
