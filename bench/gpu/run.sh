#!/bin/sh
# Run on the GPU machine from an unpacked bundle: strata vs PyTorch
# copies on one GPU, same sizes, warm-up and repeats; writes the JSON
# lines and the ratio table to $1 (default .).
# usage: bench/gpu/run.sh OUTDIR [STRATA]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-.}
strata=${2:-strata}
dev=0 warmup=3 repeats=20
sizes="65536 1048576 16777216 268435456 1073741824"
: > "$out/memcpy.jsonl"
"$strata" lua "$here/memcpy_strata.lua" $dev $warmup $repeats $sizes \
  >> "$out/memcpy.jsonl"
python3 "$here/memcpy_torch.py" $dev $warmup $repeats $sizes \
  >> "$out/memcpy.jsonl"
# second strata pass: the spread between two runs of one tool is the noise
"$strata" lua "$here/memcpy_strata.lua" $dev $warmup $repeats $sizes \
  | sed 's/"tool":"strata"/"tool":"strata2"/' >> "$out/memcpy.jsonl"
python3 "$here/compare.py" "$out/memcpy.jsonl" | tee "$out/memcpy.md"
