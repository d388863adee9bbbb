#!/usr/bin/python3
"""bucket_race_test.py STRATA RGWDIR FAULTDIR: several S3 clients open the
same missing bucket at once (the fleet's storage clients do: every node
finds it missing and creates it).

- Against the real Ceph RGW (lab/rgw.sh): 8 clients released together on a
  fresh bucket all succeed, and the bucket exists once.
- Against fixtures/s3/faulty_server.py --bucket-conflict
  BucketAlreadyOwnedByYou (its HEAD of a bucket always 404, as every racer
  sees it; a second create answered as AWS outside us-east-1 and OpenStack
  Swift answer it): every client succeeds and the server counted 5 409s; with --bucket-conflict BucketAlreadyExists (another
  owner's bucket) the losers fail naming the code.
"""
import json
import os
import subprocess
import sys
import time
import uuid

STRATA, RGWDIR, FAULTDIR = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FAILED = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILED.append(what)


def race(endpoint, bucket, cred, n, env=None):
    """n clients, released at once by one write to each stdin."""
    procs = [subprocess.Popen([STRATA, "lua", os.path.join(HERE, "bucket_one.lua"),
                               endpoint, bucket, cred or ""],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, **(env or {})))
             for _ in range(n)]
    time.sleep(0.5)          # every process started and blocked on stdin
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    out = []
    for p in procs:
        p.stdin.close()
        out.append(p.stdout.read().strip())
        p.wait(timeout=60)
    return out


def rgw_env():
    env = {}
    with open(os.path.join(RGWDIR, "env")) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            env[k] = v
    return env


def faulty(name, code):
    port_file = os.path.join(FAULTDIR, name + ".port")
    stats = os.path.join(FAULTDIR, name + ".stats")
    for f in (port_file, stats):     # never a previous run's
        if os.path.exists(f):
            os.remove(f)
    p = subprocess.Popen(["/usr/bin/python3",
                          os.path.join(ROOT, "fixtures/s3/faulty_server.py"),
                          "--mode", "flaky", "--port-file", port_file,
                          "--stats-file", stats, "--slowdown-every", "0",
                          "--error-every", "0", "--reset-every", "0",
                          "--bucket-conflict", code])
    for _ in range(100):
        if os.path.exists(port_file):
            break
        time.sleep(0.1)
    with open(port_file) as f:
        return p, "http://127.0.0.1:%d" % int(f.read()), stats


def main():
    os.makedirs(FAULTDIR, exist_ok=True)
    e = rgw_env()
    bucket = "race-" + uuid.uuid4().hex[:12]
    out = race(e["S3_ENDPOINT"], bucket, e["S3_CREDENTIALS_FILE"], 8)
    check(out == ["ok"] * 8, "RGW: 8 clients creating %s at once all succeed: %r"
          % (bucket, out))
    keys = {"RACE_AK": "AKIDRACE", "RACE_SK": "race-secret"}
    srv, ep, stats = faulty("owned", "BucketAlreadyOwnedByYou")
    try:
        out = race(ep, "racebucket", None, 6, keys)
        check(out == ["ok"] * 6, "409 BucketAlreadyOwnedByYou is success: %r" % out)
        with open(stats) as f:
            n = json.load(f).get("bucket_conflict", 0)
        check(n == 5, "the server answered 409 BucketAlreadyOwnedByYou 5 times: %d" % n)
    finally:
        srv.terminate()
        srv.wait()
    srv, ep, stats = faulty("exists", "BucketAlreadyExists")
    try:
        out = race(ep, "takenbucket", None, 4, keys)
        bad = [o for o in out if o != "ok"]
        check(len(bad) == 3 and all("409 BucketAlreadyExists" in o for o in bad),
              "409 BucketAlreadyExists (someone else's) stays an error: %r" % out)
    finally:
        srv.terminate()
        srv.wait()
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
