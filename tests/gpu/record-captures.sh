#!/bin/sh
# record-captures.sh BUNDLE.tar.gz NCCL_TESTS_SRC OUTDIR
# Run on a GPU host (issue 9 sections 4-5; docs/gpu.md "dma-buf export"
# and fixtures/lib/README.md say what came of it): builds nccl-tests from
# its source against the host's NCCL, captures the outputs strata parses
# (R9's sweep for each collective, the per-iteration mode -I 1, timestamps
# and CPU time -S 1 -C 1, the JSON file -J), and exports dma-bufs of
# 1 B .. 64 MiB + 1 through strata and through the bare driver.  Writes
# OUTDIR/captures.tar.gz and OUTDIR/log.txt.
set -u
BUNDLE=$1 SRC=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
C=$W/captures
mkdir -p "$C"
export NCCL_NVLS_ENABLE=0
exec > "$OUT/log.txt" 2>&1
set -x
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  uname -r
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv
  nvcc --version | tail -2
} > "$C/machine.txt" 2>&1

# strata: dma-buf sizes, the device probe
tar -C "$W" -xzf "$BUNDLE"
S=$(ls -d "$W"/strata-*/ | head -1)
"$S/bin/strata" --version > "$C/strata-version.txt" 2>&1
"$S/bin/strata" lua "$HERE/dmabuf_sizes.lua" > "$C/dmabuf_sizes.txt" 2>&1
echo "rc=$?" >> "$C/dmabuf_sizes.txt"
"$S/bin/strata" lua "$HERE/device_probe.lua" "$C" > "$C/device_probe.txt" 2>&1
echo "rc=$?" >> "$C/device_probe.txt"
nvcc -o "$W/dmabuf_driver" "$HERE/dmabuf_driver.c" -lcuda &&
  "$W/dmabuf_driver" > "$C/dmabuf_driver.txt" 2>&1

# nccl-tests against the host's NCCL (header and library side by side)
H=$(dirname "$(find / -xdev -name nccl.h -path '*include*' 2>/dev/null | head -1)")
L=$(dirname "$(find / -xdev -name 'libnccl.so*' 2>/dev/null | head -1)")
echo "nccl.h in $H, libnccl in $L" >> "$C/machine.txt"
ls -la "$L"/libnccl* >> "$C/machine.txt" 2>&1
mkdir -p "$W/nccl/lib"
ln -s "$H" "$W/nccl/include"
ln -s "$(ls "$L"/libnccl.so* | head -1)" "$W/nccl/lib/libnccl.so"
cp -r "$SRC" "$W/nt"
make -C "$W/nt/src" -j"$(nproc)" MPI=0 NCCL_HOME="$W/nccl" \
  NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BUILDDIR="$W/ntb" \
  > "$C/nccl-tests-build.txt" 2>&1
export LD_LIBRARY_PATH="$L:${LD_LIBRARY_PATH:-}"
B=$W/ntb
# R9's sweep (specs/nccl/R9.lua): -b 8 -e 8G -f 2 -g N -c 1 -w 5 -n 20
for op in all_reduce all_gather broadcast reduce_scatter sendrecv; do
  "$B/${op}_perf" -b 8 -e 8G -f 2 -g 1 -c 1 -w 5 -n 20 \
    > "$C/${op}_perf.txt" 2>&1
done
"$B/all_reduce_perf" -b 8 -e 64M -f 4 -g 1 -c 1 -w 5 -n 20 -I 1 \
  > "$C/all_reduce_perf_per_iter.txt" 2>&1
"$B/all_reduce_perf" -b 8 -e 64M -f 4 -g 1 -c 1 -w 5 -n 20 -S 1 -C 1 \
  > "$C/all_reduce_perf_timestamps_cputime.txt" 2>&1
"$B/all_reduce_perf" -b 8 -e 64M -f 4 -g 1 -c 1 -w 5 -n 20 \
  -J "$C/all_reduce_perf.json" > "$C/all_reduce_perf_json_run.txt" 2>&1
"$B/all_reduce_perf" -b 8 -e 64M -f 4 -g 1 -c 1 -w 5 -n 20 -I 1 \
  -J "$C/all_reduce_perf_per_iter.json" > /dev/null 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >> "$C/machine.txt"
tar -C "$W" -czf "$OUT/captures.tar.gz" captures
