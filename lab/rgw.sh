#!/bin/sh
# rgw.sh - a throw-away one-node Ceph cluster with a RADOS Gateway on
# 127.0.0.1, for tests and benchmarks (any test area may use it).
#
#   lab/rgw.sh start DIR   start it; DIR (created) holds everything
#   lab/rgw.sh stop DIR    stop every daemon it started, remove DIR
#
# After start, DIR/env holds shell assignments (sourceable):
#   S3_ENDPOINT=http://127.0.0.1:<port>  S3_REGION=us-east-1
#   S3_CREDENTIALS_FILE=DIR/credentials (AWS format, profile [default])
#   S3_METRICS_URL=http://127.0.0.1:<port>/metrics (ceph-mgr prometheus)
#   S3_BUCKET=strata
# and DIR/site.yaml a site-file fragment with the same.
# Environment: RGW_PORT_BASE (default: a free range picked at random),
# RGW_STORE=memstore|bluestore (default memstore: data in RAM),
# RGW_MGR=0 to skip ceph-mgr (no metrics, ~2 s faster), RGW_EXTRA_ADDR=A
# to have radosgw listen on A too (same port; the fleet bed's bridge).
set -eu

die() { echo "rgw.sh: $*" >&2; exit 1; }
. "$(dirname "$0")/daemons.sh"

free_base() {
  /usr/bin/python3 - <<'PY'
import random, socket
for _ in range(200):
    b = random.randrange(20000, 40000, 4)
    ok = True
    for p in range(b, b + 4):
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", p))
        except OSError:
            ok = False
        finally:
            s.close()
    if ok:
        print(b)
        break
PY
}

stop() {
  D=$1
  [ -d "$D" ] || return 0
  kill_pidfiles "$D"
  rm -rf "$D"
}

