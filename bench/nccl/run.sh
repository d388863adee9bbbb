#!/bin/sh
# bench/nccl/run.sh BUNDLE.tar.gz NCCL_TESTS_SRC OUTDIR [ROUNDS] [MAX] [CHECK]
# On a GPU host: strata's nccl family against NVIDIA/nccl-tests built from
# its source against the host's NCCL (the way tests/gpu/record-captures.sh
# builds it), same sizes (R9's -b 8 -e MAX -f 2 -w 5 -n 20 -c 1), same
# GPU, interleaved run by run; then the correctness matrix (check.lua),
# R9/R9P through `strata run`, and the comparison table (compare.lua).
# Writes OUTDIR/log.txt, OUTDIR/table.md, OUTDIR/raw.tar.gz, OUTDIR/r9.*
set -u
BUNDLE=$1 SRC=$2 OUT=$3 ROUNDS=${4:-2} MAX=${5:-8G} CHECK=${6:-}
# CHECK: a collective name limits the correctness matrix to it
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
R=$W/raw
mkdir -p "$R"
export NCCL_NVLS_ENABLE=0
exec > "$OUT/log.txt" 2>&1
set -x
. "$HERE/setup.sh"   # S, ST (the bundle), B (nccl-tests), H, L

"$ST" --version > "$R/strata-version.txt" 2>&1
"$ST" lua "$HERE/check.lua" $CHECK > "$R/check.txt" 2>&1
echo "check rc=$?" >> "$R/check.txt"

# interleaved: for each round, each collective: nccl-tests, then strata
for r in $(seq 1 "$ROUNDS"); do
  for op in all_reduce all_gather broadcast reduce_scatter reduce alltoall sendrecv; do
    "$B/${op}_perf" -b 8 -e "$MAX" -f 2 -g 1 -c 1 -w 5 -n 20 \
      > "$R/nt_${op}_$r.txt" 2>&1
    "$ST" lua "$HERE/sweep.lua" "$op" 8 "$MAX" "$R/st_${op}_$r.json" host \
      > "$R/st_${op}_$r.txt" 2>&1
  done
done
"$ST" lua "$HERE/compare.lua" "$R" "$ROUNDS" > "$OUT/table.md" 2>&1

# R9 / R9P through the runner (native engine; one GPU: R9P SKIPs, and
# busbw is 0 by definition for all_reduce & co, so the site value is 0)
printf 'gpu:\n  count: 1\nnccl:\n  max_bytes: %s\n  busbw_gbs: 0\n' \
  "${R9_MAX:-64M}" > "$W/site.yaml"
"$ST" run "$S/specs/gpu" "$S/specs/nccl" --site "$W/site.yaml" \
  -o "$OUT/r9.xlsx" > "$R/r9-run.txt" 2>&1
echo "strata run rc=$?" >> "$R/r9-run.txt"
# without libnccl: R9 SKIPs with the reason
STRATA_NCCL_LIBRARY=/nonexistent/libnccl.so.2 "$ST" run "$S/specs/gpu" \
  "$S/specs/nccl" --site "$W/site.yaml" -o "$W/r9-absent.xlsx" \
  > "$R/r9-absent.txt" 2>&1
date -u +%Y-%m-%dT%H:%M:%SZ >> "$R/machine.txt"
cp "$OUT"/r9.jsonl "$R/" 2>/dev/null
tar -C "$W" -czf "$OUT/raw.tar.gz" raw
