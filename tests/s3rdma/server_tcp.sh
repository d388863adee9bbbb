#!/bin/sh
# server_tcp.sh BUILD - start the reference server without RDMA on a free
# port, run server_tcp.lua against it, stop it.
set -u
B=$1; here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/s3rdma-tcp.XXXXXX")
export AWS_ACCESS_KEY_ID=AKIDSTRATATCP AWS_SECRET_ACCESS_KEY=tcp-secret-test
export STRATA_WRONG_SECRET=not-the-secret
unset AWS_CA_BUNDLE
port=$((30000 + $$ % 20000))
"$B/fixtures/s3rdma/strata-s3rdma-server" --root "$dir/store" --no-rdma \
  --listen 127.0.0.1 --port $port 2> "$dir/server.log" &
srv=$!
i=0
while [ $i -lt 50 ] && ! grep -q listening "$dir/server.log"; do
  sleep 0.1; i=$((i + 1))
done
"$B/strata" lua "$here/server_tcp.lua" "http://127.0.0.1:$port"
rc=$?
kill $srv 2>/dev/null
wait $srv 2>/dev/null
[ $rc = 0 ] || cat "$dir/server.log"
rm -rf "$dir"
exit $rc
