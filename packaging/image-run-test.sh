#!/bin/sh
# Build the image archive from a fresh bundle in a scratch folder and run
# the image's strata (packaging/image-test.py).
# usage: image-run-test.sh STRATA_BINARY SOURCE_DIR VERSION
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tgz=$(sh "$2/packaging/bundle.sh" "$1" "$2" "$tmp" "$3" | tail -1)
img=$(/usr/bin/python3 "$2/packaging/image.py" "$tgz" "$2" "$tmp" "$3" | tail -1)
rc=0
/usr/bin/python3 "$2/packaging/image-test.py" "$img" || rc=$?
exit $rc
