#!/bin/bash
# lab.sh - the local emulated cluster behind `strata lab` and
# `strata run --lab` (docs/lab.md).  The same parts the tests use:
# Soft-RoCE qemu guests (lab/qemu.sh, lab/mkinitramfs, lab/guest-init,
# lab/agent.sh) on one emulated Ethernet segment, and the one-node Ceph
# RGW with the mgr prometheus module (lab/rgw.sh).
#
# usage: lab/lab.sh up|status|down --dir DIR --build DIR [--senders N]
#                   [--nvme N] [--layout numa-local|one-array]
#        lab/lab.sh exec --dir DIR ROLE CMD...   run CMD in guest ROLE
#
# Guests (10.77.1.0/24, MTU 9000, rxe0 on eth0; one L2 segment made of a
# qemu socket netdev on a multicast group of 127.0.0.1):
#   a    10.77.1.1   runs `strata run`; eth1 on qemu's user network
#                    reaches the host's RGW as 10.0.2.2; two emulated NUMA
#                    nodes with --nvme N emulated NVMe drives (default 4,
#                    160 MiB each, half per node), assembled by lab/scratch.sh
#                    into the scratch tier (--layout, default numa-local:
#                    one md RAID0 + XFS per node; one-array: one of all)
#   b    10.77.1.2   strata serve + the reference S3-over-RDMA server
#   s<i> 10.77.1.<2+i>  strata serve (R7 senders), i = 1..N
# DIR holds everything (site.yaml, the guests' folders and consoles, the
# RGW cluster); `down` removes it.  Exit 2 when a part cannot start, with
# the part and the reason; the parts already started are stopped.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
cmd=${1:-}; shift || true
dir="" build="" senders=${STRATA_LAB_SENDERS:-1}
nvme=${STRATA_LAB_NVME:-4} layout=${STRATA_LAB_LAYOUT:-numa-local}
boot_timeout=${STRATA_LAB_BOOT_TIMEOUT:-240}
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --senders) senders=$2; shift 2 ;;
    --nvme) nvme=$2; shift 2 ;;
    --layout) layout=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "lab: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -n "$dir" ] || { echo "lab: --dir is required" >&2; exit 2; }
case $senders in ''|*[!0-9]*) echo "lab: --senders must be a number" >&2; exit 2 ;; esac
case $nvme in ''|*[!0-9]*) echo "lab: --nvme must be a number" >&2; exit 2 ;; esac
case $layout in numa-local|one-array) ;;
  *) echo "lab: --layout must be numa-local or one-array" >&2; exit 2 ;; esac

roles() {  # the guests, in boot order
  echo a; echo b
  local i=1
  while [ "$i" -le "$(cat "$dir/senders" 2>/dev/null || echo "$senders")" ]; do
    echo "s$i"; i=$((i + 1))
  done
}

alive() {  # pid file -> 0 when that qemu still runs
  local p
  [ -s "$1" ] || return 1
  p=$(cat "$1")
  kill -0 "$p" 2>/dev/null &&
    tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q qemu-system
}

# --- down ---------------------------------------------------------------
down() {
  [ -d "$dir" ] || { echo "lab: not up ($dir)"; return 0; }
  : > "$dir/stop"          # the agents leave their loop; the guests power off
  local r n
  for r in $(roles); do
    n=0
    while alive "$dir/$r/qemu.pid" && [ $n -lt 100 ]; do
      sleep 0.1; n=$((n + 1))
    done
    if alive "$dir/$r/qemu.pid"; then
      kill "$(cat "$dir/$r/qemu.pid")" 2>/dev/null
      sleep 0.5
      alive "$dir/$r/qemu.pid" && kill -9 "$(cat "$dir/$r/qemu.pid")" 2>/dev/null
    fi
  done
  [ -d "$dir/rgw" ] && "$here/rgw.sh" stop "$dir/rgw"
  rm -rf "$dir"
  echo "lab: down"
}

fail() {  # part why...
  local part=$1; shift
  echo "lab: cannot start $part: $*" >&2
  down >/dev/null 2>&1
  exit 2
}

