#!/bin/sh
# server_tcp.sh BUILD [RGWDIR] - start the reference server without RDMA
# on a free port, objects on disk or (RGWDIR: a cluster of lab/rgw.sh)
# in the Ceph RGW behind it, run server_tcp.lua against it, stop it.
set -u
B=$1; here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/s3rdma-tcp.XXXXXX")
export AWS_ACCESS_KEY_ID=AKIDSTRATATCP AWS_SECRET_ACCESS_KEY=tcp-secret-test
export STRATA_WRONG_SECRET=not-the-secret
unset AWS_CA_BUNDLE
store="--root $dir/store"
if [ $# -ge 2 ]; then
  [ -r "$2/env" ] || { echo "server_tcp.sh: no RGW in $2" >&2; exit 1; }
  . "$2/env"
  store="--backend $S3_ENDPOINT --backend-credentials $S3_CREDENTIALS_FILE"
fi
# port 0: the kernel picks a free one and the server says which (a port
# made up here could be in use by another test's connection)
"$B/fixtures/s3rdma/strata-s3rdma-server" $store --no-rdma \
  --listen 127.0.0.1 --port 0 2> "$dir/server.log" &
srv=$!
i=0
while [ $i -lt 50 ] && ! grep -q listening "$dir/server.log"; do
  sleep 0.1; i=$((i + 1))
done
port=$(sed -n 's/^s3rdma-server: listening on 127.0.0.1:\([0-9]*\)$/\1/p' \
  "$dir/server.log")
[ -n "$port" ] || { echo "server_tcp.sh: the server did not start" >&2
                    cat "$dir/server.log"; kill $srv 2>/dev/null; exit 1; }
"$B/strata" lua "$here/server_tcp.lua" "http://127.0.0.1:$port"
rc=$?
"$B/strata" lua "$here/host_sign.lua" "http://127.0.0.1:$port" || rc=1
if [ $# -ge 2 ]; then       # the same against the RGW itself
  "$B/strata" lua "$here/host_sign.lua" "$S3_ENDPOINT" \
    "$S3_CREDENTIALS_FILE" || rc=1
fi
kill $srv 2>/dev/null
wait $srv 2>/dev/null
[ $rc = 0 ] || cat "$dir/server.log"
rm -rf "$dir"
exit $rc
