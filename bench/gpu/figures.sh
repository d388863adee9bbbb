#!/bin/sh
# bench/gpu/figures.sh BUNDLE.tar.gz NCCL_TESTS_SRC OUTDIR [ROUNDS] [MAX]
# Every GPU figure the docs keep per machine, in one go on a GPU host
# (docs/performance.md "GPU"): copies against PyTorch (bench/gpu/run.sh),
# NCCL against nccl-tests (bench/nccl/run.sh, ROUNDS interleaved rounds,
# -e MAX), the dma-buf export sizes through strata and
# through the bare driver (tests/gpu/dmabuf_sizes.lua, dmabuf_driver.c).
# Writes OUTDIR/gpu (memcpy.*, dmabuf-*.txt, machine.txt) and OUTDIR/nccl
# (run.sh's files); prints the tables.
set -u
BUNDLE=$1 SRC=$2 OUT=$3 ROUNDS=${4:-3} MAX=${5:-8G}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
W=$(mktemp -d)
mkdir -p "$OUT/gpu" "$OUT/nccl"
tar -C "$W" -xzf "$BUNDLE"
ST=$(ls -d "$W"/strata-*/ | head -1)bin/strata
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id,pcie.link.gen.current,pcie.link.width.current --format=csv
  python3 -c 'import torch; print("torch", torch.__version__)'
  nproc
  cat /proc/loadavg
} > "$OUT/gpu/machine.txt" 2>&1
sh "$HERE/run.sh" "$OUT/gpu" "$ST" > "$OUT/gpu/run.txt" 2>&1
"$ST" lua "$TOP/tests/gpu/dmabuf_sizes.lua" > "$OUT/gpu/dmabuf-sizes.txt" 2>&1
echo "rc=$?" >> "$OUT/gpu/dmabuf-sizes.txt"
nvcc -o "$W/dmabuf_driver" "$TOP/tests/gpu/dmabuf_driver.c" -lcuda &&
  "$W/dmabuf_driver" > "$OUT/gpu/dmabuf-driver.txt" 2>&1
sh "$TOP/bench/nccl/run.sh" "$BUNDLE" "$SRC" "$OUT/nccl" "$ROUNDS" "$MAX"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$OUT/gpu/machine.txt"
cat "$OUT/gpu/memcpy.md" "$OUT/gpu/dmabuf-sizes.txt"
sed -n '/### summary/,$p' "$OUT/nccl/table.md"