# guest a's scratch tier in the site file: the arrays lab/scratch.sh
# assembled (a/scratch: "path numa_node" per array), the S2-S4 file per
# array, and what an emulated NVMe under TCG is held to.
storage_site() {
  [ -s "$dir/a/scratch" ] || return 0
  echo "storage:"
  echo "  # guest a: $nvme emulated NVMe (qemu -device nvme, 160 MiB each) on 2"
  echo "  # emulated NUMA nodes, layout $layout (lab/scratch.sh)"
  echo "  scratch:"
  local p n
  while read -r p n; do
    echo "    - { path: $p, numa_node: $n }"
  done < "$dir/a/scratch"
  cat <<'ST'
  size: 32M                 # the S2-S4 file per array (an array is 320 MiB)
  # nominal floors for emulated NVMe under TCG (measured 350-470 MiB/s seq,
  # 4200 IOPS random on an idle 2-core host; a tenth, as the host swings)
  seq_read_mibps: 30
  seq_write_mibps: 30
  randread_iops: 400
ST
}

# E2's two-node "AIStor" (docs/lab.md): the reference server on guest b
# is the primary, its peer on guest s1 (lab/agent.sh) takes every
# object's shards over RDMA.  No s1 (--senders 0): no block, E2 SKIPs.
aistor_site() {
  [ "$(cat "$dir/senders" 2>/dev/null || echo "$senders")" -ge 1 ] || return 0
  cat <<AI
aistor:
  # a 1+1 layout on 2 nodes: guest b (primary, 10.77.1.2) sends each object
  # it stores whole, as 256 KiB shards, over RDMA to guest s1 (10.77.1.3);
  # E2's PUT load goes to b over plain S3/TCP; s1's own count is the witness
  internode_metrics_url: http://10.77.1.2:9000/minio/metrics/v3/system/network/internode
  witness_metrics_url: http://10.77.1.3:9000/minio/metrics/v3/system/network/internode
  s3:
    endpoint: http://10.77.1.2:9000
    region: us-east-1
    bucket: strata-lab-aistor
    create_bucket: true
    credentials_file: $dir/s3rdma-credentials
    stall_timeout: 120
  # 1 MiB objects (4 shards each): the pair moves ~1 MB/s on a loaded
  # host, the PUTs of a 4 MiB load kept E2 at 44 s (docs/lab.md)
  object_mb: 1
  settle: 1
AI
}

# --- up -----------------------------------------------------------------
need_packages() {  # part packages...
  local part=$1 p missing=""; shift
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
      missing="$missing $p"
  done
  [ -z "$missing" ] ||
    fail "$part" "missing Debian package(s):$missing (apt-get install" \
         "--no-install-recommends$missing; or ./scripts/install-deps)"
}

free_udp() {  # a free UDP port on 127.0.0.1 for the wire's multicast group
  /usr/bin/python3 - <<'PY'
import random, socket
for _ in range(200):
    p = random.randrange(20000, 40000)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("0.0.0.0", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
PY
}

up_all_alive() {
  local r
  [ -f "$dir/site.yaml" ] || return 1
  for r in $(roles); do alive "$dir/$r/qemu.pid" || return 1; done
  [ -s "$dir/rgw/env" ] && curl -sf -o /dev/null "$(sed -n 's/^S3_ENDPOINT=//p' "$dir/rgw/env")/"
}

# The lab's site file: every part's address, and the scale: block that
# shrinks the runbook to what emulated Soft-RoCE under TCG moves in
# minutes (docs/lab.md lists each figure and why).
write_site() {
  . "$dir/rgw/env"
  local r peers="" senders_list="" counts="" i=1 n=0
  for r in $(roles); do
    [ "$r" = a ] && { i=$((i + 1)); continue; }
    peers="$peers  node-$r: { host: 10.77.1.$i, port: 18515, device: rxe0,
            token_file: /tmp/strata-token }
"
    senders_list="$senders_list${senders_list:+, }node-$r"
    n=$((n + 1))
    case $n in 1|2|4|8) counts="$counts${counts:+, }$n" ;; esac   # R7's values
    i=$((i + 1))
  done
  local metrics=${S3_METRICS_URL/127.0.0.1/10.0.2.2}
  cat > "$dir/site.yaml" <<SITE
