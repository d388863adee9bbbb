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
# every library in lib/ is the one the loader picks: those in strata's
# ldd as linked, those it opens at run time (engine/core/lazylib.h:
# liburing, libxlsxwriter with its libminizip, libyaml) as mapped once
# strata first calls them
cat > "$tmp/lazy.lua" <<'EOF'
require("strata.storage").io_uring()
local wb = require("strata.report").workbook(os.getenv("TMPD") .. "/l.xlsx")
wb:worksheet("x"):write(0, 0, "x")
wb:close()
require("strata.yaml").load("a: 1\n")
local f = io.open("/proc/self/maps")
io.write(f:read("a"))
f:close()
EOF
(cd "$tmp" && env -i PATH=/usr/bin:/bin TMPD="$tmp" "$b/bin/strata" lua "$tmp/lazy.lua") \
  > "$tmp/maps"
for l in "$b"/lib/*; do
  [ -e "$l" ] || continue
  n=$(basename "$l")
  got=$(ldd "$b/bin/strata" | awk -v n="$n" '$1 == n { print $3 }')
  [ -n "$got" ] || got=$(awk -v n="$n" '{ k = split($NF, a, "/")
                                          if (index(a[k], n) == 1) { print $NF; exit } }' "$tmp/maps")
  [ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$l")" ] ||
    { echo "FAIL: $n not resolved from the bundle: ${got:-not mapped}"; ldd "$b/bin/strata"; exit 1; }
done
! ldd "$b/bin/strata" | grep -q "not found"
# the bundle finds its own lua/ and specs/ (no STRATA_HOME, cwd elsewhere)
(cd "$tmp" && env -i PATH=/usr/bin:/bin "$b/bin/strata" check "$b/specs/gpu") |
  grep -q "^ok:"
grep -q "^needs: GLIBC_2" "$b/BUNDLE.txt"
echo "bundle ok: $(ls "$b/lib" | tr '\n' ' ')"
