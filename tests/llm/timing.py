"""Client figures set beside a server's own timestamps (sse_server.py's
records), both on CLOCK_MONOTONIC of one host (strata_now_ns and
time.monotonic_ns): used by test_fixture.py (CI) and gpu_ladder.py (GPU
machine)."""
import json
import os
import subprocess


def run_client(strata, here, opts, timeout=600):
    p = subprocess.run([strata, "lua", os.path.join(here, "client.lua"),
                        json.dumps(opts)], capture_output=True, text=True,
                       timeout=timeout)
    if p.returncode:
        raise SystemExit("strata lua client.lua failed:\n" + p.stderr)
    return json.loads(p.stdout)


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * q))] if v else float("nan")


def compare(r, records, prefix):
    """For each completed request i (x-request-id prefix + i): first and
    last token received - written (ms), whether it started before the
    server read it, and the server's own TTFT / write gaps."""
    out = {"first_d": [], "last_d": [], "early": 0, "server_ttft": [],
           "server_gaps": [], "gap_d": []}
    for i, q in enumerate(r["per_request"]):
        rec = records.get("%s%d" % (prefix, i))
        if not rec or not rec["sent_ns"] or q["error"] != "ok":
            continue
        s = rec["sent_ns"]
        out["first_d"].append((q["first_token_ns"] - s[0]) / 1e6)
        out["last_d"].append((q["last_token_ns"] - s[-1]) / 1e6)
        out["server_ttft"].append((s[0] - rec["arrival_ns"]) / 1e6)
        gaps = [(b - a) / 1e6 for a, b in zip(s, s[1:])]
        out["server_gaps"] += gaps
        # the same gap seen by both: client minus server
        out["gap_d"] += [c - g for c, g in zip(q.get("itl_ms", []), gaps)]
        if q["start_ns"] > rec["arrival_ns"]:
            out["early"] += 1
    return out
