#!/bin/sh
# guest-node.sh - runs INSIDE an RDMA node of the fleet bed (busybox sh,
# started by lab/guest-init as the guest's script; tests/fleet/slurm.sh
# guests-up boots it).  Makes the Soft-RoCE guest a Slurm compute node:
# its hostname is its NodeName, its second NIC (the tap in the bed's
# bridge) gets the NodeAddr, munged runs with the bed's key and slurmd
# with the bed's slurm.conf (read over 9p at the host's path).  Then it
# waits for <bed>/guests/stop and powers off (guest-init does).
# <out>/node.env (written by guests-up): NODE ADDR MAC BED.
set -u
O=$STRATA_RXE_OUT
. "$O/node.env"
say() { echo "guest-node[$NODE]: $*"; }
fail() { say "$*"; echo "$*" > "$O/failed"; exit 1; }

hostname "$NODE"
dev=""
for d in /sys/class/net/*; do
  [ "$(cat "$d/address")" = "$MAC" ] && dev=${d##*/}
done
[ -n "$dev" ] || fail "no NIC with MAC $MAC"
ip link set "$dev" up
ip addr add "$ADDR/24" dev "$dev"
. "$BED/env"
echo "$FLEET_HOST_ADDR $FLEET_CTL_HOST" >> /etc/hosts
i=0
for g in $FLEET_GUESTS; do
  i=$((i + 1))
  echo "$(echo "$FLEET_GUEST_ADDRS" | cut -d' ' -f$i) $g" >> /etc/hosts
done

# The paths of slurm.conf are the host's; what must be this node's own
# (munged's socket, slurmd's spool with its step sockets and pid file)
# gets guest memory mounted over the shared folder.
cp "$BED/munge/munge.key" /tmp/munge.key
mount -t tmpfs -o mode=0700 munge "$BED/munge" || fail "cannot mount over $BED/munge"
cp /tmp/munge.key "$BED/munge/munge.key"
chmod 0400 "$BED/munge/munge.key"
mount -t tmpfs -o mode=0755 spool "$BED/spool/$NODE" || fail "cannot mount over the spool"
/usr/sbin/munged --force --socket="$BED/munge/munge.socket" \
  --key-file="$BED/munge/munge.key" --pid-file=/tmp/munged.pid \
  --log-file=/tmp/munged.log --seed-file=/tmp/munge.seed \
  > "$O/munged.out" 2>&1 || { cp /tmp/munged.log "$O/"; fail "munged did not start"; }
/usr/sbin/slurmd -D -N "$NODE" -f "$BED/slurm.conf" > "$O/slurmd.out" 2>&1 &
spid=$!
n=0
while [ ! -s "$BED/spool/$NODE/slurmd.pid" ]; do
  kill -0 $spid 2>/dev/null || { cp /tmp/munged.log "$O/" 2>/dev/null; fail "slurmd exited: $(tail -n 3 "$O/slurmd.out")"; }
  n=$((n + 1)); [ $n -gt 600 ] && fail "slurmd wrote no pid file in 60 s"
  sleep 0.1
done
say "slurmd up ($dev $ADDR; rxe0 $(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null))"
: > "$O/ready"
while [ ! -e "$BED/guests/stop" ]; do
  kill -0 $spid 2>/dev/null || { say "slurmd exited"; tail -n 5 "$O/slurmd.out"; break; }
  sleep 1
done
cp /tmp/munged.log "$O/" 2>/dev/null
kill $spid 2>/dev/null
kill "$(cat /tmp/munged.pid 2>/dev/null)" 2>/dev/null
say "stopping"
exit 0
