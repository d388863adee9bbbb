#!/bin/sh
# The bundle works away from the build tree: unpack it into an empty
# folder, run it with a bare environment, check that every bundled
# library resolves from its lib/ and that its specs load.
# usage: bundle-test.sh STRATA_BINARY SOURCE_DIR VERSION
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tgz=$(sh "$2/packaging/bundle.sh" "$1" "$2" "$tmp/out" "$3" | tail -1)
mkdir "$tmp/x"
tar -C "$tmp/x" -xzf "$tgz"
b=$tmp/x/strata-$3-linux-x86_64
test -x "$b/bin/strata"
test -f "$b/lua/strata/cli.lua"
test -d "$b/specs/gpu"
env -i PATH=/usr/bin:/bin "$b/bin/strata" --version | grep -q "strata $3"
# every library in lib/ is the one the loader picks; liburing, opened at
# run time (engine/storage/uring_load.c), is the one strata maps once the
# storage family first calls it
cat > "$tmp/uring.lua" <<'EOF'
require("strata.storage").io_uring()
local f = io.open("/proc/self/maps")
local m = f:read("a")
f:close()
io.write((m:match("(/%S*/liburing%.so[.%d]*)\n") or "none"), "\n")
EOF
got=$(cd "$tmp" && env -i PATH=/usr/bin:/bin "$b/bin/strata" lua "$tmp/uring.lua")
[ "$(readlink -f "$got")" = "$(readlink -f "$b/lib/liburing.so.2")" ] ||
  { echo "FAIL: liburing.so.2 not opened from the bundle: $got"; exit 1; }
for l in "$b"/lib/*; do
  [ -e "$l" ] || continue
  n=$(basename "$l")
  [ "$n" = liburing.so.2 ] && continue
  got=$(ldd "$b/bin/strata" | awk -v n="$n" '$1 == n { print $3 }')
  [ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$l")" ] ||
    { echo "FAIL: $n not resolved from the bundle"; ldd "$b/bin/strata"; exit 1; }
done
! ldd "$b/bin/strata" | grep -q "not found"
# the bundle finds its own lua/ and specs/ (no STRATA_HOME, cwd elsewhere)
(cd "$tmp" && env -i PATH=/usr/bin:/bin "$b/bin/strata" check "$b/specs/gpu") |
  grep -q "^ok:"
grep -q "^needs: GLIBC_2" "$b/BUNDLE.txt"
echo "bundle ok: $(ls "$b/lib" | tr '\n' ' ')"
