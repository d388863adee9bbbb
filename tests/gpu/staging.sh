#!/bin/sh
# staging.sh CARRY OUTDIR - on the GPU machine (not CI; docs/llm.md and
# docs/storage.md say what came of it).  CARRY holds the portable bundle
# (strata-*.tar.gz), the reference server binary (strata-s3rdma-server;
# fallback/ the rdma-core libraries it links, used only when the node
# lacks them) and tests/ (copies of tests/llm and tests/gpu).  With the
# reference server serving S3/TCP beside it (objects on the local disk):
#  1. cuFile: the ABI check against the real cufile.h, /etc/cufile.json
#  2. a model's named shards (make_shards.py), PUT to the server
#  3. T3: llm.stage into GPU and host memory (gpu_stage.lua)
#  4. the client ladder against torch_server.py, then B16/B17/E5 with
#     model staging (gpu_ladder.py)
#  5. the storage rung S1-S7 on the local disk (strata run specs/storage)
# Writes OUTDIR/log.txt and OUTDIR/results.tar.gz.
set -u
C=$(cd "$1" && pwd) OUT=$2
T=$C/tests
W=/var/tmp/strata-gpustage
R=$W/results
rm -rf "$W"
mkdir -p "$R/llm"
# the results so far, after every step (a run cut at its limit keeps them)
snap() { tar -C "$W" -czf "$OUT/results.tar.gz" results; }
exec > "$OUT/log.txt" 2>&1
set -x
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -r; nproc; free -g
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv
  lsblk -o NAME,SIZE,TYPE,ROTA,MOUNTPOINT,FSTYPE,MODEL
  df -hT /
  grep ' / ' /proc/mounts
  ls /sys/class/infiniband 2>&1
  ls -d /sys/module/nvidia_fs 2>&1
  python3 -c 'import torch, transformers; print(torch.__version__, transformers.__version__)'
} > "$R/machine.txt" 2>&1

tar -C "$W" -xzf "$C"/strata-*.tar.gz
S=$(ls -d "$W"/strata-*/ | head -1)
ST=${S}bin/strata
"$ST" --version > "$R/strata-version.txt" 2>&1

# 1. cuFile as the machine has it
{
  cc -I/usr/local/cuda/include -o "$W/cufile_abi" "$T/gpu/cufile_abi.c" &&
    "$W/cufile_abi"
  echo "rc=$?"
  ls -la /usr/local/cuda/targets/x86_64-linux/lib/libcufile.so*
  grep -n 'allow_compat_mode\|use_poll_mode\|"use_pci_p2pdma"\|force_compat' /etc/cufile.json
  grep -n 'CU_FILE_SUCCESS\|CU_FILE_HANDLE_TYPE_OPAQUE_FD\|^CUfileError_t cuFileDriverOpen\|cuFileDriverClose\b\|^ssize_t cuFileRead\|^ssize_t cuFileWrite' \
    /usr/local/cuda/include/cufile.h
} > "$R/cufile_abi.txt" 2>&1

# 2. the S3 server beside it, on the local disk
export AWS_ACCESS_KEY_ID=AKIDSTRATAGPU AWS_SECRET_ACCESS_KEY=gpu-stage-secret-1
LIBS=${S}lib
ldconfig -p | grep -q libibverbs.so.1 || LIBS=$LIBS:$C/fallback
LD_LIBRARY_PATH=$LIBS "$C/strata-s3rdma-server" --root "$W/store" --no-rdma \
  --listen 127.0.0.1 --port 9000 2> "$R/server.log" &
SRV=$!
i=0
while [ $i -lt 50 ] && ! grep -q listening "$R/server.log"; do
  sleep 0.1; i=$((i + 1))
done
EP=http://127.0.0.1:9000
python3 "$T/llm/make_shards.py" "$W/model" 512MB > "$R/shards.json" 2>&1
"$ST" lua "$T/llm/put_files.lua" "$EP" models gpt2-xl-random/ "$W/model" \
  > "$R/put.txt" 2>&1
rm -rf "$W/model"
snap

# 3. T3 model staging, GPU and host memory
"$ST" lua "$T/llm/gpu_stage.lua" "$EP" models gpt2-xl-random/ 2 \
  > "$R/stage.jsonl" 2> "$R/stage.err"
echo "stage rc=$?" >> "$R/stage.err"
snap

# 4. the client ladder, B16/B17/E5 with model staging
STAGE_ENDPOINT=$EP STAGE_BUCKET=models STAGE_PREFIX=gpt2-xl-random/ \
  PYTHONUNBUFFERED=1 timeout 360 python3 "$T/llm/gpu_ladder.py" "$ST" \
  "${S}specs/vllm" "$R/llm" 1 4 16 32 > "$R/llm/ladder.txt" 2>&1
snap

# 5. the storage rung on the local disk.  The scratch target is the root
# mount (S1 reads the mount a path names): first the shipped thresholds
# (S1's verdict on this disk), then S1-S7 with S1's layout criteria
# loosened by --set for this one virtio ext4 disk, so S2-S7 run.
cat > "$W/site-storage.yaml" <<EOS
storage:
  scratch:
    - { path: /, numa_node: 0 }
  size: 2G
  runtime: 8
  iodepth: 32
  numjobs: 4
  seq_read_mibps: ${SEQ_READ:-1000}
  seq_write_mibps: ${SEQ_WRITE:-500}
  randread_iops: ${RANDREAD:-50000}
  staging: { object_size: 512M, objects: 6, concurrency: 8, part_size: 64M }
s3: { endpoint: "$EP", region: us-east-1, bucket: strata-storage,
      create_bucket: true, warmup: 0, duration: 5 }
EOS
cp "$W/site-storage.yaml" "$R/"
timeout 60 "$ST" run "${S}specs/storage" --only S1 --site "$W/site-storage.yaml" \
  -o "$R/storage-S1.xlsx" --json "$R/storage-S1.json" > "$R/storage-S1.txt" 2>&1
echo "S1 rc=$?" >> "$R/storage-S1.txt"
timeout 330 "$ST" run "${S}specs/storage" --site "$W/site-storage.yaml" \
  --set S1.layout_matches.eq=false --set S1.not_xfs.max=1 \
  --set S1.without_noatime.max=1 \
  -o "$R/storage.xlsx" --json "$R/storage.json" > "$R/storage-run.txt" 2>&1
echo "storage rc=$?" >> "$R/storage-run.txt"
rm -f /strata-*.dat
kill $SRV
date -u +%Y-%m-%dT%H:%M:%SZ >> "$R/machine.txt"
snap
