#!/bin/sh
# bench/structure/longest.sh - the longest files and functions in engine/
# and lua/, against the house limits (shared/STYLE.md: files under 1000
# lines, functions that do one step; issue 30 sets 120 lines for a
# function).  A report, not a gate: it exits 0 whatever it finds, unless
# --gate is given, when it exits 1 if anything is over a limit.
#
# C functions come from universal-ctags (its "end:" field is where the
# function's closing brace is), Lua functions from the compiler itself
# (luafuncs.lua beside this script reads the line ranges `luac -l` would
# print off the compiled chunk; Debian ships no luac5.4 in the build
# image, strata embeds the same compiler), so nothing here parses either
# language by hand.
#
# Usage: bench/structure/longest.sh [--gate] [--top N] [ROOT]
#   STRATA: the strata binary (default ROOT/build/strata)
set -eu
gate=0 top=10
while [ $# -gt 0 ]; do
  case $1 in
    --gate) gate=1; shift ;;
    --top) top=$2; shift 2 ;;
    -*) echo "usage: $0 [--gate] [--top N] [ROOT]" >&2; exit 2 ;;
    *) break ;;
  esac
done
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
FILE_MAX=${FILE_MAX:-1000}
FUNC_MAX=${FUNC_MAX:-120}
here=$(cd "$(dirname "$0")" && pwd)
STRATA=${STRATA:-$root/build/strata}
command -v ctags >/dev/null || { echo "$0: ctags not found" >&2; exit 2; }
[ -x "$STRATA" ] || { echo "$0: no strata binary at $STRATA" >&2; exit 2; }
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# files: "lines path", C and Lua sources (tests beside the code count too)
find engine lua -type f \( -name '*.c' -o -name '*.h' -o -name '*.lua' \) \
  -print | sort | xargs wc -l | grep -v ' total$' |
  awk '{print $1, $2}' | sort -k1,1nr -k2 > "$tmp/files"

# C functions: "lines path:first name"
find engine -type f \( -name '*.c' -o -name '*.h' \) -print | sort |
  ctags --sort=no --languages=C --kinds-C=f --fields=+ne -L - -f - |
  awk -F'\t' '{
      line = ""; end = ""
      for (i = 4; i <= NF; i++) {
        if ($i ~ /^line:/) line = substr($i, 6)
        if ($i ~ /^end:/) end = substr($i, 5)
      }
      if (line != "" && end != "") print end - line + 1, $2 ":" line, $1
    }' > "$tmp/funcs"

# Lua functions: the compiler's own ranges; the name is read off the
# first line of the function's source (what follows "function").
find lua -type f -name '*.lua' -print | sort > "$tmp/lua"
# shellcheck disable=SC2046 # paths under lua/ have no spaces
"$STRATA" lua "$here/luafuncs.lua" $(cat "$tmp/lua") |
  while read -r a b f; do
    name=$(sed -n "${a}p" "$f" |
           sed -n 's/.*function[[:space:]]*\([A-Za-z0-9_.:]*\).*/\1/p')
    echo "$((b - a + 1)) $f:$a ${name:-(anonymous)}"
  done >> "$tmp/funcs"
sort -k1,1nr -k2 "$tmp/funcs" -o "$tmp/funcs"

over_files=$(awk -v m="$FILE_MAX" '$1 > m' "$tmp/files" | wc -l)
over_funcs=$(awk -v m="$FUNC_MAX" '$1 > m' "$tmp/funcs" | wc -l)
echo "files over $FILE_MAX lines: $over_files"
awk -v m="$FILE_MAX" '$1 > m {printf "  %5d  %s\n", $1, $2}' "$tmp/files"
echo "functions over $FUNC_MAX lines: $over_funcs"
awk -v m="$FUNC_MAX" '$1 > m {printf "  %5d  %s  %s\n", $1, $2, $3}' "$tmp/funcs"
echo "longest $top files:"
head -n "$top" "$tmp/files" | awk '{printf "  %5d  %s\n", $1, $2}'
echo "longest $top functions:"
head -n "$top" "$tmp/funcs" | awk '{printf "  %5d  %s  %s\n", $1, $2, $3}'
if [ "$gate" = 1 ] && [ $((over_files + over_funcs)) -gt 0 ]; then
  exit 1
fi
exit 0
