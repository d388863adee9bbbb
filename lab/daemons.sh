# lab/daemons.sh - what the throw-away clusters' scripts (lab/rgw.sh,
# tests/fleet/slurm.sh) share for the daemons they start: waiting for one
# to answer, and killing those whose pid files DIR/run/*.pid hold.
# Sourced by sh or bash; defines functions only.  The caller defines
# die MESSAGE and sets D (its cluster folder, named in the timeout).

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  t=$1; what=$2; shift 2
  n=0
  while ! "$@" >/dev/null 2>&1; do
    n=$((n + 1))
    [ $n -ge $((t * 10)) ] && die "timed out after ${t}s waiting for $what (logs: $D/log)"
    sleep 0.1
  done
}

# kill_pidfiles DIR: kill -9 every daemon of DIR/run/*.pid (a throw-away
# cluster needs no clean shutdown), then wait up to 5 s for each to go.
kill_pidfiles() {
  for f in "$1"/run/*.pid; do
    [ -f "$f" ] || continue
    kill -9 "$(cat "$f")" 2>/dev/null || true
  done
  for f in "$1"/run/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f"); n=0
    while kill -0 "$pid" 2>/dev/null && [ $n -lt 50 ]; do
      sleep 0.1; n=$((n + 1))
    done
  done
}
