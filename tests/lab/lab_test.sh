#!/bin/bash
# lab_test.sh STRATA WORK - the lab end to end (ctest lab_end_to_end):
#   lab up; lab up again is harmless; lab status; strata run --lab writes
#   one LAB workbook in which every row not needing a GPU, Kubernetes,
#   NCCL or vLLM is PASS or FAIL and those SKIP with the reason (check.py
#   reads it back); lab down leaves no process and no folder; a lab that
#   cannot start says which part and why, exit 2, and leaves nothing.
# STRATA_LAB_DIR (set by ctest) keeps this lab apart from a user's.
set -u
S=$1; W=$2
here=$(cd "$(dirname "$0")" && pwd)
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
rm -rf "$W"; mkdir -p "$W"
L=${STRATA_LAB_DIR:?}
cd "$here/../.."

"$S" lab up > "$W/up1.log" 2>&1; rc=$?
cat "$W/up1.log"
check "lab up exits 0" '[ $rc = 0 ]'
pids=$(cat "$L"/*/qemu.pid "$L"/rgw/run/*.pid 2>/dev/null | tr '\n' ' ')
check "lab up started guests and the RGW ($pids)" '[ $(echo $pids | wc -w) -ge 6 ]'
"$S" lab up > "$W/up2.log" 2>&1; rc=$?
check "lab up twice is harmless" '[ $rc = 0 ] && grep -q "already up" "$W/up2.log"'
pids2=$(cat "$L"/*/qemu.pid "$L"/rgw/run/*.pid 2>/dev/null | tr '\n' ' ')
check "the second up started nothing" '[ "$pids" = "$pids2" ]'
"$S" lab status > "$W/status.log" 2>&1; rc=$?
cat "$W/status.log"
check "lab status: every part up" '[ $rc = 0 ] && ! grep -q DOWN "$W/status.log" && grep -q "wire to 10.77.1.3: ok" "$W/status.log"'

"$S" run --lab -o "$W/lab.xlsx" > "$W/run.log" 2>&1; rc=$?
tail -n 50 "$W/run.log"
check "run --lab ended with a verdict (exit $rc)" '[ $rc = 0 ] || [ $rc = 1 ]'
check "run --lab left the lab it found up" '[ -f "$L/site.yaml" ]'
/usr/bin/python3 "$here/check.py" "$W/lab.xlsx" "$W/lab.jsonl" || fails=$((fails + 1))

"$S" lab down > "$W/down.log" 2>&1; rc=$?
check "lab down exits 0" '[ $rc = 0 ]'
left=""
for p in $pids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
check "lab down leaves no process (left:$left)" '[ -z "$left" ]'
check "lab down leaves no folder" '[ ! -e "$L" ]'
"$S" lab status > /dev/null 2>&1; rc=$?
check "lab status after down: not up (exit 3)" '[ $rc = 3 ]'
"$S" lab down > /dev/null 2>&1; rc=$?
check "lab down twice is harmless" '[ $rc = 0 ]'

# failures: each names the part and why, exits 2, leaves nothing behind
STRATA_LAB_BOOT_TIMEOUT=1 "$S" lab up > "$W/timeout.log" 2>&1; rc=$?
cat "$W/timeout.log"
check "a guest that does not boot in time: exit 2" '[ $rc = 2 ]'
check "... says which part and why" 'grep -q "cannot start guest.*did not boot in time (1 s" "$W/timeout.log"'
check "... and leaves nothing" '[ ! -e "$L" ] && ! pgrep -f "$L/" > /dev/null'
/usr/bin/python3 -c 'import socket,time,sys; s=socket.socket(2,2); s.bind(("0.0.0.0",0)); print(s.getsockname()[1]); sys.stdout.flush(); time.sleep(60)' > "$W/port" &
holder=$!
# wait for the holder to have bound and printed its port (python starts
# slowly on a loaded host: an empty port meant a free one was chosen)
n=0; while [ ! -s "$W/port" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
STRATA_LAB_WIRE_PORT=$(cat "$W/port") "$S" lab up > "$W/port.log" 2>&1; rc=$?
kill $holder 2>/dev/null
cat "$W/port.log"
check "a taken port: exit 2, named" '[ $rc = 2 ] && grep -q "cannot start the wire: UDP port .* is taken" "$W/port.log"'
check "... and leaves nothing" '[ ! -e "$L" ] && ! pgrep -f "$L/" > /dev/null'
echo "$fails failed"
[ $fails = 0 ]