# Generated by lab/lab.sh up: the local emulated cluster (docs/lab.md).
# Everything below is reached from guest a, where strata run executes.
site:
  name: strata-lab
  # the rungs the lab has; GPU, GPU-RDMA, Kubernetes, NCCL and vLLM it has not
  expect: [host, verbs, roce, s3, $([ -s "$dir/a/scratch" ] && echo "storage, ")s3rdma]
  stamp: "LAB: emulated Soft-RoCE under TCG and a one-node RGW: the figures prove the method, not this hardware"
rdma:
  device: rxe0
  port: 1
  gid_index: auto
  devices:
    - { device: rxe0, port: 1 }
  line_rate_gbps: 0.02        # what rxe moves under TCG here (docs/lab.md), not a NIC's
  max_lat_us: 100000
  max_tail_ratio: 100000
  bw_iters: 32
  lat_iters: 200
  tx_depth: 8                 # few WRITEs in flight: TCG guests stall long
  timeout_s: 60               # ... for tens of seconds on a loaded host
  qp_timeout: auto            # per run, from its packets in flight and line_rate_gbps: 67 ms
                              # resends 32 QPs' windows over and over, 8.6 s makes each packet the
                              # loaded host's wire drops a long stall (docs/verbs.md "ACK timeout")
  max_buffer_mb: 16
  wire_objects: 1
  peer: node-b
peers:
$peers
roce:
  senders: [$senders_list]
  size: 65536
  iters: 16
  tx_depth: 8
  timeout_s: 60               # a TCG guest may stall for tens of seconds
s3:
  endpoint: ${S3_ENDPOINT/127.0.0.1/10.0.2.2}
  region: us-east-1
  bucket: strata-lab
  create_bucket: true
  credentials_file: $S3_CREDENTIALS_FILE
  warmup: 0
  duration: 2
  stall_timeout: 120
  mixed_size: 1048576       # MIX: small objects, enough draws in the window
  multipart_count: 1
  metrics:
    url: $metrics
    prefix: ceph_rgw_
    settle: 2
    put_bytes: ceph_rgw_put_b
    get_bytes: ceph_rgw_get_b
s3rdma:
  endpoint: http://10.77.1.2:9000
  bucket: strata-lab-rdma
  create_bucket: true
  region: us-east-1
  credentials_file: $dir/s3rdma-credentials
  metrics_url: http://10.77.1.2:9000/minio/metrics/v3/api/rdma
  device: rxe0
  port: 1
  gid_index: auto
  requests: 4
  landing_grace_s: 2
  # RDMA through three TCG guests on a shared 2-core host stalls for tens
  # of seconds when the host is loaded: smaller transfers, fewer at once,
  # and a longer stall limit than the 30 s default
  max_object_mb: 1
  max_concurrency: 2
  stall_timeout: 120
$(aistor_site)
$(storage_site)
scale:
  max_object_mb: 4
  max_streams: 4
  max_duration_s: 2
  max_iterations: 64
  matrix:
    R2: { size: [65536], qps: [1, 2] }
    R3: { size: [2, 4096] }
    R7: { senders: [$counts], qps: [1, 4] }
    E1: { concurrency: [1, 4] }
    E3: { size: [1048576], concurrency: [1, 4] }
    MIX: { concurrency: [1, 4] }
    B14: { concurrency: [1, 4] }
    B15: { concurrency: [1, 4] }
SITE
}

