#!/bin/sh
# cufile.sh CARRY OUTDIR - on the GPU machine (not CI): cuFile as that
# machine has it.  The ABI check with the header's error names, then
# cuda.cufile (cufile_probe.lua) on the root disk and on /dev/shm with
# cuFile's log at TRACE (a copy of /etc/cufile.json, CUFILE_ENV_PATH_JSON),
# then S6/S7 of the storage rung (with the S1 loosening of staging.sh)
# against the reference S3 server.  Writes OUTDIR/log.txt and
# OUTDIR/results.tar.gz.
set -u
C=$(cd "$1" && pwd) OUT=$2
T=$C/tests
W=/var/tmp/strata-cufile
R=$W/results
rm -rf "$W"
mkdir -p "$R"
exec > "$OUT/log.txt" 2>&1
set -x
tar -C "$W" -xzf "$C"/strata-*.tar.gz
S=$(ls -d "$W"/strata-*/ | head -1)
ST=${S}bin/strata
date -u +%Y-%m-%dT%H:%M:%SZ > "$R/machine.txt"
lsmod > "$R/lsmod.txt" 2>&1; ls /sys/module > "$R/modules.txt" 2>&1
cc -I/usr/local/cuda/include -o "$W/cufile_abi" "$T/gpu/cufile_abi.c" &&
  "$W/cufile_abi" > "$R/cufile_abi.txt" 2>&1
sed -e 's/"level" *: *"[A-Z]*"/"level": "TRACE"/' /etc/cufile.json \
  > "$W/cufile.json"
export CUFILE_ENV_PATH_JSON=$W/cufile.json CUFILE_LOGFILE_PATH=$R/cufile.log
cd "$R"
for d in /var/tmp /dev/shm; do
  echo "== $d" >> "$R/probe.jsonl"
  timeout 120 "$ST" lua "$T/gpu/cufile_probe.lua" "$d" >> "$R/probe.jsonl" 2>&1
done
export AWS_ACCESS_KEY_ID=AKIDSTRATAGPU AWS_SECRET_ACCESS_KEY=gpu-stage-secret-1
"$C/strata-s3rdma-server" --root "$W/store" --no-rdma --listen 127.0.0.1 \
  --port 9000 2> "$R/server.log" &
SRV=$!
sleep 1
cat > "$W/site.yaml" <<EOS
storage:
  scratch:
    - { path: /, numa_node: 0 }
  size: 2G
  runtime: 5
  numjobs: 4
  seq_read_mibps: 1000
  seq_write_mibps: 500
  randread_iops: 50000
  staging: { object_size: 512M, objects: 6, concurrency: 8, part_size: 64M }
s3: { endpoint: "http://127.0.0.1:9000", region: us-east-1,
      bucket: strata-storage, create_bucket: true, warmup: 0, duration: 5 }
EOS
timeout 200 "$ST" run "${S}specs/storage" --only S6 --only S7 \
  --site "$W/site.yaml" --set S1.layout_matches.eq=false \
  --set S1.not_xfs.max=1 --set S1.without_noatime.max=1 \
  -o "$R/storage-S6S7.xlsx" --json "$R/storage-S6S7.json" \
  > "$R/storage-S6S7.txt" 2>&1
echo "rc=$?" >> "$R/storage-S6S7.txt"
kill $SRV
rm -f /strata-*.dat
tar -C "$W" -czf "$OUT/results.tar.gz" results
