#!/bin/sh
# Make the portable bundle: strata-<version>-linux-x86_64.tar.gz holding
#   bin/strata   the binary (rpath $ORIGIN/lib:$ORIGIN/../lib)
#   lib/         the shared libraries a stock Ubuntu 24.04 / RHEL 9-10 node
#                lacks (everything ldd lists except the list below)
#   lua/ specs/  the runner and the shipped runbook
#   packaging/grafana/  the dashboard strata k8s render ships
#   BUNDLE.txt   what was bundled and why, the glibc it needs
# usage: bundle.sh STRATA_BINARY SOURCE_DIR OUT_DIR VERSION
# docs/bundle.md explains the choices.
set -eu
bin=$1 src=$2 out=$3 ver=$4
name=strata-$ver-linux-x86_64
stage=$out/$name
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib"
cp "$bin" "$stage/bin/strata"
strip --strip-debug "$stage/bin/strata" 2>/dev/null || true

# Libraries every target node has, or must take from the node itself:
# glibc and the compiler runtime; OpenSSL 3, zlib and libcurl (base
# packages of both distributions); rdma-core (its providers and the
# kernel ABI must match the node) and its libnl; the NVIDIA driver's
# libraries (libcuda, libnvidia-ml: opened at run time, never bundled).
system='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+|libz|libcrypto|libssl|libcurl|libnghttp2|libidn2|libunistring|librtmp|libssh2?|libpsl|libgssapi_krb5|libkrb5|libk5crypto|libcom_err|libkrb5support|libkeyutils|liblber|libldap|libldap_r|libsasl2|libbrotli(dec|common)|libzstd|libgnutls|libhogweed|libnettle|libgmp|libp11-kit|libtasn1|libffi|libibverbs|librdmacm|libnl-3|libnl-route-3|libcuda|libnvidia-ml|libselinux|libpcre2-8|liblzma|libcap)(-[0-9.]+)?\.so'

: > "$stage/lib/.list"
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
while read -r soname path; do
  if printf '%s\n' "$soname" | grep -Eq "$system"; then
    echo "system  $soname" >> "$stage/lib/.list"
  else
    cp -L "$path" "$stage/lib/$soname"
    echo "bundled $soname ($(basename "$(readlink -f "$path")"))" >> "$stage/lib/.list"
  fi
done
# Libraries strata opens at run time (engine/core/lazylib.h): not in its
# ldd, placed by the same rule (liburing, libxlsxwriter and libyaml are
# bundled, with what they need that the node lacks: libxlsxwriter's
# libminizip; the rest are the node's); dlopen finds them through the
# binary's rpath as ld.so does, and their own dependencies through it too
# (DT_RPATH, CMakeLists.txt).
place_lazy() {  # SONAME PATH WHY
  grep -Eq "^(system  |bundled )$1( |\$)" "$stage/lib/.list" && return 0
  if printf '%s\n' "$1" | grep -Eq "$system"; then
    echo "system  $1 ($3)" >> "$stage/lib/.list"
  elif [ -n "$2" ]; then
    cp -L "$2" "$stage/lib/$1"
    echo "bundled $1 ($(basename "$(readlink -f "$2")"), $3)" >> "$stage/lib/.list"
  else
    echo "bundle.sh: $1 ($3) not found here" >&2
    exit 1
  fi
}
for soname in libcurl.so.4 libibverbs.so.1 liburing.so.2 libcrypto.so.3 \
              libxlsxwriter.so.4 libyaml-0.so.2; do
  path=$(/sbin/ldconfig -p | awk -v n="$soname" '$1 == n && /x86-64/ { print $NF; exit }')
  place_lazy "$soname" "$path" "opened at run time"
  grep -q "^bundled $soname " "$stage/lib/.list" || continue
  deps=$(ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// { print $1 "=" $3 }')
  for d in $deps; do
    place_lazy "${d%%=*}" "${d#*=}" "needed by $soname"
  done
done
if ldd "$bin" | grep -q "not found"; then
  echo "bundle.sh: $bin has unresolved libraries here:" >&2
  ldd "$bin" | grep "not found" >&2
  exit 1
fi

cp -R "$src/lua" "$stage/lua"
cp -R "$src/specs" "$stage/specs"
mkdir -p "$stage/packaging"
cp -R "$src/packaging/grafana" "$stage/packaging/grafana"   # strata k8s render
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tail -1)
{
  echo "strata $ver, linux x86_64"
  echo "built on: $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -r)"
  echo "needs: $glibc or newer (Ubuntu 22.04+, RHEL 9+, Debian 12+)"
  echo "libcurl: libcurl.so.4 of the node, opened at run time (S3, scrapes)"
  echo "CUDA: runtime linked statically; the node's driver (libcuda.so.1,"
  echo "      libnvidia-ml.so.1) is opened at run time, absent = SKIP"
  echo
  echo "libraries (bundled = in lib/, system = taken from the node):"
  sort "$stage/lib/.list"
} > "$stage/BUNDLE.txt"
rm "$stage/lib/.list"
tar -C "$out" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
