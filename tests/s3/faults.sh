#!/bin/sh
# faults.sh - start/stop the misbehaving servers of fixtures/s3 for tests.
#   tests/s3/faults.sh start DIR   flaky + hang servers; DIR/flaky.port,
#                                  DIR/hang.port, DIR/flaky.stats; and two
#                                  fault-free ones: clean (HTTP) and tls
#                                  (HTTPS, self-signed DIR/ca.pem for
#                                  localhost/127.0.0.1)
#   tests/s3/faults.sh stop DIR    stop them, remove DIR
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
srv=$here/fixtures/s3/faulty_server.py
case ${1:-} in
  start)
    D=$2
    mkdir -p "$D"
    /usr/bin/python3 "$srv" --mode flaky --port-file "$D/flaky.port" \
      --stats-file "$D/flaky.stats" >"$D/flaky.log" 2>&1 &
    echo $! > "$D/flaky.pid"
    /usr/bin/python3 "$srv" --mode hang --port-file "$D/hang.port" \
      >"$D/hang.log" 2>&1 &
    echo $! > "$D/hang.pid"
    /usr/bin/python3 "$srv" --mode flaky --port-file "$D/clean.port" \
      --slowdown-every 0 --error-every 0 --reset-every 0 \
      >"$D/clean.log" 2>&1 &
    echo $! > "$D/clean.pid"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
      -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
      -keyout "$D/key.pem" -out "$D/ca.pem" >/dev/null 2>&1 \
      || { echo "faults.sh: openssl req failed" >&2; exit 1; }
    /usr/bin/python3 "$srv" --mode flaky --port-file "$D/tls.port" \
      --slowdown-every 0 --error-every 0 --reset-every 0 \
      --tls-cert "$D/ca.pem" --tls-key "$D/key.pem" >"$D/tls.log" 2>&1 &
    echo $! > "$D/tls.pid"
    n=0
    while [ ! -s "$D/flaky.port" ] || [ ! -s "$D/hang.port" ] ||
          [ ! -s "$D/clean.port" ] || [ ! -s "$D/tls.port" ]; do
      n=$((n + 1))
      if [ $n -gt 100 ]; then
        echo "faults.sh: servers did not start (see $D/*.log)" >&2
        exit 1
      fi
      sleep 0.1
    done
    echo "flaky on $(cat "$D/flaky.port"), hang on $(cat "$D/hang.port"), clean on $(cat "$D/clean.port"), tls on $(cat "$D/tls.port")" ;;
  stop)
    D=$2
    for f in "$D"/*.pid; do
      [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
    rm -rf "$D" ;;
  *) echo "usage: faults.sh start|stop DIR" >&2; exit 2 ;;
esac
