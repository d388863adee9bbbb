#!/bin/sh
# bench/storage/run.sh [ROUNDS [RUNTIME_S [DIR]]]: strata vs fio on XFS on a
# loop device made here (as tests/storage does), or on DIR when given (a
# real scratch mount).  Needs root, losetup, mkfs.xfs, fio (Debian 3.33).
# BENCH_IMG_DIR: where the loop device's backing file lives (default: the
# build tree; /dev/shm takes the host's disk out of the figures).
# BENCH_XFS_IMAGE: a gzipped empty 1 GiB XFS image to use instead of
# mkfs.xfs (for a host without xfsprogs).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
strata=${STRATA:-$root/build/strata}
if [ -n "${3:-}" ]; then
  exec "$strata" lua "$root/bench/storage/bench.lua" "$3" "${1:-3}" "${2:-5}"
fi
tmp=$(mktemp -d "$root/build/storage-bench.XXXXXX")
img=${BENCH_IMG_DIR:-$tmp}/strata-bench-xfs.$$.img
if [ -n "${BENCH_XFS_IMAGE:-}" ]; then
  gunzip -c "$BENCH_XFS_IMAGE" > "$img"
else
  truncate -s 1G "$img"
  mkfs.xfs -q -f "$img"
fi
loop=$(losetup -f --show "$img")
trap 'umount "$tmp/mnt" 2>/dev/null; losetup -d "$loop"; rm -rf "$tmp" "$img"' EXIT
mkdir "$tmp/mnt"
mount -t xfs -o noatime "$loop" "$tmp/mnt"
echo "target: XFS on $loop (a loop device over a file on $(df -T "$img" | awk 'NR==2{print $2" "$1}'))"
"$strata" lua "$root/bench/storage/bench.lua" "$tmp/mnt" "${1:-3}" "${2:-5}"
