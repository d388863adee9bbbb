#!/bin/sh
# bench/s3rdma/run.sh [BUILD] - S3 over RDMA vs S3 over TCP through the
# reference server, side by side in one Soft-RoCE guest (client and
# server share rxe0), with perftest's ib_write_bw on the same device as
# the raw-wire reference.  Prints the ratio table (also left in
# <out>/single/bench.md).  Under TCG the absolute figures are emulation
# speed; the comparison and the method are what carry over.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(readlink -f "${1:-$src/build}")
out=$(mkdir -p "$build/rxe-out" && mktemp -d "$build/rxe-out/bench.XXXXXX")
"$src/tests/rxe/run-in-guest" --build "$build" --out "$out" --timeout 600 \
  "$here/guest.sh" >"$out/console.log" 2>&1 || {
  tail -30 "$out/console.log"; exit 1; }
cat "$out/single/bench.md"
