#!/bin/bash
# slurm.sh - a throw-away Slurm cluster on this machine, for the fleet
# tests (label fleet): munged and slurmctld on the host, one slurmd per
# node in its own network namespace with its own hostname (UTS namespace)
# and address on a bridge.  No RDMA in the nodes (the host kernel has no
# InfiniBand): the RDMA rows SKIP there with that reason.
#
#   tests/fleet/slurm.sh start DIR   start it; DIR (created) holds everything
#   tests/fleet/slurm.sh stop DIR    stop every daemon it started, remove
#                                    the namespaces, the guests, the
#                                    bridge and DIR
#   tests/fleet/slurm.sh guests-up DIR BUILD    boot the RDMA nodes (below)
#   tests/fleet/slurm.sh link DIR GUEST US|off  delay GUEST's RDMA link by up
#                                             to US microseconds (or undo it)
#   tests/fleet/slurm.sh guests-down DIR        power them off
#
# RDMA nodes (FLEET_GUESTS=N at start, default 0): N more Slurm nodes
# g1..gN in partition "rdma", the lab's Soft-RoCE qemu guests (lab/qemu.sh,
# lab/mkinitramfs --slurm, lab/guest-init): rxe0 on eth0, one emulated
# Ethernet segment between the guests (a qemu socket netdev on a multicast
# group of 127.0.0.1, as the lab's), and a second NIC on a tap in the
# bed's bridge, where slurmctld, srun and the RGW reach them.  Each guest
# runs munged (the bed's key) and slurmd (tests/fleet/guest-node.sh).
# They are in slurm.conf from the start (DOWN until guests-up): one
# controller, one bridge and one RGW serve both kinds of node.  DIR must
# lie inside BUILD or the source tree (the guests see only those, over 9p
# at their host paths).
#
# After start, DIR/env holds shell assignments (sourceable):
#   SLURM_CONF=DIR/slurm.conf  FLEET_NODES="n1 n2 ..."  FLEET_HOST_ADDR=...
#   FLEET_GUESTS="g1 ..."  (the RDMA nodes, partition rdma)
# Environment: FLEET_NODES=N (default 4), FLEET_FEATURES (default: n1-n2
# "gpu,s3client", the rest "s3client"; a list "n1=f,g n2=h" replaces it).
set -eu

die() { echo "slurm.sh: $*" >&2; exit 1; }
. "$(dirname "$0")/../../lab/daemons.sh"

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])'
}

stop() {
  D=$1
  [ -d "$D" ] || return 0
  kill_pidfiles "$D"
  if [ -f "$D/env" ]; then
    # shellcheck disable=SC1091
    . "$D/env"
    for ns in $FLEET_NETNS; do
      # what a job left running in the namespace goes with it
      for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
      ip netns del "$ns" 2>/dev/null || true
    done
    ip link del "$FLEET_BRIDGE" 2>/dev/null || true
  fi
  if [ -f "$D/env" ]; then
    for t in $FLEET_GUEST_TAPS; do ip link del "$t" 2>/dev/null || true; done
  fi
  rm -rf "$D"
}

# --- the RDMA nodes: Soft-RoCE qemu guests running slurmd ----------------
guest_alive() {  # pid file -> 0 when that qemu still runs
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null &&
    tr '\0' ' ' < "/proc/$(cat "$1")/cmdline" 2>/dev/null | grep -q qemu-system
}

guests_down() {
  D=$1
  [ -f "$D/env" ] || return 0
  . "$D/env"
  # (a failed redirection of `:`, a special built-in, would end dash)
  [ -d "$D/guests" ] || return 0
  touch "$D/guests/stop"   # guest-node.sh powers off
  for g in $FLEET_GUESTS; do
    f=$D/run/qemu-$g.pid; n=0
    while guest_alive "$f" && [ $n -lt 150 ]; do sleep 0.1; n=$((n + 1)); done
    if guest_alive "$f"; then kill "$(cat "$f")" 2>/dev/null; sleep 0.5; fi
    guest_alive "$f" && kill -9 "$(cat "$f")" 2>/dev/null
    rm -f "$f"
  done
  rm -f "$D/guests/stop"
  echo "slurm.sh: guests down"
}