up() {
  [ -n "$build" ] || { echo "lab: --build is required" >&2; exit 2; }
  build=$(readlink -f "$build")
  [ -x "$build/strata" ] || { echo "lab: no $build/strata (build first)" >&2; exit 2; }
  [ -x "$build/fixtures/s3rdma/strata-s3rdma-server" ] ||
    fail "the S3-over-RDMA server" "no $build/fixtures/s3rdma/strata-s3rdma-server (build first)"
  if up_all_alive; then
    echo "lab: already up ($dir)"
    return 0
  fi
  [ -d "$dir" ] && down >/dev/null 2>&1     # a half-dead lab: start afresh
  local t0=$SECONDS
  need_packages "the guests" qemu-system-x86 linux-image-amd64 busybox-static \
    cpio kmod iproute2 rdma-core ibverbs-providers perftest
  need_packages "the RGW" radosgw ceph-mon ceph-osd ceph-mgr \
    ceph-mgr-modules-core ceph-common curl
  mkdir -p "$dir"
  dir=$(readlink -f "$dir")
  case $dir/ in
    "$src"/*|"$build"/*) ;;
    *) fail "the guests" "$dir is not inside $src or $build: the guests see" \
            "only those trees" ;;
  esac
  echo "$senders" > "$dir/senders"
  echo "$nvme" > "$dir/nvme"
  rm -f "$dir/stop"

  . "$here/qemu.sh"
  echo "lab: guest image (lab/mkinitramfs)"
  lab_image "$src" "$build" 2> "$dir/image.err" ||
    fail "the guest image" "$(tail -n 3 "$dir/image.err")"

  echo "lab: RGW (lab/rgw.sh)"
  "$here/rgw.sh" start "$dir/rgw" > "$dir/rgw.log" 2>&1 ||
    fail "the RGW" "$(tail -n 3 "$dir/rgw.log")"

  local wire=${STRATA_LAB_WIRE_PORT:-$(free_udp)}
  [ -n "$wire" ] || fail "the wire" "no free UDP port on 127.0.0.1"
  if ! /usr/bin/python3 -c "import socket,sys; s=socket.socket(2,2); s.bind(('0.0.0.0', $wire))" 2>/dev/null; then
    fail "the wire" "UDP port $wire is taken (STRATA_LAB_WIRE_PORT)"
  fi
  echo "$wire" > "$dir/wire"
  local token ak sk
  token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  ak=STRATALAB$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)
  sk=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
  ( umask 077
    # the reference server reads its keys from the environment, the client
    # from a credentials file (AWS format), as for the RGW
    printf 'export AWS_ACCESS_KEY_ID=%s\nexport AWS_SECRET_ACCESS_KEY=%s\n' \
      "$ak" "$sk" > "$dir/s3rdma.env"
    printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
      "$ak" "$sk" > "$dir/s3rdma-credentials" )

  local r i=0 ip mem smp mac
  for r in $(roles); do
    i=$((i + 1))
    ip=10.77.1.$i
    mac=$(printf '52:54:00:77:01:%02x' "$i")
    mem=512 smp=1
    [ "$r" = a ] && mem=1536 smp=2
    [ "$r" = b ] && mem=1024
    mkdir -p "$dir/$r"
    cp "$here/agent.sh" "$dir/$r/agent.sh"
    LAB_USER=0 LAB_NVME=()
    if [ "$r" = a ]; then
      LAB_USER=1
      # the scratch tier: the drives, two NUMA nodes; the agent assembles it
      if [ "$nvme" -gt 0 ]; then
        lab_nvme "$dir/a" "$nvme" 160 "$mem" "$smp" ||
          fail "guest a" "cannot make its $nvme NVMe drives in $dir/a"
        echo "$layout" > "$dir/a/layout"
      fi
    fi
    lab_qemu "$r" eth0 "$ip" 10.77.1.2 "$dir/$r" "$dir/$r/agent.sh" \
      "$token" "$mem" "$smp" \
      -netdev "socket,id=n1,mcast=230.0.0.1:$wire,localaddr=127.0.0.1" \
      -device "virtio-net-pci,netdev=n1,mac=$mac" "${LAB_NVME[@]}"
    setsid "${LAB_QEMU[@]}" </dev/null > "$dir/$r/console.log" 2>&1 &
    echo $! > "$dir/$r/qemu.pid"
  done

  echo "lab: booting $(roles | wc -l) guests (TCG; up to ${boot_timeout} s)"
  local left=$((boot_timeout * 2)) pending
  while :; do
    pending=""
    for r in $(roles); do
      [ -e "$dir/$r/ready" ] && continue
      [ -s "$dir/$r/failed" ] && fail "guest $r" "$(cat "$dir/$r/failed")"
      if [ -s "$dir/$r/rc" ]; then
        fail "guest $r" "its setup failed (exit $(cat "$dir/$r/rc")):" \
             "$(tail -n 3 "$dir/$r/log" 2>/dev/null)"
      fi
      # kill -0, not alive(): just after the launch the child may still be
      # the forked shell that has not exec'd setsid/qemu yet (its cmdline
      # names no qemu), and the pid is ours, not a reused one
      kill -0 "$(cat "$dir/$r/qemu.pid")" 2>/dev/null ||
        fail "guest $r" "qemu exited during boot: $(tail -n 3 "$dir/$r/console.log")"
      pending="$pending $r"
    done
    [ -z "$pending" ] && break
    [ $left -le 0 ] && fail "guest${pending}" "did not boot in time" \
      "(${boot_timeout} s; STRATA_LAB_BOOT_TIMEOUT): $(tail -n 2 "$dir/${pending# }"*/console.log 2>/dev/null | tail -n 2)"
    sleep 0.5; left=$((left - 1))
  done

  write_site
  echo "lab: up in $((SECONDS - t0)) s — site file $dir/site.yaml"
}

