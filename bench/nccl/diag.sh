#!/bin/sh
# bench/nccl/diag.sh BUNDLE.tar.gz NCCL_TESTS_SRC OUTDIR [ROUNDS]
# On a GPU host (issue 31 item 3): where a small collective's time goes,
# strata's against nccl-tests'.  bench/nccl/probe.c (one process: the
# nccl-tests method, strata's event pair, the enqueue time alone, the
# GPU time, a bare cudaMemcpyAsync) on its own and pinned to several
# CPUs; then whole processes of each tool, interleaved, unpinned and
# pinned to one CPU, broadcast and all_gather 1 KiB - 4 MiB.
# Writes OUTDIR/diag.txt (and the raw outputs in OUTDIR/diag.tar.gz).
set -u
BUNDLE=$1 SRC=$2 OUT=$3 ROUNDS=${4:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
R=$W/diag
mkdir -p "$R"
export NCCL_NVLS_ENABLE=0
. "$HERE/setup.sh"   # S (the bundle), B (nccl-tests' binaries), H, L
{
  nvidia-smi topo -m
  lscpu | grep -E 'NUMA|Model name|^CPU\(s\)|Thread'
  cat /proc/loadavg
} > "$R/machine-topo.txt" 2>&1
nvcc -O2 -o "$W/probe" "$HERE/probe.c" -I"$H" -L"$L" -lnccl \
  > "$R/probe-build.txt" 2>&1
N=$(nproc)
CPUS="0 $((N / 2)) $((N - 1))"
{
  echo "## probe, unpinned (twice)"
  "$W/probe"; "$W/probe"
  for c in $CPUS; do
    echo "## probe, taskset -c $c"
    taskset -c "$c" "$W/probe"
  done
} > "$R/probe.txt" 2>&1
# whole processes, interleaved: nccl-tests then strata, same sizes
for r in $(seq 1 "$ROUNDS"); do
  for pin in none 0 $((N - 1)); do
    P=""
    [ "$pin" = none ] || P="taskset -c $pin"
    for op in broadcast all_gather; do
      $P "$B/${op}_perf" -b 1K -e 4M -f 2 -g 1 -c 1 -w 5 -n 20 \
        > "$R/nt_${op}_${pin}_$r.txt" 2>&1
      $P "$S/bin/strata" lua "$HERE/sweep.lua" "$op" 1K 4M \
        "$R/st_${op}_${pin}_$r.json" host > "$R/st_${op}_${pin}_$r.txt" 2>&1
    done
  done
done
"$S/bin/strata" lua "$HERE/diag.lua" "$R" "$ROUNDS" "none 0 $((N - 1))" \
  > "$OUT/diag.txt" 2>&1
cat "$R/probe.txt" >> "$OUT/diag.txt"
tar -C "$W" -czf "$OUT/diag.tar.gz" diag
