# Guest case: verbs primitives in loopback, perftest as the reference on
# the same device, strata serve on this guest (auth, remote runs, a peer
# that dies), a port that goes DOWN.  Run by tests/rxe/run-in-guest.
set -u
S=$STRATA_RXE_BUILD/strata
D=$STRATA_RXE_SRC/tests/rxe/cases
fail=0
step() { echo "=== $*"; }
check() { if "$@"; then echo "ok   $*"; else echo "FAIL $*"; fail=1; fi; }

step loopback primitives
$S lua $D/loopback.lua || fail=1

step perftest reference on rxe0
ib_write_bw -d rxe0 -x 1 -n 100 -s 65536 --report_gbits >/tmp/pt-srv 2>&1 &
sleep 0.5
timeout 60 ib_write_bw -d rxe0 -x 1 -n 100 -s 65536 --report_gbits \
  $STRATA_RXE_IP >/tmp/pt-cli 2>&1
check grep -q "^ 65536 *100 " /tmp/pt-cli
grep "^ 65536" /tmp/pt-cli
ib_write_lat -d rxe0 -x 1 -n 200 -s 2 >/tmp/pt-lsrv 2>&1 &
sleep 0.5
timeout 60 ib_write_lat -d rxe0 -x 1 -n 200 -s 2 $STRATA_RXE_IP >/tmp/pt-lat 2>&1
check grep -q "^ 2 *200 " /tmp/pt-lat
grep "^ 2 " /tmp/pt-lat

step strata serve: refuses to start without a token
env -u STRATA_SERVE_TOKEN $S serve --port 18515 >/tmp/notok 2>&1
check test $? = 2
check grep -q "refusing to serve" /tmp/notok

step strata serve on this guest
TOK=/tmp/token
echo "s3cr3t-$$-$(date +%s)" > $TOK
setsid $S serve --port 18515 --token-file $TOK --device rxe0 \
  >/tmp/serve.log 2>&1 &
SERVE=$!
$S lua $D/peer.lua 127.0.0.1 18515 $TOK || fail=1
check grep -q "refused: wrong or missing token" /tmp/serve.log
check test "$(grep -c "$(cat $TOK)" /tmp/serve.log)" = 0

step a peer that dies mid-test
$S lua $D/peer_dies.lua 127.0.0.1 18515 $TOK >/tmp/dies.out 2>&1 &
DIES=$!
sleep 3
kill -9 -$SERVE
wait $DIES
rc=$?
cat /tmp/dies.out
check test $rc = 0
check grep -q "peer 127.0.0.1:18515" /tmp/dies.out
tail -5 /tmp/serve.log

step a port that is DOWN
ip link set dummy0 down
sleep 1
cat > /tmp/down.lua <<'LUA'
local verbs = require "strata.verbs"
local p = verbs.inventory()[1].ports[1]
print("state", p.state, p.phys_state)
local ok, e = pcall(verbs.bw, { iters = 1 })
print("bw", ok, e)
return (p.state ~= "PORT_ACTIVE" and not ok and
        tostring(e):find("not PORT_ACTIVE")) and 0 or 1
LUA
$S lua /tmp/down.lua || fail=1
ip link set dummy0 up
exit $fail
