#!/bin/sh
# bench/s3/run.sh [ROUNDS [OP:CONC]]: start a throw-away RGW, run bench.lua, stop it.
# STRATA (default build/strata), RGW_STORE (default bluestore: a GiB-sized
# working set outgrows memstore's RAM device) as rgw.sh.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
strata=${STRATA:-$root/build/strata}
dir=$(mktemp -d /tmp/strata-s3-bench.XXXXXX)
rmdir "$dir"
trap '"$root/lab/rgw.sh" stop "$dir"' EXIT
RGW_MGR=0 RGW_STORE=${RGW_STORE:-bluestore} "$root/lab/rgw.sh" start "$dir"
"$strata" lua "$root/bench/s3/bench.lua" "$dir" "${1:-3}" ${2:-}
