#!/bin/sh
# bench/storage/run.sh [ROUNDS [RUNTIME_S [DIR]]]: strata vs fio on XFS on a
# loop device made here (as tests/storage does), or on DIR when given (a
# real scratch mount).  Needs root, losetup, mkfs.xfs, fio (Debian 3.33).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
strata=${STRATA:-$root/build/strata}
if [ -n "${3:-}" ]; then
  exec "$strata" lua "$root/bench/storage/bench.lua" "$3" "${1:-3}" "${2:-5}"
fi
tmp=$(mktemp -d "$root/build/storage-bench.XXXXXX")
truncate -s 1G "$tmp/xfs.img"
loop=$(losetup -f --show "$tmp/xfs.img")
trap 'umount "$tmp/mnt" 2>/dev/null; losetup -d "$loop"; rm -rf "$tmp"' EXIT
mkfs.xfs -q -f "$loop"
mkdir "$tmp/mnt"
mount -t xfs -o noatime "$loop" "$tmp/mnt"
echo "target: XFS on $loop (a loop device over a file on $(df -T "$tmp" | awk 'NR==2{print $2" "$1}'))"
"$strata" lua "$root/bench/storage/bench.lua" "$tmp/mnt" "${1:-3}" "${2:-5}"
