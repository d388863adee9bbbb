#!/bin/sh
# agent.sh - runs INSIDE every lab guest (busybox sh, started by
# lab/guest-init as the guest's script; docs/lab.md).  Starts the services
# of the guest's role, says ready, then runs the jobs the host drops into
# <out>/jobs/ (lab/lab.sh exec) until the host writes <lab>/stop.
#   role a      the runner: no service (strata run executes here); with
#               <out>/layout (lab/lab.sh --nvme), first the scratch tier:
#               lab/scratch.sh assembles the emulated NVMe into md RAID0 +
#               XFS and writes <out>/scratch for the site file
#   role b      strata serve (the R2/R3/R6 far end, an R7 sender) and the
#               reference S3-over-RDMA server (fixtures/s3rdma) on :9000,
#               with a sender guest the primary of E2's two-node "AIStor":
#               every object's shards go to s1 over RDMA (internode.h)
#   role s<N>   strata serve (an R7 sender); s1 also the inter-node peer
#               (--internode-listen 9100, its metrics on :9000)
set -u
S=$STRATA_RXE_BUILD/strata
O=$STRATA_RXE_OUT
LAB=${O%/*}
role=$STRATA_RXE_ROLE
umask 077
echo "$STRATA_RXE_TOKEN" > /tmp/strata-token
umask 022
say() { echo "agent[$role]: $*"; }

# Is a TCP port listening (state 0A in /proc/net/tcp)?
listening() {
  grep -qi ":$(printf %04X "$1") 00000000:0000 0A" /proc/net/tcp
}
wait_listen() {  # port what
  i=0
  while ! listening "$1"; do
    i=$((i + 1))
    if [ $i -gt 300 ]; then
      say "$2 is not listening on port $1 after 60 s"
      echo "$2 did not start (port $1)" > "$O/failed"
      exit 1
    fi
    sleep 0.2
  done
}

pids=""
if [ "$role" = a ] && [ -s "$O/layout" ]; then
  if ! sh "$STRATA_RXE_SRC/lab/scratch.sh" "$(cat "$O/layout")" "$O" \
      > "$O/scratch.log" 2>&1; then
    say "the scratch tier failed: $(tail -n 1 "$O/scratch.log")"
    echo "the scratch tier did not assemble: $(tail -n 1 "$O/scratch.log")" > "$O/failed"
    exit 1
  fi
fi
case $role in
  b|s*)
    "$S" serve --port 18515 --token-file /tmp/strata-token --device rxe0 \
      > "$O/serve.log" 2>&1 &
    pids="$pids $!"
    wait_listen 18515 "strata serve" ;;
esac
# The inter-node pair's settings for a TCG wire: 256 KiB slabs (64
# packets), 4 of them, a 20 s slab wait (a TCG guest on a loaded host
# stalls for seconds: with 5 s, 3 of 98 waits fell back), ACK timeout 18
# (1 s: 4 x 256 KiB in flight at ~20 Mbit/s; docs/verbs.md)
IN="--internode-slab 262144 --internode-slabs 4 --internode-wait-ms 20000
    --internode-qp-timeout 18 --internode-token-file /tmp/strata-token"
if [ "$role" = b ]; then
  . "$LAB/s3rdma.env"
  mkdir -p /tmp/store
  peer=""
  [ "$(cat "$LAB/senders" 2>/dev/null || echo 0)" -ge 1 ] &&
    peer="--internode-peer 10.77.1.3:9100 $IN"
  # shellcheck disable=SC2086
  "$STRATA_RXE_BUILD/fixtures/s3rdma/strata-s3rdma-server" --root /tmp/store \
    --listen 0.0.0.0 --port 9000 --device rxe0 --max-mem 268435456 $peer \
    > "$O/s3rdma.log" 2>&1 &
  pids="$pids $!"
  wait_listen 9000 "the S3-over-RDMA server"
fi
if [ "$role" = s1 ]; then
  # shellcheck disable=SC2086
  "$STRATA_RXE_BUILD/fixtures/s3rdma/strata-s3rdma-server" \
    --internode-listen 9100 --listen 0.0.0.0 --port 9000 --device rxe0 $IN \
    > "$O/internode-peer.log" 2>&1 &
  pids="$pids $!"
  wait_listen 9100 "the inter-node peer"
  wait_listen 9000 "the inter-node peer's metrics"
fi
mkdir -p "$O/jobs"
say "ready ($(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null))"
: > "$O/ready"

# The job loop: <n>.sh -> output in <n>.sh.log, exit status in <n>.sh.rc.
while [ ! -e "$LAB/stop" ]; do
  for j in "$O"/jobs/*.sh; do
    [ -e "$j" ] || continue
    sh "$j" > "$j.log" 2>&1
    echo $? > "$j.rc.tmp"
    mv "$j.rc.tmp" "$j.rc"
    mv "$j" "$j.done"
  done
  sleep 0.5
done
for p in $pids; do kill "$p" 2>/dev/null; done
say "stopping"
exit 0