guests_up() {
  D=$(cd "$1" && pwd); build=$(cd "$2" && pwd)
  . "$D/env"
  [ -n "$FLEET_GUESTS" ] || die "no RDMA nodes in this bed (FLEET_GUESTS=N at start)"
  src=$(cd "$(dirname "$0")/../.." && pwd)
  case $D/ in "$src"/*|"$build"/*) ;; *) die "$D is not inside $src or $build" ;; esac
  # shellcheck disable=SC1091
  . "$src/lab/qemu.sh"
  lab_image "$src" "$build" --slurm 2> "$D/log/image.err" ||
    die "the guest image: $(tail -n 3 "$D/log/image.err")"
  wire=$(/usr/bin/python3 -c 'import socket; s=socket.socket(2, 2); s.bind(("",0)); print(s.getsockname()[1])')
  rm -f "$D/guests/stop"
  i=0
  for g in $FLEET_GUESTS; do
    i=$((i + 1))
    o=$D/guests/$g
    mkdir -p "$o" "$D/spool/$g"
    rm -f "$o/ready" "$o/failed" "$o/rc"
    tap=$(echo "$FLEET_GUEST_TAPS" | cut -d' ' -f$i)
    addr=$(echo "$FLEET_GUEST_ADDRS" | cut -d' ' -f$i)
    mac=$(printf '52:54:00:79:%02x:%02x' "$FLEET_NET_X" "$i")
    ip link del "$tap" 2>/dev/null || true
    ip tuntap add dev "$tap" mode tap
    ip link set "$tap" master "$FLEET_BRIDGE" up
    printf 'NODE=%s\nADDR=%s\nMAC=%s\nBED=%s\n' "$g" "$addr" "$mac" "$D" > "$o/node.env"
    lab_qemu "$g" eth0 "10.78.1.$i" - "$o" "$src/tests/fleet/guest-node.sh" - 512 1 \
      -netdev "socket,id=n1,mcast=230.0.0.2:$wire,localaddr=127.0.0.1" \
      -device "virtio-net-pci,netdev=n1,mac=$(printf '52:54:00:78:01:%02x' "$i")" \
      -netdev "tap,id=h1,ifname=$tap,script=no,downscript=no" \
      -device "virtio-net-pci,netdev=h1,mac=$mac" \
      -qmp "unix:$o/qmp.sock,server=on,wait=off"
    setsid "${LAB_QEMU[@]}" </dev/null > "$o/console.log" 2>&1 &
    echo $! > "$D/run/qemu-$g.pid"
  done
  t=${FLEET_GUEST_BOOT_S:-300}; n=0
  for g in $FLEET_GUESTS; do
    while [ ! -e "$D/guests/$g/ready" ]; do
      [ -s "$D/guests/$g/rc" ] && die "guest $g: its setup failed: $(tail -n 5 "$D/guests/$g/log")"
      kill -0 "$(cat "$D/run/qemu-$g.pid")" 2>/dev/null ||
        die "guest $g: qemu exited: $(tail -n 3 "$D/guests/$g/console.log")"
      n=$((n + 1))
      [ $n -ge $((t * 2)) ] && die "guest $g did not boot in ${t}s: $(tail -n 3 "$D/guests/$g/console.log")"
      sleep 0.5
    done
  done
  count=$(echo $FLEET_GUESTS | wc -w)
  wait_for 120 "the RDMA nodes to come up" sh -c \
    "[ \$(SLURM_CONF=$D/slurm.conf sinfo -h -N -p rdma -t idle -o %N | wc -l) -eq $count ]"
  echo "slurm.sh: RDMA nodes up: $FLEET_GUESTS ($FLEET_GUEST_ADDRS)"
}

# Degrade one guest's RDMA link for real: a QEMU filter-buffer on its
# segment NIC (netdev n1, the wire rxe0 runs on), added and removed at run
# time over the guest's QMP socket.  filter-buffer holds every packet of
# that NIC, both ways, and releases them every INTERVAL microseconds (QEMU
# 7.2's qemu-options.hx, "-object filter-buffer"): a delay of up to
# INTERVAL on each packet to or from that guest, and nothing else.
link() {
  D=$(cd "$1" && pwd); g=$2; what=$3
  sock=$D/guests/$g/qmp.sock
  [ -S "$sock" ] || die "guest $g has no QMP socket ($sock): is it up?"
  /usr/bin/python3 - "$sock" "$what" <<'PY' || die "QMP on $g: $what failed"
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
def cmd(name, **args):
    f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
    f.flush()
    while True:
        r = json.loads(f.readline())
        if "return" in r or "error" in r:
            return r
json.loads(f.readline())                      # the greeting
cmd("qmp_capabilities")
what = sys.argv[2]
if what == "off":
    r = cmd("object-del", id="strata-degrade")
else:
    r = cmd("object-add", **{"qom-type": "filter-buffer", "id": "strata-degrade",
                             "netdev": "n1", "queue": "all", "interval": int(what)})
if "error" in r:
    sys.exit("QMP: %s" % r["error"].get("desc"))
PY
  if [ "$what" = off ]; then echo "slurm.sh: $g's RDMA link restored"
  else echo "slurm.sh: $g's RDMA link held up to $what us a packet (filter-buffer)"; fi
}

# 0 when a daemon of the bed at $1 still runs
bed_alive() {
  for f in "$1"/run/*.pid; do
    [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && return 0
  done
  return 1
}

start() {
  D=$1
  if [ -e "$D/slurm.conf" ]; then
    bed_alive "$D" && die "$D already holds a running cluster (stop it first)"
    # what a killed run left (no daemon of it runs): cleared, not refused
    echo "slurm.sh: $D holds what a killed run left: clearing it"
    stop "$D"
  fi
  for p in slurmctld slurmd munged srun scontrol ip unshare; do
    command -v $p >/dev/null || [ -x /usr/sbin/$p ] || die "$p not installed (see .ci/packages)"
  done
  mkdir -p "$D/log" "$D/run" "$D/state" "$D/spool" "$D/munge"
  D=$(cd "$D" && pwd)
  nodes=${FLEET_NODES:-4}
  [ "$nodes" -le 352 ] || die "FLEET_NODES=$nodes: at most 352 (99 + 253 addresses)"
  # one /24 and bridge per bed, so that two beds never collide
  x=$(( $(od -An -N2 -tu2 /dev/urandom) % 200 + 20 ))
  while ip link show "flbr$x" >/dev/null 2>&1; do x=$((x + 1)); done
  br=flbr$x; net=10.213.$x; host_addr=$net.254
  # nodes 1-99 on $net (the guests take .101 up), the rest on a second /24
  # of the same bridge ($net2; bench/fleet/orch_scale.sh boots 256), each
  # namespace with an on-link route to the other
  net2=10.214.$x
  node_addr() { if [ "$1" -le 99 ]; then echo "$net.$1"; else echo "$net2.$(($1 - 99))"; fi; }
  ctl_port=$(free_port)
  host=$(hostname -s)
  names=""; nslist=""
  i=1
  while [ $i -le "$nodes" ]; do names="$names n$i"; nslist="$nslist fleet$x-n$i"; i=$((i + 1)); done
  guests=""; taps=""; gaddrs=""
  i=1
  while [ $i -le "${FLEET_GUESTS:-0}" ]; do
    guests="$guests g$i"; taps="$taps flg${x}g$i"; gaddrs="$gaddrs $net.$((100 + i))"
    i=$((i + 1))
  done
  cat > "$D/env" <<ENV
SLURM_CONF=$D/slurm.conf
FLEET_NODES="${names# }"
FLEET_HOST_ADDR=$host_addr
FLEET_BRIDGE=$br
FLEET_NETNS="${nslist# }"
FLEET_DIR=$D
FLEET_NET_X=$x
FLEET_CTL_HOST=$host
FLEET_GUESTS="${guests# }"
FLEET_GUEST_TAPS="${taps# }"
FLEET_GUEST_ADDRS="${gaddrs# }"
ENV

  # munge: the key, and one munged whose socket every daemon and client uses
  dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 2>/dev/null
  chmod 0400 "$D/munge/munge.key"
  chmod 0700 "$D/munge"
  /usr/sbin/munged --force --socket="$D/munge/munge.socket" \
    --key-file="$D/munge/munge.key" --pid-file="$D/run/munged.pid" \
    --log-file="$D/log/munged.log" --seed-file="$D/munge/seed" \
    >"$D/log/munged.out" 2>&1 || die "munged did not start (log: $D/log/munged.log)"
  wait_for 10 munged test -S "$D/munge/munge.socket"

  # the network: a bridge on the host, a veth into each node's namespace
  ip link add "$br" type bridge
  ip addr add "$host_addr/24" dev "$br"
  [ "$nodes" -gt 99 ] && ip addr add "$net2.254/24" dev "$br"
  ip link set "$br" up
  i=1
  for n in $names; do
    ns=fleet$x-$n
    ip netns add "$ns"
    ip link add "fl$x$n" type veth peer name eth0 netns "$ns"
    ip link set "fl$x$n" master "$br" up
    ip -n "$ns" addr add "$(node_addr $i)/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    if [ "$nodes" -gt 99 ]; then
      if [ $i -le 99 ]; then ip -n "$ns" route add "$net2.0/24" dev eth0
      else ip -n "$ns" route add "$net.0/24" dev eth0; fi
    fi
    i=$((i + 1))
  done

  feats=${FLEET_FEATURES:-}
  {
    cat <<CONF
# generated by tests/fleet/slurm.sh (Slurm 22.05, slurm.conf(5))
ClusterName=strata-fleet
SlurmctldHost=$host($host_addr)
SlurmctldPort=$ctl_port
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/spool/%n/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=10
SchedulerParameters=defer_batch
CONF
    i=1
    for n in $names; do
      f=""
      for kv in $feats; do [ "${kv%%=*}" = "$n" ] && f=${kv#*=}; done
      if [ -z "$feats" ]; then
        if [ $i -le 2 ]; then f=gpu,s3client; else f=s3client; fi
      fi
      echo "NodeName=$n NodeHostname=$n NodeAddr=$(node_addr $i) CPUs=2 RealMemory=1000 State=UNKNOWN${f:+ Feature=$f}"
      i=$((i + 1))
    done
    # the RDMA nodes: 1 vCPU, 512 MiB guests; DOWN until guests-up
    i=0
    for g in $guests; do
      i=$((i + 1))
      echo "NodeName=$g NodeHostname=$g NodeAddr=$net.$((100 + i)) CPUs=1 RealMemory=400 State=UNKNOWN Feature=rdma,s3client"
    done
    echo "PartitionName=fleet Nodes=$(echo $names | tr ' ' ',') Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8"
    [ -n "$guests" ] &&
      echo "PartitionName=rdma Nodes=$(echo $guests | tr ' ' ',') Default=NO MaxTime=INFINITE State=UP OverSubscribe=FORCE:8"
  } > "$D/slurm.conf"
  # Slurm 22.05 has no "disabled" cgroup plugin; no plugin here uses
  # cgroups (proctrack/pgid, task/none), but slurmd still loads one.  The
  # host's v1 hierarchy is only read.
  echo "CgroupPlugin=cgroup/v1" > "$D/cgroup.conf"

  SLURM_CONF=$D/slurm.conf
  export SLURM_CONF
  setsid /usr/sbin/slurmctld -D -c -f "$D/slurm.conf" >"$D/log/slurmctld.out" 2>&1 &
  echo $! > "$D/run/slurmctld-fg.pid"
  wait_for 20 slurmctld scontrol ping
  for n in $names; do
    ns=fleet$x-$n
    mkdir -p "$D/spool/$n"
    # own hostname (UTS namespace) and own network: a node as Slurm sees it
    setsid ip netns exec "$ns" unshare --uts /bin/sh -c \
      "hostname $n && exec /usr/sbin/slurmd -D -N $n -f $D/slurm.conf" \
      >"$D/log/slurmd-$n.out" 2>&1 &
    echo $! > "$D/run/slurmd-$n-fg.pid"
  done
  wait_for $((40 + nodes / 4)) "the nodes to come up" sh -c \
    "[ \$(sinfo -h -N -p fleet -t idle -o %N | wc -l) -eq $nodes ]"
  echo "slurm.sh: cluster up in $D: $nodes nodes (${names# }), controller $host_addr:$ctl_port"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: slurm.sh start DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: slurm.sh stop DIR"; guests_down "$2" >/dev/null 2>&1; stop "$2" ;;
  guests-up) [ $# -eq 3 ] || die "usage: slurm.sh guests-up DIR BUILD"; guests_up "$2" "$3" ;;
  guests-down) [ $# -eq 2 ] || die "usage: slurm.sh guests-down DIR"; guests_down "$2" ;;
  link) [ $# -eq 4 ] || die "usage: slurm.sh link DIR GUEST INTERVAL_US|off"; link "$2" "$3" "$4" ;;
  *) die "usage: slurm.sh start|stop|guests-up|guests-down|link DIR" ;;
esac
