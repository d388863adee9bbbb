#!/usr/bin/python3
"""ctest llm_fixture (label llm): strata's streaming client against the
fixture server (fixture_server.py) with injected timings and faults.

Tolerances (docs/llm.md), on one clock (CLOCK_MONOTONIC in both
processes): each request's first and last token reach the client no
earlier than the server's timestamp taken just before writing it, and
after it by p50 <= 1 ms and p90 <= 15 ms (the tail is this shared
2-core host scheduling two processes: unloaded, p90 is under 1 ms); each
inter-token gap the client measured equals the server's gap between the
same two writes within p50 0.5 ms, p90 15 ms; against the injected
values, TTFT p50 in [ttft, ttft + 50] ms and ITL p50 in [itl - 2, itl + 10] ms.  Faults:
each request ends as the failure it should, and a bad request never
spoils a good one beside it.

usage: test_fixture.py <strata binary> <tests/llm>
"""
import statistics
import os
import sys
import time

STRATA, HERE = sys.argv[1], sys.argv[2]
sys.path.insert(0, HERE)
import fixture_server  # noqa: E402
import sse_server  # noqa: E402
import timing  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../pylib"))
from strata_test import Checks  # noqa: E402

check = Checks(quiet=True)
failures = check.fails


def run(opts):
    return timing.run_client(STRATA, HERE, opts, timeout=120)


srv = sse_server.serve(fixture_server.Injected(seed=7))
base = "http://127.0.0.1:%d" % srv.server_address[1]


def url(prefix, api="completions"):
    return "%s/%s/v1/%s" % (base, prefix, api)


def compare(r, ids, label):
    """Each request's first and last token arrive within [0, 5] ms of the
    server writing them; the client's ITL p50 / p90 match the server's
    write gaps within 1 / 5 ms."""
    c = timing.compare(r, srv.records, ids)
    fd, ld = c["first_d"], c["last_d"]
    print(label, "first token: received - written (ms):",
          " ".join("%.2f" % d for d in fd))
    check(len(fd) == r["completed"], "%s: every request matched" % label)
    both = sorted(fd + ld)
    check(both and both[0] >= 0, "%s: no token before its write (%.2f)"
          % (label, both[0] if both else -1))
    check(both and timing.quantile(both, 0.5) <= 1.0 and
          timing.quantile(both, 0.9) <= 15.0,
          "%s: first/last token received - written: p50 %.2f <= 1, p90 "
          "%.2f <= 15 ms (max %.2f)" % (label, timing.quantile(both, 0.5),
                                      timing.quantile(both, 0.9), both[-1]))
    gd = sorted(abs(d) for d in c["gap_d"])
    check(len(gd) == r["itl_ms"]["n"], "%s: every gap paired" % label)
    check(gd and timing.quantile(gd, 0.5) <= 0.5 and
          timing.quantile(gd, 0.9) <= 15.0,
          "%s: |client gap - server gap| p50 %.3f <= 0.5, p90 %.3f <= 15 ms"
          % (label, timing.quantile(gd, 0.5), timing.quantile(gd, 0.9)))
    check(c["early"] == 0, "%s: every request started before the server "
          "read it" % label)


def timed_cases(tag):
    """The two timing cases; returns the checks that failed."""
    global failures
    kept, failures = failures, []
    # 1. steady stream, completions, concurrency 4
    r = run({"url": url("ttft=100,itl=20,n=20"), "model": "m", "input_len": 16,
             "output_len": 20, "num_requests": 8, "concurrency": 4,
             "id_prefix": "steady-%s-" % tag, "per_request": True})
    check(r["completed"] == 8 and r["failed"] == 0, "steady: 8 completed")
    check(r["output_tokens"] == 160, "steady: 160 output tokens from usage")
    check(r["input_tokens"] == 8 * 16, "steady: prompt_tokens from usage")
    check(100 <= r["ttft_ms"]["p50"] <= 150,
          "steady: TTFT p50 %.2f in [100, 150]" % r["ttft_ms"]["p50"])
    check(18 <= r["itl_ms"]["p50"] <= 30,
          "steady: ITL p50 %.2f in [18, 30]" % r["itl_ms"]["p50"])
    check(r["itl_ms"]["n"] == 8 * 19, "steady: 19 gaps a request")
    check(r["peak_inflight"] == 4, "steady: 4 in flight at most")
    tpot = r["tpot_ms"]["p50"]
    check(18 <= tpot <= 30, "steady: TPOT p50 %.2f in [18, 30]" % tpot)
    compare(r, "steady-%s-" % tag, "steady")

    # 2. jitter: the client's gaps follow the server's, gap for gap
    r = run({"url": url("ttft=30,itl=15,jitter=10,n=30"), "model": "m",
             "input_len": 8, "output_len": 30, "num_requests": 4,
             "concurrency": 4, "id_prefix": "jit-%s-" % tag, "per_request": True})
    check(r["completed"] == 4, "jitter: 4 completed")
    check(r["itl_ms"]["stdev"] > 3, "jitter: ITL stdev %.2f > 3 ms"
          % r["itl_ms"]["stdev"])
    compare(r, "jit-%s-" % tag, "jitter")

    got, failures = failures, kept
    return got