start() {
  D=$1
  [ -e "$D/ceph.conf" ] && die "$D already holds a cluster (stop it first)"
  mkdir -p "$D/mon" "$D/osd" "$D/mgr" "$D/rgw" "$D/log" "$D/run"
  D=$(cd "$D" && pwd)
  base=${RGW_PORT_BASE:-$(free_base)}
  [ -n "$base" ] || die "no free port range found"
  mon2=$base; mon1=$((base + 1)); rgwp=$((base + 2)); prom=$((base + 3))
  store=${RGW_STORE:-memstore}
  fsid=$(cat /proc/sys/kernel/random/uuid)
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  conf=$D/ceph.conf
  cat > "$conf" <<CONF
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$mon2,v1:127.0.0.1:$mon1]
public_addr = 127.0.0.1
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
mon_max_pg_per_osd = 1000
paxos_propose_interval = 0.05
mgr_stats_period = 1
# only the prometheus module: the others cost seconds of start-up
mgr_initial_modules = prometheus
mgr_disabled_modules = alerts,balancer,crash,devicehealth,diskprediction_local,influx,insights,iostat,localpool,mirroring,nfs,orchestrator,osd_perf_query,osd_support,pg_autoscaler,progress,rbd_support,restful,selftest,snap_schedule,stats,status,telegraf,telemetry,test_orchestrator,volumes,zabbix
run_dir = $D/run
pid_file = $D/run/\$name.pid
admin_socket = $D/run/\$name.asok
log_file = $D/log/\$name.log
osd_objectstore = $store
memstore_device_bytes = 8589934592
bluestore_block_size = 21474836480
osd_data = $D/osd
mon_data = $D/mon
mgr_data = $D/mgr
[client.rgw.a]
ms_mon_client_mode = crc
auth_client_required = none
rgw_frontends = beast endpoint=127.0.0.1:$rgwp${RGW_EXTRA_ADDR:+ endpoint=$RGW_EXTRA_ADDR:$rgwp} tcp_nodelay=1
rgw_data = $D/rgw
# reclaim deleted and overwritten data soon (default: after 2 hours)
rgw_gc_obj_min_wait = 5
rgw_gc_processor_period = 5
CONF
  monmaptool --create --addv a "[v2:127.0.0.1:$mon2,v1:127.0.0.1:$mon1]" \
    --fsid "$fsid" "$D/monmap" >/dev/null
  ceph-mon -c "$conf" --mkfs -i a --monmap "$D/monmap" \
    || die "ceph-mon --mkfs failed (log: $D/log)"
  ceph-mon -c "$conf" -i a || die "ceph-mon did not start"
  id=$(ceph -c "$conf" --connect-timeout 15 osd new "$osd_uuid") \
    || die "ceph osd new failed (monitor not answering?)"
  ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$osd_uuid" \
    >"$D/log/osd-mkfs.out" 2>&1 || die "ceph-osd --mkfs failed: $D/log/osd-mkfs.out"
  ceph-osd -c "$conf" -i "$id" 2>>"$D/log/daemons.err" || die "ceph-osd did not start"
  if [ "${RGW_MGR:-1}" != 0 ]; then
    ceph -c "$conf" config set mgr mgr/prometheus/server_addr 127.0.0.1 --force >/dev/null \
      || die "ceph config set failed"
    ceph -c "$conf" config set mgr mgr/prometheus/server_port "$prom" --force >/dev/null \
      || die "ceph config set failed"
    ceph -c "$conf" config set mgr mgr/prometheus/scrape_interval 1 --force \
      >/dev/null || die "ceph config set failed"
    ceph -c "$conf" config set mgr mgr/prometheus/cache false --force \
      >/dev/null || die "ceph config set failed"
    ceph-mgr -c "$conf" -i x || die "ceph-mgr did not start"
  fi
  radosgw -c "$conf" -n client.rgw.a || die "radosgw did not start"
  # ~6 s on a quiet machine; a 2-core host running guests beside it once
  # took more than 60 s (2026-12-06, lab_end_to_end under ctest -j2)
  wait_for 150 "radosgw on 127.0.0.1:$rgwp" \
    curl -sf -o /dev/null "http://127.0.0.1:$rgwp/"
  if [ "${RGW_MGR:-1}" != 0 ]; then
    wait_for 60 "ceph-mgr prometheus on 127.0.0.1:$prom" \
      curl -sf -o /dev/null "http://127.0.0.1:$prom/metrics"
  fi
  ak=STRATA$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)
  sk=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
  radosgw-admin -c "$conf" -n client.rgw.a user create --uid=strata \
    --display-name=strata --access-key="$ak" --secret-key="$sk" \
    >/dev/null 2>"$D/log/user-create.err" \
    || die "radosgw-admin user create failed: $D/log/user-create.err"
  umask 077
  printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
    "$ak" "$sk" > "$D/credentials"
  umask 022
  cat > "$D/env" <<ENV
S3_ENDPOINT=http://127.0.0.1:$rgwp
S3_REGION=us-east-1
S3_BUCKET=strata
S3_CREDENTIALS_FILE=$D/credentials
S3_METRICS_URL=http://127.0.0.1:$prom/metrics
ENV
  cat > "$D/site.yaml" <<SITE
s3:
  endpoint: http://127.0.0.1:$rgwp
  region: us-east-1
  bucket: strata
  credentials_file: $D/credentials
  metrics_url: http://127.0.0.1:$prom/metrics
SITE
  echo "rgw: http://127.0.0.1:$rgwp (cluster in $D)"
}

[ $# -eq 2 ] || die "usage: rgw.sh start|stop DIR"
case $1 in
  start)
    # die() inside start exits the shell: clean up whatever was started
    trap 'rc=$?; [ $rc -ne 0 ] && stop "$2"; exit $rc' EXIT
    start "$2"
    trap - EXIT ;;
  stop) stop "$2" ;;
  *) die "usage: rgw.sh start|stop DIR" ;;
esac