# --- status -------------------------------------------------------------
status() {
  [ -f "$dir/site.yaml" ] || { echo "lab: not up ($dir)"; return 3; }
  local r bad=0
  for r in $(roles); do
    if alive "$dir/$r/qemu.pid" && [ -e "$dir/$r/ready" ]; then
      echo "guest $r: up (pid $(cat "$dir/$r/qemu.pid"); $(head -n 1 "$dir/$r/state" 2>/dev/null || echo ready))"
    else
      echo "guest $r: DOWN"; bad=1
    fi
  done
  . "$dir/rgw/env"
  if curl -sf -o /dev/null "$S3_ENDPOINT/"; then echo "rgw: up ($S3_ENDPOINT)"
  else echo "rgw: DOWN ($S3_ENDPOINT)"; bad=1; fi
  if curl -sf -o /dev/null "$S3_METRICS_URL"; then echo "rgw metrics: up ($S3_METRICS_URL)"
  else echo "rgw metrics: DOWN ($S3_METRICS_URL)"; bad=1; fi
  if [ $bad = 0 ]; then
    # the wire and the services, seen from guest a
    job a 60 sh -c 'cat /sys/class/infiniband/rxe0/ports/1/state; for h in $(sed -n "s/.*host: \(10\.77\.1\.[0-9]*\).*/\1/p" '"$dir"'/site.yaml); do ping -c 1 -W 5 $h >/dev/null && echo "wire to $h: ok" || echo "wire to $h: NO ANSWER"; done' || bad=1
  fi
  echo "site file: $dir/site.yaml"
  return $bad
}

# --- exec ---------------------------------------------------------------
q() { printf "'%s'" "$(printf %s "$1" | sed "s/'/'\\\\''/g")"; }

job() {  # role timeout cmd... -> its output on stdout, its exit status
  local role=$1 tmo=$2 n j a tp rc; shift 2
  [ -d "$dir/$role/jobs" ] || { echo "lab: no guest $role" >&2; return 2; }
  n=$(date +%s%N)
  j=$dir/$role/jobs/$n
  {
    echo "unset AWS_CA_BUNDLE"
    echo "cd $(q "$PWD") || exit 2"
    for a in "$@"; do printf '%s ' "$(q "$a")"; done
    echo
  } > "$j.tmp"
  mv "$j.tmp" "$j.sh"
  : > "$j.sh.log"
  tail -n +1 -F "$j.sh.log" 2>/dev/null &
  tp=$!
  local left=$((tmo * 4))
  while [ ! -s "$j.sh.rc" ]; do
    if [ $left -le 0 ] || ! alive "$dir/$role/qemu.pid"; then
      kill $tp 2>/dev/null; wait $tp 2>/dev/null
      echo "lab: guest $role did not finish the job within $tmo s" >&2
      return 124
    fi
    sleep 0.25; left=$((left - 1))
  done
  sleep 0.5
  kill $tp 2>/dev/null; wait $tp 2>/dev/null
  rc=$(cat "$j.sh.rc")
  rm -f "$j.sh.done" "$j.sh.log" "$j.sh.rc"
  return "$rc"
}

case $cmd in
  up) up ;;
  down) down ;;
  status) status ;;
  exec)
    [ $# -ge 2 ] || { echo "usage: lab.sh exec --dir DIR ROLE CMD..." >&2; exit 2; }
    role=$1; shift
    job "$role" "${STRATA_LAB_JOB_TIMEOUT:-3600}" "$@" ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