# A timing case that misses its tolerance is run once more: on a shared
# 2-core host a burst of other work can hold either process off the CPU
# for longer than the tolerance; a client that measures wrongly misses
# both times.  Only these two cases are run again, whole; the fault
# cases below run once.
first = timed_cases("a")
if first:
    print("timing cases missed once (%s); once more" % "; ".join(first))
    failures += timed_cases("b")

# 3. the chat API: delta chunks
r = run({"url": url("ttft=20,itl=5,n=10", "chat/completions"), "api": "chat",
         "model": "m", "input_len": 8, "output_len": 10, "num_requests": 3,
         "concurrency": 3, "id_prefix": "chat-", "per_request": True})
check(r["completed"] == 3 and r["output_tokens"] == 30, "chat: 3 x 10 tokens")
check(all(srv.records["chat-%d" % i]["path"].endswith("/chat/completions")
          for i in range(3)), "chat: posted to /v1/chat/completions")

# 4. HTTP errors by status, every other request failing
r = run({"url": url("ttft=5,itl=1,n=4,fail_every=2"), "model": "m",
         "num_requests": 6, "concurrency": 1, "output_len": 4})
check(r["completed"] == 3 and r["failed"] == 3, "fail_every: 3 + 3")
check(r["errors"].get("http") == 3 and r["status"].get("500") == 3,
      "fail_every: errors.http = 3, status 500 = 3 (%s)" % r["status"])
r = run({"url": url("status=503"), "model": "m", "num_requests": 2,
         "output_len": 4})
check(r["status"].get("503") == 2, "status=503 counted by status")

# 5. a stalled stream fails as a stall after stall_timeout, quickly
t0 = time.monotonic()
r = run({"url": url("ttft=5,itl=5,n=10,stall_after=3,stall=20"), "model": "m",
         "num_requests": 2, "concurrency": 2, "output_len": 10,
         "stall_timeout": 1})
el = time.monotonic() - t0
check(r["errors"].get("stall") == 2, "stall: errors.stall = 2 (%s)"
      % r["errors"])
check(el < 8, "stall: gave up after %.1f s (< 8)" % el)

# 6. malformed event data, a streamed error object, a cut connection
r = run({"url": url("ttft=5,itl=2,n=10,malformed_after=2"), "model": "m",
         "num_requests": 2, "output_len": 10})
check(r["errors"].get("malformed") == 2, "malformed: %s" % r["errors"])
r = run({"url": url("ttft=5,itl=2,n=10,errevent_after=2"), "model": "m",
         "num_requests": 2, "output_len": 10})
check(r["errors"].get("stream_error") == 2, "errevent: %s" % r["errors"])
r = run({"url": url("ttft=5,itl=2,n=10,close_after=3"), "model": "m",
         "num_requests": 2, "output_len": 10})
check(r["errors"].get("transport") == 2, "close_after: %s" % r["errors"])
r = run({"url": url("n=0"), "model": "m", "num_requests": 1,
         "output_len": 4})
check(r["errors"].get("no_token") == 1, "n=0: no_token (%s)" % r["errors"])

# 7. no usage chunk: tokens counted as chunks
r = run({"url": url("ttft=5,itl=1,n=7,usage=0"), "model": "m",
         "num_requests": 2, "output_len": 7})
check(r["output_tokens"] == 14, "usage=0: 2 x 7 chunks counted")

# 8. nothing listening: a connect failure, not a crash
r = run({"url": "http://127.0.0.1:9/v1/completions", "model": "m",
         "num_requests": 2, "output_len": 4, "connect_timeout": 2})
check(r["errors"].get("connect") == 2, "refused: errors.connect (%s)"
      % r["errors"])

# 9. Poisson arrivals at 20 req/s: 40 requests spread over about 2 s
r = run({"url": url("ttft=1,itl=1,n=2"), "model": "m", "num_requests": 40,
         "request_rate": 20, "seed": 3, "output_len": 2,
         "per_request": True})
st = sorted(q["start_s"] for q in r["per_request"])
gaps = [b - a for a, b in zip(st, st[1:])]
cv = statistics.pstdev(gaps) / statistics.mean(gaps)
check(1.6 <= st[-1] <= 2.4, "rate: last start %.2f s in [1.6, 2.4]" % st[-1])
check(0.5 <= cv <= 1.6, "rate: arrival gaps' CV %.2f about 1" % cv)
check(r["completed"] == 40, "rate: 40 completed")

# 10. the server-side witness moved with what the client saw
before = srv.metrics.success
r = run({"url": url("ttft=5,itl=1,n=3"), "model": "m", "num_requests": 5,
         "output_len": 3})
check(srv.metrics.success - before == r["completed"] == 5,
      "witness: request_success moved by the completed count")

srv.shutdown()
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("llm fixture: all checks passed")
